"""Default output: rich tables in the terminal."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from assistant.triage.run import TriageResult

_CONF_STYLE = {"high": "green", "medium": "yellow", "low": "red"}


def render_table(result: TriageResult, console: Console | None = None) -> None:
    c = console or Console()
    t = Table(title="Issues", show_edge=False, expand=False)
    for col, kw in (
        ("#", {"justify": "right", "no_wrap": True}),
        ("title", {"max_width": 40, "overflow": "ellipsis", "no_wrap": True}),
        ("case", {"no_wrap": True}),
        ("conf.", {"no_wrap": True}),
        ("versions", {"no_wrap": True}),
        ("labels", {"max_width": 18, "overflow": "ellipsis", "no_wrap": True}),
        ("dups", {"no_wrap": True}),
    ):
        t.add_column(col, **kw)
    for r in result.issues:
        if r.verdict == "match":
            m = r.matches[0]
            case = f"[bold]{m.case_id}[/]"
            conf = f"[{_CONF_STYLE[m.confidence]}]{m.confidence} {m.score:.2f}[/]"
            ver = m.versions.verdict
        else:
            case, conf, ver = "[dim]no known case[/]", "", ""  # type: ignore[assignment]
        dups = ",".join(str(n) for n in r.duplicates[:4]) + ("…" if len(r.duplicates) > 4 else "")
        t.add_row(str(r.number), r.title, case, conf, ver, ",".join(r.labels), dups)
    c.print(t)
    if result.clusters:
        ct = Table(title="Clusters", show_edge=False)
        for col in ("kind", "issues", "case / title"):
            ct.add_column(col, overflow="fold")
        for cl in result.clusters:
            what = cl.case_id if cl.kind == "case" else f"{cl.title[:60]} (sim ≥ {cl.similarity:.2f})"
            ct.add_row(cl.kind, " ".join(f"#{n}" for n in cl.issues), what or "")
        c.print(ct)
    if result.new_categories:
        nt = Table(title="Possible new failure categories (unmatched, with a traceback)", show_edge=False)
        nt.add_column("error", overflow="fold", max_width=70)
        nt.add_column("issues")
        nt.add_column("scaffold", overflow="fold")
        for cat in result.new_categories:
            nt.add_row(cat.key, " ".join(f"#{n}" for n in cat.issues), cat.scaffold)
        c.print(nt)
    st = result.stats
    c.print(
        f"{st.get('issues', 0)} issue(s): {st.get('matched', 0)} matched; "
        f"{st.get('processed', 0)} processed, {st.get('from_cache', 0)} from cache, {st.get('seconds', 0)} s"
    )
