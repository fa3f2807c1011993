"""`trl-help triage`: the KB's real reports (positive fixtures, out-of-scope set) turned into issues (title + body).

The real Matcher is loaded once per session (conftest `matcher`); the whole batch of shared
reports is triaged once per module and the tests read that result.
"""

from __future__ import annotations

import csv
import io
import json
from collections import defaultdict

import numpy as np
import pytest
import yaml

from tests.conftest import oos_reports, shared_reports


def _issues() -> list[dict]:
    """One issue per shared report (title: the report's first line, as users often do), then OOS."""
    out = []
    n = 100
    for case_id, text in shared_reports():
        first = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")[:80]
        out.append(
            {
                "number": n,
                "title": first,
                "body": text,
                "labels": [],
                "url": f"https://github.com/x/y/issues/{n}",
                "createdAt": "2025-01-01T00:00:00Z",
                "_case": case_id,
            }
        )
        n += 1
    for text in oos_reports():
        out.append({"number": n, "title": "", "body": text, "labels": [{"name": "bug"}], "_case": None})
        n += 1
    return out


ISSUES = _issues()
CASE_OF = {i["number"]: i["_case"] for i in ISSUES}


def _export(path, issues):
    path.write_text(json.dumps([{k: v for k, v in i.items() if not k.startswith("_")} for i in issues]))
    return path


@pytest.fixture(scope="module")
def result(matcher, tmp_path_factory):
    from assistant.triage.inputs import load_issues
    from assistant.triage.run import Options, triage

    d = tmp_path_factory.mktemp("triage")
    batch = load_issues(_export(d / "issues.json", ISSUES))
    return triage(batch, matcher, Options(use_cache=False))


def test_right_case_found(result):
    known = [r for r in result.issues if CASE_OF[r.number]]
    top1 = sum(r.matches[0].case_id == CASE_OF[r.number] for r in known)
    assert top1 / len(known) >= 0.85, f"top-1 {top1}/{len(known)}"
    # the per-issue contract: the same Match objects as `explain --format json`, labels from the case
    r = next(r for r in known if r.verdict == "match")
    assert {"case_id", "score", "confidence", "evidence", "versions", "fix", "labels"} <= set(r.matches[0].model_dump())
    assert r.labels == r.matches[0].labels


def test_out_of_scope_end_as_no_known_case(result):
    oos = [r for r in result.issues if CASE_OF[r.number] is None]
    none = sum(r.verdict == "no-known-case" for r in oos)
    # the matcher's abstention threshold is tuned elsewhere: assert on the majority, not on all
    assert none / len(oos) >= 0.7, f"{none}/{len(oos)} out-of-scope issues abstained"


def test_reports_sharing_a_case_cluster_together(result):
    groups: dict[str, set[int]] = defaultdict(set)
    for r in result.issues:
        if CASE_OF[r.number] and r.verdict == "match" and r.matches[0].case_id == CASE_OF[r.number]:
            groups[CASE_OF[r.number]].add(r.number)
    clusters = {c.case_id: set(c.issues) for c in result.clusters if c.kind == "case"}
    multi = {cid: g for cid, g in groups.items() if len(g) >= 2}
    assert multi
    for cid, g in multi.items():
        assert g <= clusters[cid]
        for num in g:
            issue = next(r for r in result.issues if r.number == num)
            assert g - {num} <= set(issue.duplicates)


def test_near_duplicate_threshold_is_conservative(matcher):
    """Pairs of shared reports above the default threshold mostly share a case_id (precision)."""
    from assistant.match.memo import MemoEncoder
    from assistant.match.query import query_text
    from assistant.parse import parse_text
    from assistant.triage.cluster import DUP_THRESHOLD, near_duplicate_groups, pair_precision
    from assistant.triage.run import body_text

    reps = shared_reports()
    parsed = [parse_text(t) for _, t in reps]
    memo = MemoEncoder(matcher.encoder, {})
    qt, bt = [query_text(r) for r in parsed], [body_text(r) for r in parsed]
    memo.prefill(qt + bt)  # length-sorted small batches, as triage does
    q, b = memo.encode(qt), memo.encode(bt)
    v = np.concatenate([q, b], axis=1) / np.sqrt(2.0)
    stats = pair_precision(v, [c for c, _ in reps], DUP_THRESHOLD)
    assert stats["pairs_above"] >= 10 and stats["precision"] >= 0.9, stats
    for members, sim in near_duplicate_groups(v, DUP_THRESHOLD):  # complete linkage: no chaining
        sub = v[members] @ v[members].T
        assert sub.min() >= DUP_THRESHOLD - 1e-5 and sim >= DUP_THRESHOLD - 1e-5


