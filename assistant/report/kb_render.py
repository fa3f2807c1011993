"""KB cases in the terminal: a list, and a ruff-rule-like page per case."""

from __future__ import annotations

from rich.console import Console
from rich.markdown import Markdown
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text

from assistant.kb.model import Case


def render_case_list(cases: list[Case], console: Console | None = None) -> None:
    c = console or Console()
    t = Table(show_edge=False)
    t.add_column("id", style="bold", no_wrap=True)
    t.add_column("labels")
    t.add_column("probe")
    t.add_column("title")
    for case in sorted(cases, key=lambda x: x.id):
        t.add_row(Text(case.id), Text(",".join(case.labels)), Text(case.probe or ""), Text(case.title))
    c.print(t)
    c.print(f"{len(cases)} case(s)")


def render_case(case: Case, console: Console | None = None) -> None:
    c = console or Console()
    # KB text goes in as Text, never as markup: patterns and titles hold brackets and backslashes
    c.rule(Text(case.id, style="bold"))
    c.print(Text.assemble((case.title, "bold"), "   ", (", ".join(case.labels), "dim")))
    c.print(Markdown("## What happens\n" + case.summary))
    c.print(Markdown("## Why\n" + case.cause))
    if case.example:
        c.print(Markdown("## Example"))
        c.print(Syntax(case.example.rstrip(), "python", theme="ansi_dark"))
    c.print(Markdown("## Symptoms"))
    for p in case.symptoms.messages + case.symptoms.log_patterns:
        c.print(Text.assemble("  • ", p.pattern, "  ", (f"({p.kind.value})", "dim")))
    for m in case.symptoms.metrics:
        c.print(Text(f"  • metric {m.name} {m.op.value} {'' if m.value is None else m.value}"))
    c.print(Markdown("## Fix"))
    for i, fx in enumerate(case.fixes, 1):
        c.print(Text.assemble(f"{i}. ", (fx.title, "bold"), " ", (f"({fx.safety.value})", "dim"), " ", fx.description))
        if fx.tradeoff:
            c.print(Text(f"   trade-off: {fx.tradeoff}", style="italic"))
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
            c.print(Text(f"  • {a.package}: {rs}" + (f"  fixed by {a.fixed_by}" if a.fixed_by else "")))
    c.print(Markdown(f"## Verification: {case.verification.status}"))
    for u in case.verification.unconfirmed:
        c.print(Text.assemble("  • ", ("unconfirmed:", "yellow"), " ", u))
    if case.probe:
        c.print(Text.assemble("\n", ("Probe:", "bold"), f" trl-help probe {case.id}"))
    c.print(Markdown("## References"))
    for r in case.references:
        c.print(Text(f"  • [{r.type.value}] {r.url}"))
