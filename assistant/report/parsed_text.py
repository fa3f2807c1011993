"""Human view of a parsed Report (`trl-help parse`)."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from assistant.parse.model import Report


def render_report(r: Report, console: Console | None = None) -> None:
    c = console or Console()
    if r.primary is None:
        c.print("[bold]primary error:[/] none found")
    else:
        c.print(
            f"[bold]primary error:[/] [red]{r.primary.exception}[/]: {r.primary.message[:500]}"
            + (f"  (rank {r.primary.rank})" if r.primary.rank is not None else "")
        )
    if len(r.chain) > 1:
        c.print("[bold]chain[/] (outermost first):")
        for e in r.chain:
            rel = f" [{e.relation}]" if e.relation else ""
            c.print(f"  • {e.exception}: {e.message.splitlines()[0][:160] if e.message else ''}{rel}")
    frames = [f for e in r.chain for f in e.frames]
    if frames:
        t = Table(title="frames", show_edge=False)
        for col in ("package", "file", "line", "function"):
            t.add_column(col)
        for f in frames[-15:]:
            t.add_row(f.package, f.file[-60:], str(f.line or ""), f.function or "")
        c.print(t)
    if r.other_errors:
        c.print(f"[bold]other errors:[/] {len(r.other_errors)} (other ranks / knock-on)")
    for label, value in (("environment", r.environment), ("settings", r.settings)):
        if value:
            c.print(f"[bold]{label}:[/] " + ", ".join(f"{k}={v}" for k, v in value.items()))
    series = r.metric_series()
    if series:
        c.print("[bold]metrics:[/] " + ", ".join(f"{k}: {len(v)} values, last {v[-1]:g}" for k, v in series.items()))
    for w in r.warnings[:5]:
        c.print(f"[yellow]warning:[/] {w[:200]}")
    for o in r.observations:
        c.print(f"[bold]observed:[/] {o}")
    c.print(f"[bold]signature:[/] {r.signature.text()}")
    if r.truncated:
        c.print("[dim]large input: only windows around errors and metric/env lines were kept[/]")