def test_near_duplicates_cluster_unmatched_issues(matcher, tmp_path):
    from assistant.triage.inputs import load_issues
    from assistant.triage.run import Options, triage

    oos = oos_reports()
    base = {"labels": []}
    issues = [
        {**base, "number": 1, "title": "crash in my custom loop", "body": oos[0]},
        {**base, "number": 2, "title": "crash in my custom loop", "body": oos[0] + "\n\nsame here, any idea?"},
        {**base, "number": 3, "title": "other", "body": oos[5]},
    ]
    res = triage(load_issues(_export(tmp_path / "i.json", issues)), matcher, Options(cache_dir=tmp_path / "c"))
    by = {r.number: r for r in res.issues}
    if by[1].verdict == by[2].verdict == "no-known-case":
        assert by[1].duplicates == [2] and by[2].duplicates == [1]
        assert 3 not in by[1].duplicates
        assert any(c.kind == "near-duplicate" and c.issues == [1, 2] for c in res.clusters)


def test_incremental_cache_skips_unchanged(matcher, tmp_path):
    from assistant.triage.inputs import load_issues
    from assistant.triage.run import Options, triage

    issues = ISSUES[:6] + ISSUES[-2:]
    opts = Options(cache_dir=tmp_path / "cache")
    first = triage(load_issues(_export(tmp_path / "a.json", issues)), matcher, opts)
    assert first.stats["processed"] == 8 and first.stats["from_cache"] == 0
    edited = [dict(i) for i in issues]
    edited[2]["body"] += "\n\nEDIT: also happens with bf16"
    edited.append({**ISSUES[10]})
    second = triage(load_issues(_export(tmp_path / "b.json", edited)), matcher, opts)
    assert second.stats["processed"] == 2 and second.stats["from_cache"] == 7
    cached = {r.number: r.cached for r in second.issues}
    assert not cached[edited[2]["number"]] and not cached[ISSUES[10]["number"]] and cached[issues[0]["number"]]
    strip = lambda r: r.model_dump(exclude={"cached", "duplicates"})  # noqa: E731
    assert [strip(r) for r in second.issues if r.number in {i["number"] for i in issues[:2]}] == [
        strip(r) for r in first.issues if r.number in {i["number"] for i in issues[:2]}
    ]


# --- malformed exports -------------------------------------------------------------------


def _good(n: int) -> dict:
    return {"number": n, "title": f"issue {n}", "body": ISSUES[n % 20]["body"], "labels": []}


def test_bad_issue_reported_others_kept(tmp_path):
    from assistant.triage.inputs import load_issues

    items = [
        _good(1),
        {"number": 2, "title": "x", "body": ["not", "text"]},
        {"title": "no number", "body": "b"},
        _good(4),
    ]
    batch = load_issues(_export(tmp_path / "e.json", items))
    assert [i.number for i in batch.issues] == [1, 4]
    assert any("issue #2" in p and "body" in p for p in batch.problems)
    assert any("no number" in p and "number" in p for p in batch.problems)
    assert all("\n" not in p for p in batch.problems)


