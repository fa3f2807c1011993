"""`kb coverage`: the labelled issue sample and the table recomputed from it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from assistant.kb.coverage import compute, load_coverage, read_sample, render_markdown
from assistant.kb.load import default_kb_dir


def _issue(n: int, label: str, year: int = 2025, repo: str = "huggingface/trl") -> dict:
    return {
        "url": f"https://github.com/{repo}/issues/{n}",
        "repo": repo,
        "year": year,
        "title": f"issue {n}",
        "label": label,
        "reason": "a reason long enough to say something",
    }


def _kb(tmp_path: Path, rows: list[dict], cases: tuple[str, ...] = ("case-a", "case-b")) -> Path:
    (tmp_path / "cases").mkdir()
    for c in cases:
        (tmp_path / "cases" / f"{c}.yaml").write_text("id: x\n")
    (tmp_path / "coverage").mkdir()
    (tmp_path / "coverage" / "sample.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return tmp_path


def test_coverage_counts_by_library_and_year(tmp_path):
    rows = [
        _issue(1, "case-a"),
        _issue(2, "none"),
        _issue(3, "case-b", year=2024, repo="modelscope/ms-swift"),
        _issue(4, "none", year=2024, repo="someone/r1-clone"),
    ]
    cov = load_coverage(_kb(tmp_path, rows))
    assert cov.problems == []
    assert (cov.overall.covered, cov.overall.total) == (2, 4)
    libs = {r.group: (r.covered, r.total) for r in cov.by_library}
    assert libs == {"trl": (1, 2), "ms-swift": (1, 1), "other projects": (0, 1)}
    years = {r.group: (r.covered, r.total) for r in cov.by_year}
    assert years == {"2024": (1, 2), "2025": (1, 2)}
    assert cov.cases_used == {"case-a": 1, "case-b": 1}
    assert "**2 / 4 = 50 %**" in render_markdown(cov)


def test_unknown_case_id_is_an_error_naming_the_line(tmp_path):
    kb = _kb(tmp_path, [_issue(1, "case-a"), _issue(2, "no-such-case")])
    cov = load_coverage(kb)
    assert len(cov.problems) == 1
    assert "sample.jsonl:2:" in cov.problems[0] and "no-such-case" in cov.problems[0]
    assert cov.overall.covered == 1  # the unknown label does not count as covered
    proc = subprocess.run(
        [sys.executable, "-m", "assistant.cli.main", "kb", "coverage", "--kb", str(kb)],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 1
    assert "sample.jsonl:2:" in proc.stderr
    assert "| trl |" in proc.stdout


def test_malformed_and_duplicate_lines_are_problems(tmp_path):
    path = tmp_path / "sample.jsonl"
    good = _issue(1, "none")
    bad = dict(_issue(2, "none"), url="not a url")
    path.write_text("\n".join([json.dumps(good), "{oops", json.dumps(bad), json.dumps(good)]) + "\n")
    items, problems = read_sample(path)
    assert [n for n, _ in items] == [1]
    assert [p.split(": ")[0].rsplit(":", 1)[1] for p in problems] == ["2", "3", "4"]
    assert "duplicate of line 1" in problems[2]


def test_compute_reports_each_unknown_label():
    items = [(1, read_issue(_issue(1, "x-case"))), (2, read_issue(_issue(2, "none")))]
    cov = compute(items, {"case-a"}, "s.jsonl")
    assert cov.problems == ["s.jsonl:1: label 'x-case' is no case id (see `trl-help kb list`)"]


def read_issue(d: dict):
    from assistant.kb.coverage import SampleIssue

    return SampleIssue.model_validate(d)


def test_bundled_sample_is_valid_and_large_enough():
    cov = load_coverage(default_kb_dir())
    assert cov.problems == []
    assert cov.overall.total >= 150
    recent = sum(r.total for r in cov.by_year if int(r.group) >= 2025)
    assert recent >= 100


def test_kb_readme_shows_the_current_table():
    root = default_kb_dir()
    text = (root / "README.md").read_text(encoding="utf-8")
    block = text.split("<!-- coverage:begin -->\n", 1)[1].split("\n<!-- coverage:end -->", 1)[0]
    assert block == render_markdown(load_coverage(root))


def test_out_of_scope_reports_from_the_sample_are_labelled_none_there():
    """An out-of-scope report teaches the matcher to abstain; one that comes from the coverage sample
    must still be labelled "none" there (a case written for it later moves it out of the OOS set)."""
    from assistant.match.evaluate import oos_path

    root = default_kb_dir()
    issues, problems = read_sample(root / "coverage" / "sample.jsonl")
    assert problems == []
    labels = {issue.url: issue.label for _, issue in issues}
    lines = oos_path(root).read_text(encoding="utf-8").splitlines()
    oos = [json.loads(x)["url"] for x in lines if x.strip()]
    assert len(oos) == len(set(oos))
    shared = [u for u in oos if u in labels]
    assert shared  # the sample's uncovered rows are a source of real OOS reports
    assert [u for u in shared if labels[u] != "none"] == []
