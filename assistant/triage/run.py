"""The batch: issues -> per-issue diagnoses (cached), clusters and new-category candidates.

Per issue it gets the same diagnosis as `trl-help explain` (the engine's `diagnose_batch`, which
embeds all query texts in length-sorted batches first and then diagnoses each report exactly as
`diagnose` does), so `matches` are the same objects as `explain --format json`.
"""

from __future__ import annotations

import contextlib
import time
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, field_serializer, field_validator

from assistant.match.diagnosis import Match, VersionVerdict
from assistant.match.engine import Engine
from assistant.triage.cache import TriageCache, engine_key
from assistant.triage.cluster import DUP_THRESHOLD, error_key, group_new_categories, near_duplicate_groups
from assistant.triage.inputs import Batch, Issue
from assistant.triage.rows import Head, IssueRows, pack, unpack


class IssueResult(BaseModel):
    number: int
    title: str
    verdict: Literal["match", "no-known-case"]
    matches: list[Match]
    labels: list[str] = Field(default_factory=list, description="Suggested labels (from the top case).")
    reply: str
    duplicates: list[int] = Field(default_factory=list)
    url: str | None = None
    versions: VersionVerdict | None = None
    error: str | None = Field(default=None, description="Primary exception line, as parsed.")
    error_key: str = ""
    has_traceback: bool = False
    packages: list[str] = Field(default_factory=list, description="Packages seen in the traceback frames.")
    environment: dict[str, str] = Field(default_factory=dict)
    existing_labels: list[str] = Field(default_factory=list)
    cached: bool = False


class Cluster(BaseModel):
    kind: Literal["case", "near-duplicate"]
    issues: list[int]
    case_id: str | None = None
    title: str
    similarity: float | None = Field(default=None, description="Minimum pairwise similarity (near-duplicates).")


class NewCategory(BaseModel):
    key: str
    issues: list[int]
    exception: str
    packages: list[str] = Field(default_factory=list)
    titles: list[str] = Field(default_factory=list)
    scaffold: str


