"""KB cases in the terminal: a list, and a ruff-rule-like page per case."""

from __future__ import annotations

from rich.console import Console
from rich.markdown import Markdown
from rich.syntax import Syntax
from rich.table import Table

from assistant.kb.model import Case


def render_case_list(cases: list[Case], console: Console | None = None) -> None:
    c = console or Console()
    t = Table(show_edge=False)
    t.add_column("id", style="bold", no_wrap=True)
    t.add_column("labels")
    t.add_column("probe")
    t.add_column("title")
    for case in sorted(cases, key=lambda x: x.id):
        t.add_row(case.id, ",".join(case.labels), case.probe or "", case.title)
    c.print(t)
    c.print(f"{len(cases)} case(s)")


def render_case(case: Case, console: Console | None = None) -> None:
    c = console or Console()
    c.rule(f"[bold]{case.id}")
    c.print(f"[bold]{case.title}[/]   [dim]{', '.join(case.labels)}[/]")
    c.print(Markdown("## What happens\n" + case.summary))
    c.print(Markdown("## Why\n" + case.cause))
    if case.example:
        c.print(Markdown("## Example"))
        c.print(Syntax(case.example.rstrip(), "python", theme="ansi_dark"))
    c.print(Markdown("## Symptoms"))
    for p in case.symptoms.messages + case.symptoms.log_patterns:
        c.print(f"  • {p.pattern}  [dim]({p.kind.value})[/]")
    for m in case.symptoms.metrics:
        c.print(f"  • metric {m.name} {m.op.value} {'' if m.value is None else m.value}")
    c.print(Markdown("## Fix"))
    for i, fx in enumerate(case.fixes, 1):
        c.print(f"{i}. [bold]{fx.title}[/] [dim]({fx.safety.value})[/] {fx.description}")
        if fx.tradeoff:
            c.print(f"   [italic]trade-off: {fx.tradeoff}[/]")
        if fx.code:
            c.print(Syntax(fx.code.rstrip(), fx.language, theme="ansi_dark"))
    if case.affected:
        c.print(Markdown("## Affected versions"))
        for a in case.affected:
            rs = "; ".join(
                f">={r.introduced}"
                + (f", <{r.fixed}" if r.fixed else "")
                + (f", <={r.last_affected}" if r.last_affected else "")
                for r in a.ranges
            )
            c.print(f"  • {a.package}: {rs}" + (f"  fixed by {a.fixed_by}" if a.fixed_by else ""))
    c.print(Markdown(f"## Verification: {case.verification.status}"))
    for u in case.verification.unconfirmed:
        c.print(f"  • [yellow]unconfirmed:[/] {u}")
    if case.probe:
        c.print(f"\n[bold]Probe:[/] trl-help probe {case.id}")
    c.print(Markdown("## References"))
    for r in case.references:
        c.print(f"  • [{r.type.value}] {r.url}")
