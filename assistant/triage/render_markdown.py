"""`--format markdown`: a report to post in a tracking issue (#N links resolve on GitHub)."""

from __future__ import annotations

from assistant.report.safe_markdown import code_span, plain
from assistant.triage.run import TriageResult


def _cell(s: str, n: int = 90) -> str:
    """User text (an issue title, a problem line) as inert markdown, cut to *n* characters."""
    s = " ".join((s or "").split())
    return plain(s if len(s) <= n else s[: n - 1] + "…")


def render_markdown_report(result: TriageResult) -> str:
    st = result.stats
    heads = result.issues.heads  # rows are read one at a time (10,000 of them held at once were ~200 MB)
    n, matched = len(heads), sum(h.verdict == "match" for h in heads)
    out = [
        "# trl-help triage",
        "",
        f"{n} issue(s): **{matched}** match a known case, **{n - matched}** do not. "
        f"{len([c for c in result.clusters if c.kind == 'case'])} case cluster(s), "
        f"{len([c for c in result.clusters if c.kind == 'near-duplicate'])} near-duplicate cluster(s), "
        f"{len(result.new_categories)} possible new failure categor{'y' if len(result.new_categories) == 1 else 'ies'}.",
        "",
    ]
    if st.get("from_cache"):
        out += [f"_{st['processed']} issue(s) processed, {st['from_cache']} from the cache._", ""]
    out += ["## Known cases", ""]
    if matched:
        out += ["| Issue | Title | Case | Confidence | Versions | Labels |", "|---|---|---|---|---|---|"]
        for i, h in enumerate(heads):
            if h.verdict != "match":
                continue
            r = result.issues[i]
            m = r.matches[0]
            out.append(
                f"| #{r.number} | {_cell(r.title, 70)} | `{m.case_id}` | {m.confidence} ({m.score:.2f}) | "
                f"{m.versions.verdict} | {', '.join(r.labels)} |"
            )
    else:
        out.append("_None._")
    out.append("")
    cl = [c for c in result.clusters if c.kind == "case"]
    if cl:
        out += ["## Issues sharing a case", ""]
        out += [f"- `{c.case_id}` — {_cell(c.title, 100)}: " + ", ".join(f"#{n}" for n in c.issues) for c in cl]
        out.append("")
    nd = [c for c in result.clusters if c.kind == "near-duplicate"]
    out += ["## Near-duplicates among unmatched issues", ""]
    out += [
        "- " + ", ".join(f"#{n}" for n in c.issues) + f" (similarity ≥ {c.similarity:.2f}) — {_cell(c.title, 80)}"
        for c in nd
    ] or ["_None above the threshold._"]
    out += [
        "",
        "## Possible new failure categories",
        "",
        "Unmatched issues with a real traceback, grouped by error. Scaffold a KB case with the command shown.",
        "",
    ]
    for c in result.new_categories:
        key = " ".join(c.key.split())
        out.append(
            f"- {code_span(key if len(key) <= 110 else key[:109] + '…')} — "
            + ", ".join(f"#{n}" for n in c.issues)
            + (f" (frames: {', '.join(c.packages)})" if c.packages else "")
            + f"  \n  `{c.scaffold}`"
        )
    if not result.new_categories:
        out.append("_None._")
    out.append("")
    other = [h.number for h in heads if h.verdict != "match" and not h.has_traceback]
    if other:
        out += ["## Unmatched, without a traceback", "", ", ".join(f"#{n}" for n in other), ""]
    if result.problems:
        out += ["## Problems in the export", ""] + [f"- {_cell(p, 200)}" for p in result.problems] + [""]
    return "\n".join(out)