class TriageResult(BaseModel):
    """`issues` are kept packed (`rows.IssueRows`: a list of IssueResult to read, ~2 KB per issue
    in memory); a list of IssueResult is accepted too."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    issues: IssueRows
    clusters: list[Cluster]
    new_categories: list[NewCategory]
    problems: list[str] = Field(default_factory=list)
    stats: dict[str, float | int | str] = Field(default_factory=dict)

    @field_validator("issues", mode="before")
    @classmethod
    def _pack(cls, v: object) -> object:
        return IssueRows.of(v) if isinstance(v, list) else v

    @field_serializer("issues")
    def _unpack(self, rows: IssueRows) -> list[IssueResult]:
        return list(rows)


@dataclass
class Options:
    top: int = 3
    dup_threshold: float = DUP_THRESHOLD
    use_cache: bool = True
    progress: bool = False
    source: str = "issues.json"
    cache_dir: Path | None = None  # default: <cache root>/triage-v<FORMAT> (TRL_HELP_CACHE_DIR or platformdirs)


@contextlib.contextmanager
def _progress(enabled: bool) -> Iterator:
    if not enabled:
        yield None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=Console(stderr=True),
        transient=True,
    ) as p:
        yield p


def _error_line(report) -> str | None:
    if report.primary is None:
        return None
    first = report.primary.message.strip().splitlines()[0][:200] if report.primary.message.strip() else ""
    return f"{report.primary.exception}: {first}" if first else report.primary.exception


def _has_traceback(report, text: str) -> bool:
    if report.primary is None:
        return False
    return any(exc.frames for exc in report.chain) or "Traceback (most recent call last)" in text


def body_text(report) -> str:
    """What the near-duplicate body vector embeds (the cleaned issue text, normalised)."""
    from assistant.parse.signature import normalise

    return normalise(report.text[:1500])


#: case content a triage row does not repeat (its draft reply already says it, once)
_CONTENT = {"summary": "", "cause": "", "fixes": [], "references": [], "fixed_in": []}


def slim(m: Match) -> Match:
    """*m* without the case's text: a triage run over thousands of issues keeps ids, scores,
    evidence and versions per candidate (the same answer as `explain`), not the KB prose."""
    return m.model_copy(update=_CONTENT)


def _diagnose_batch(
    todo: list[Issue], engine: Engine, opts: Options, problems: list[str], prog, tasks: tuple | None = None
) -> list[tuple[Issue, IssueResult, np.ndarray, np.ndarray | None]]:
    from assistant.parse import parse_text
    from assistant.triage.reply import draft_reply

    parsed = []
    for issue in todo:
        try:
            parsed.append((issue, parse_text(issue.text)))
        except Exception as exc:  # noqa: BLE001 — one bad issue must not sink the batch
            problems.append(f"issue #{issue.number}: could not be parsed ({type(exc).__name__}: {exc}); skipped")
    embedding, matching = tasks if (prog and tasks) else (None, None)
    answers = engine.diagnose_batch(
        [rep for _, rep in parsed],
        top=opts.top,
        on_embedded=(lambda n: prog.advance(embedding, n)) if prog else None,
        on_diagnosed=(lambda n: prog.advance(matching, n)) if prog else None,
    )
    out: list[list] = []
    unmatched = []
    for (issue, rep), (d, qv) in zip(parsed, answers):
        top = d.matches[0] if d.matches else None
        res = IssueResult(
            number=issue.number,
            title=issue.title,
            url=issue.url,
            verdict=d.verdict,
            matches=[slim(m) for m in d.matches],
            labels=list(top.labels) if (top and d.verdict == "match") else [],
            reply=draft_reply(d),
            versions=top.versions if top else None,
            error=_error_line(rep),
            error_key=error_key(rep.primary.exception, rep.signature.message) if rep.primary else "",
            has_traceback=_has_traceback(rep, issue.text),
            packages=[p for p in rep.packages_in_frames() if p not in ("user", "other", "python")],
            environment=d.environment,
            existing_labels=list(issue.labels),
        )
        out.append([issue, res, qv, None])
        if d.verdict != "match":
            unmatched.append((len(out) - 1, body_text(rep)))
    if unmatched:  # body vectors, only where near-duplicate clustering needs them
        vecs = engine.embed([t for _, t in unmatched])
        for (k, _), v in zip(unmatched, vecs):
            out[k][3] = v
    return [tuple(x) for x in out]  # type: ignore[misc]


#: issues parsed and diagnosed together (bounds what one step holds beyond the results: 64 x 100 KB
#: issues measured no slower than 256, with a quarter of the transient memory)
CHUNK = 64
#: the cache is written at most this often during a run (and always at the end or on interruption)
SAVE_EVERY_S = 30.0


def _save(cache: TriageCache, problems: list[str]) -> None:
    try:
        cache.save()
    except OSError as exc:
        msg = f"cache not saved ({exc}); results are complete"
        if msg not in problems:
            problems.append(msg)


#: issues listed in each row's `duplicates` (the cluster lists them all): 3,000 issues of one case
#: made 9 million entries (1.4 GB, a 111 MB JSON) when every row listed every other member
MAX_DUPLICATES_LISTED = 20


def _others(nums: list[int], number: int) -> list[int]:
    """The first MAX_DUPLICATES_LISTED other members of a cluster."""
    out: list[int] = []
    for n in nums:
        if n != number:
            out.append(n)
            if len(out) >= MAX_DUPLICATES_LISTED:
                break
    return out


def _chunks(items: Iterable[Issue], size: int) -> Iterator[list[Issue]]:
    chunk: list[Issue] = []
    for item in items:
        chunk.append(item)
        if len(chunk) >= size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def _from_cache(cache: TriageCache, issue: Issue) -> tuple[bytes, Head, np.ndarray, np.ndarray | None] | None:
    hit = cache.get(issue.number, issue.content_hash)
    if hit is None:
        return None
    blob, vec = hit
    try:
        head = Head.of(unpack(blob))
    except Exception:  # noqa: BLE001 — damaged entry: recompute
        return None
    n = len(vec) // 2 if len(vec) == 768 else len(vec)
    return blob, head, vec[:n], (vec[n:] if len(vec) == 768 else None)


def triage(batch: Batch, engine: Engine, opts: Options | None = None) -> TriageResult:

    opts = opts or Options()
    t0 = time.perf_counter()
    problems = list(batch.problems)
    cache = TriageCache(engine_key(engine.digest, opts.top), root=opts.cache_dir, enabled=opts.use_cache)
    # number -> (packed row, head, from the cache?, query vector, body vector)
    rows: dict[int, tuple[bytes, Head, bool, np.ndarray, np.ndarray | None]] = {}
    order: list[int] = []  # first appearance
    processed = 0
    saved_at = time.monotonic()
    total = len(batch.issues) if batch.stream is None else None
    try:
        with _progress(opts.progress) as prog:
            tasks = (prog.add_task("embedding", total=total), prog.add_task("matching", total=total)) if prog else None
            # issue by issue (a large export is streamed), in chunks: one chunk's texts and reports at
            # a time, and the cache saved as it goes, so a long run that is interrupted keeps what it
            # finished
            for chunk in _chunks(batch.all(), CHUNK):
                todo: dict[int, Issue] = {}  # a later copy of a number replaces the earlier one
                for issue in chunk:
                    if issue.number in rows or issue.number in todo:
                        problems.append(f"issue #{issue.number} appears more than once; keeping the last copy")
                    else:
                        order.append(issue.number)
                    todo.pop(issue.number, None)
                    cached = _from_cache(cache, issue)
                    if cached is None:
                        todo[issue.number] = issue
                    else:
                        blob, head, qv, bv = cached
                        rows[issue.number] = (blob, head, True, qv, bv)
                        if prog and tasks:
                            prog.advance(tasks[0])
                            prog.advance(tasks[1])
                processed += len(todo)
                for issue, res, qv, bv in _diagnose_batch(list(todo.values()), engine, opts, problems, prog, tasks):
                    blob = pack(res)
                    rows[issue.number] = (blob, Head.of(res), False, qv, bv)
                    cache.put(
                        issue.number, issue.content_hash, blob, np.concatenate([qv, bv]) if bv is not None else qv
                    )
                if time.monotonic() - saved_at > SAVE_EVERY_S:
                    _save(cache, problems)
                    saved_at = time.monotonic()
    finally:
        _save(cache, problems)
    problems.extend(p for p in batch.problems if p not in problems)  # a streamed export reports late
    order = [n for n in order if n in rows]
    results = IssueRows()
    qvecs, bvecs = [], []
    for n in order:
        blob, head, was_cached, qv, bv = rows.pop(n)
        results.append(blob, head, cached=was_cached)
        qvecs.append(qv)
        bvecs.append(bv)
    clusters, categories = _clusters(results, qvecs, bvecs, opts)
    dt = time.perf_counter() - t0
    stats: dict[str, float | int | str] = {
        "issues": len(results),
        "processed": processed,
        "from_cache": cache.hits,
        "matched": sum(h.verdict == "match" for h in results.heads),
        "problems": len(problems),
        "seconds": round(dt, 3),
    }
    return TriageResult(issues=results, clusters=clusters, new_categories=categories, problems=problems, stats=stats)


def _clusters(
    rows: IssueRows, qvecs: list[np.ndarray], bvecs: list[np.ndarray | None], opts: Options
) -> tuple[list[Cluster], list[NewCategory]]:
    heads = rows.heads
    clusters: list[Cluster] = []
    by_case: dict[str, list[int]] = defaultdict(list)
    for i, h in enumerate(heads):
        if h.verdict == "match" and h.case_id:
            by_case[h.case_id].append(i)
    for cid, idx in sorted(by_case.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        nums = [heads[i].number for i in idx]
        for i in idx:
            rows.set_duplicates(i, _others(nums, heads[i].number))
        if len(idx) >= 2:
            clusters.append(Cluster(kind="case", issues=nums, case_id=cid, title=heads[idx[0]].case_title))
    un = [i for i, h in enumerate(heads) if h.verdict != "match" and bvecs[i] is not None]
    dup_groups: list[list[int]] = []
    if len(un) >= 2:
        # similarity = mean of the query-vector and the body-vector cosine (measured in docs/triage.md)
        stacked = np.concatenate([np.stack([qvecs[i] for i in un]), np.stack([bvecs[i] for i in un])], axis=1)  # type: ignore[misc]
        stacked = stacked / np.sqrt(2.0)  # so that the dot product is the mean of the two cosines
        for members, sim in near_duplicate_groups(stacked, opts.dup_threshold):
            g = [un[m] for m in members]
            dup_groups.append(g)
            nums = [heads[i].number for i in g]
            for i in g:
                rows.set_duplicates(i, _others(nums, heads[i].number))
            clusters.append(
                Cluster(
                    kind="near-duplicate",
                    issues=nums,
                    title=heads[g[0]].title or (heads[g[0]].error or ""),
                    similarity=round(sim, 3),
                )
            )
    tb = [i for i in un if heads[i].has_traceback] + [
        i for i, h in enumerate(heads) if h.verdict != "match" and bvecs[i] is None and h.has_traceback
    ]
    pos = {i: k for k, i in enumerate(tb)}
    local_dups = [[pos[i] for i in g if i in pos] for g in dup_groups]
    categories = []
    for g in group_new_categories([heads[i].error_key for i in tb], [x for x in local_dups if len(x) >= 2]):
        hs = sorted((heads[tb[k]] for k in g), key=lambda h: h.number)
        pk = sorted({p for h in hs for p in h.packages})
        categories.append(
            NewCategory(
                key=hs[0].error_key or (hs[0].error or ""),
                issues=[h.number for h in hs],
                exception=(hs[0].error or "").split(":", 1)[0],
                packages=pk,
                titles=[h.title for h in hs][:5],
                scaffold=f"trl-help kb new --from-issue {hs[0].number} --issues {opts.source}",
            )
        )
    categories.sort(key=lambda c: (-len(c.issues), c.issues[0]))
    return clusters, categories