def test_truncated_array_and_bad_jsonl_line_keep_the_rest(tmp_path):
    from assistant.triage.inputs import load_issues

    text = json.dumps([_good(1), _good(2), _good(3)])
    (tmp_path / "t.json").write_text(text[: text.index('"number": 3') + 5])
    batch = load_issues(tmp_path / "t.json")
    assert [i.number for i in batch.issues] == [1, 2]
    assert len(batch.problems) == 1 and "after issue #2" in batch.problems[0]
    lines = [json.dumps(_good(1)), '{"number": 7, "title": "broken', json.dumps(_good(3))]
    (tmp_path / "l.jsonl").write_text("\n".join(lines))
    batch = load_issues(tmp_path / "l.jsonl")
    assert [i.number for i in batch.issues] == [1, 3]
    assert "line 2" in batch.problems[0] and "#7" in batch.problems[0]


def test_directory_of_markdown_issues(tmp_path):
    from assistant.triage.inputs import load_issues

    (tmp_path / "123.md").write_text("# GRPO crashes\n\n" + ISSUES[0]["body"])
    (tmp_path / "notes.txt").write_text(ISSUES[1]["body"])
    (tmp_path / "image.png").write_bytes(b"\x89PNG")
    batch = load_issues(tmp_path)
    by = {i.number: i for i in batch.issues}
    assert by[123].title == "GRPO crashes" and 124 in by
    assert any("notes.txt" in p for p in batch.problems)


@pytest.mark.parametrize(
    "content,expect",
    [
        (b"", "empty"),
        (b"hello, not json", "not a JSON array"),
        (b"[1, 2, 3]", "expected an issue object"),
        (b"\x00\xff\x00\x01" * 8, "not UTF-8"),
        (b'{"number": "x", "body": 3}', "number"),
    ],
)
def test_unusable_export_one_line_exit_2(tmp_path, content, expect, capsys):
    from assistant.cli.main import main

    f = tmp_path / "issues.json"
    f.write_bytes(content)
    assert main(["triage", str(f)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and expect in err and str(f) in err


def test_cli_formats_and_partial_export(matcher, tmp_path, monkeypatch, capsys):
    from assistant.cli.main import main
    from assistant.match.engine import Matcher

    monkeypatch.setattr(Matcher, "load", classmethod(lambda cls, *a, **k: matcher))
    monkeypatch.setenv("TRL_HELP_CACHE_DIR", str(tmp_path / "cache"))
    items = [{k: v for k, v in i.items() if not k.startswith("_")} for i in ISSUES[:4]]
    items.insert(2, {"number": 55, "title": "bad", "body": 42})
    f = tmp_path / "issues.json"
    f.write_text(json.dumps(items))

    # the kept issues are processed and printed, and the exit code says one was dropped
    assert main(["triage", str(f), "--format", "json"]) == 1
    out = capsys.readouterr()
    data = json.loads(out.out)
    assert set(data) >= {"issues", "clusters", "new_categories"}
    assert len(data["issues"]) == 4
    for issue in data["issues"]:
        assert {"number", "title", "verdict", "matches", "labels", "reply", "duplicates"} <= set(issue)
    assert "#55" in out.err and out.err.count("\n") == 1
    assert main(["triage", str(f), "--strict", "--format", "csv"]) == 1
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [int(r["number"]) for r in rows] == [i["number"] for i in items if i["number"] != 55]
    assert main(["triage", str(f), "--format", "markdown"]) == 1
    md = capsys.readouterr().out
    assert md.startswith("# trl-help triage") and "## Possible new failure categories" in md
    assert main(["triage", str(f)]) == 1
    assert "Issues" in capsys.readouterr().out


def test_reply_has_cause_fix_versions_and_references(result, kb):
    r = next(r for r in result.issues if r.verdict == "match" and kb.cases[r.matches[0].case_id].affected)
    assert "**Cause.**" in r.reply and "**Fix**" in r.reply and "References:" in r.reply
    assert "**Versions.**" in r.reply and "--installed" not in r.reply
    probe = next((r for r in result.issues if r.verdict == "match" and r.matches[0].probe), None)
    if probe:
        assert f"trl-help probe {probe.matches[0].case_id}" in probe.reply
    none = next(r for r in result.issues if r.verdict == "no-known-case")
    assert "could not match" in none.reply


def test_new_categories_are_unmatched_tracebacks(result):
    by = {r.number: r for r in result.issues}
    seen = set()
    for cat in result.new_categories:
        for n in cat.issues:
            assert by[n].verdict == "no-known-case" and by[n].has_traceback
            seen.add(n)
        assert cat.scaffold.startswith(f"trl-help kb new --from-issue {cat.issues[0]}")
    assert seen == {r.number for r in result.issues if r.verdict == "no-known-case" and r.has_traceback}


def test_scaffold_case_from_issue(tmp_path):
    from assistant.kb.model import Case
    from assistant.triage.scaffold import scaffold_case

    issue = next(i for i in ISSUES if "Traceback" in i["body"] and i["_case"])
    f = _export(tmp_path / "issues.json", [issue])
    path = scaffold_case(f, issue["number"], tmp_path / "cases")
    data = yaml.safe_load(path.read_text())
    case = Case.model_validate(data)
    assert path.name == f"{case.id}.yaml" and "TODO" in case.cause
    assert case.symptoms.exceptions and case.fixtures.positive[0].text.strip().endswith(
        issue["body"].strip()[-40:].strip()
    )
    assert case.references[0].url == issue["url"]
    from assistant.cli.errors import UsageError

    with pytest.raises(UsageError, match="#99999"):
        scaffold_case(f, 99999, tmp_path / "cases")
    with pytest.raises(UsageError, match="already exists"):
        scaffold_case(f, issue["number"], tmp_path / "cases")


def test_an_interrupted_run_keeps_the_chunks_it_finished(matcher, tmp_path, monkeypatch):
    """Triage works in chunks and saves its cache as it goes (and on the way out), so a long run
    that is stopped keeps what it finished; the next run starts from there."""
    import assistant.triage.run as run
    from assistant.triage.cache import TriageCache, engine_key
    from assistant.triage.inputs import load_issues

    monkeypatch.setattr(run, "CHUNK", 2)

    class StopsOnSecondChunk:
        digest = matcher.digest

        def __init__(self) -> None:
            self.calls = 0

        def diagnose_batch(self, reports, **kw):
            self.calls += 1
            if self.calls == 2:
                raise KeyboardInterrupt
            return matcher.diagnose_batch(reports, **kw)

        def embed(self, texts):
            return matcher.embed(texts)

    batch = load_issues(_export(tmp_path / "issues.json", ISSUES[:6]))
    opts = run.Options(cache_dir=tmp_path / "cache")
    with pytest.raises(KeyboardInterrupt):
        run.triage(batch, StopsOnSecondChunk(), opts)  # type: ignore[arg-type]
    kept = TriageCache(engine_key(matcher.digest, opts.top), root=opts.cache_dir)
    assert len(kept.entries) == 2  # the first chunk, written on the way out
    again = run.triage(batch, matcher, opts)
    assert again.stats["from_cache"] == 2 and again.stats["processed"] == 4


def test_a_large_export_is_streamed_with_the_same_results(matcher, tmp_path, monkeypatch):
    """Past STREAM_OVER a JSON array is decoded issue by issue while triage runs (memory bounded by a
    chunk, not the export); results, duplicates and a truncated tail are handled as for a small one."""
    import assistant.triage.inputs as inputs
    from assistant.triage.run import Options, triage

    issues = ISSUES[:5] + [dict(ISSUES[1], title="edited copy")]  # #101 twice: the last copy wins
    path = _export(tmp_path / "big.json", issues)
    whole = inputs.load_issues(path)
    monkeypatch.setattr(inputs, "STREAM_OVER", 1024)
    streamed = inputs.load_issues(path)
    assert streamed.stream is not None and len(streamed.issues) == 1  # only the first decoded up front
    opts = Options(use_cache=False)
    a, b = triage(whole, matcher, opts), triage(streamed, matcher, opts)
    assert [(r.number, r.title, r.verdict, r.matches[0].case_id) for r in a.issues] == [
        (r.number, r.title, r.verdict, r.matches[0].case_id) for r in b.issues
    ]
    assert any("appears more than once" in p for p in b.problems)
    # a truncated export keeps what was decoded and says where it stopped
    cut = tmp_path / "cut.json"
    cut.write_text(path.read_text()[:-200])
    r = triage(inputs.load_issues(cut), matcher, opts)
    assert len(r.issues) >= 4 and any("truncated" in p or "invalid JSON" in p for p in r.problems)


def test_rows_list_a_bounded_number_of_duplicates(matcher, tmp_path, monkeypatch):
    """Every issue of one big cluster used to list every other member (quadratic: 9 M entries for
    3,000 issues); rows now list at most MAX_DUPLICATES_LISTED, the cluster lists them all."""
    import assistant.triage.run as run
    from assistant.triage.inputs import load_issues

    monkeypatch.setattr(run, "MAX_DUPLICATES_LISTED", 2)
    same = [dict(ISSUES[0], number=500 + k, title=f"copy {k}") for k in range(6)]
    r = run.triage(load_issues(_export(tmp_path / "same.json", same)), matcher, run.Options(use_cache=False))
    big = max(r.clusters, key=lambda c: len(c.issues))
    assert sorted(big.issues) == [500 + k for k in range(6)]
    assert all(len(i.duplicates) == 2 and i.number not in i.duplicates for i in r.issues)


def test_rows_are_kept_packed_and_read_back_whole(result):
    """A triage run keeps each row packed (~2 KB instead of ~20 KB of objects: 10,000 issues of
    100 KB went from 912 MB to 253 MB peak); reading a row gives back the whole IssueResult,
    with its per-run fields (duplicates, cached)."""
    from assistant.triage.rows import IssueRows, pack, unpack

    rows = result.issues
    assert isinstance(rows, IssueRows)
    full = list(rows)
    assert all(
        unpack(pack(r)).model_dump(exclude={"cached", "duplicates"}) == r.model_dump(exclude={"cached", "duplicates"})
        for r in full
    )
    assert [r.duplicates for r in rows] == [rows[i].duplicates for i in range(len(rows))]
    assert any(r.duplicates for r in full)  # set by clustering, kept outside the packed blob
    assert rows[-1].number == full[-1].number and [r.number for r in rows[1:3]] == [full[1].number, full[2].number]
    packed = sum(len(b) for b in rows._blobs) / len(rows)
    as_json = sum(len(r.model_dump_json()) for r in full) / len(full)
    assert packed < as_json / 2, (packed, as_json)
    # a list of IssueResult is still accepted where a TriageResult is built by hand
    again = type(result)(issues=full, clusters=[], new_categories=[])
    assert [r.model_dump() for r in again.issues] == [r.model_dump() for r in full]


def test_json_output_is_streamed_with_the_bytes_of_one_dump(result):
    """`--format json` is written issue by issue (the document for 10,000 issues is ~90 MB); its
    bytes are exactly those of dumping the whole result at once."""
    from assistant.triage.render_json import render_json

    assert render_json(result) == json.dumps(result.model_dump(mode="json"), indent=1, ensure_ascii=False)
    doc = json.loads(render_json(result))
    assert [i["number"] for i in doc["issues"]] == [r.number for r in result.issues]


def test_two_runs_sharing_a_cache_keep_each_others_entries(matcher, tmp_path):
    """A save re-reads the cache file only when someone else wrote it since (a 10,000-issue run
    used to re-parse 54 MB at every periodic save); what another run wrote is kept, also by the
    saves that follow."""
    from assistant.triage.cache import TriageCache

    a = TriageCache("k", root=tmp_path)
    b = TriageCache("k", root=tmp_path)
    vec = np.ones(384, dtype=np.float32)
    a.put(1, "h1", b"one", vec)
    a.save()
    b.put(2, "h2", b"two", vec)
    b.save()  # a's file changed under b: merged
    b.put(3, "h3", b"three", vec)
    b.save()  # unchanged since b's own write: not re-read, and #1 still kept
    c = TriageCache("k", root=tmp_path)
    assert sorted(c.entries) == ["1", "2", "3"]
    hit = c.get(1, "h1")
    assert hit is not None and hit[0] == b"one" and c.get(1, "other-hash") is None
