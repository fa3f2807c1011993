"""Rich terminal answer for `trl-help explain`."""

from __future__ import annotations

from rich.console import Console, Group, RenderableType
from rich.markdown import Markdown
from rich.panel import Panel
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text

from assistant.match.diagnosis import Diagnosis
from assistant.report.candidates import other_candidates
from assistant.report.console import capture
from assistant.report.version_hint import version_detail

_BADGE = {"high": "bold green", "medium": "bold yellow", "low": "bold red"}
_VERSION = {"affected": "red", "fixed-in-your-version": "green", "predates-affected": "green", "unknown": "dim"}


def render_text(d: Diagnosis, console: Console | None = None) -> str:
    """The terminal answer, styled like *console* (default: stdout's terminal, plain when piped)."""
    return capture(_renderables(d), like=console)


def _renderables(d: Diagnosis) -> list[RenderableType]:
    out: list[RenderableType] = []
    if d.error is not None:
        first = d.error.message.splitlines()[0][:200] if d.error.message else ""
        rank = f" (rank {d.error.rank})" if d.error.rank is not None else ""
        out.append(Text.assemble(("error: ", "bold"), (f"{d.error.exception}: {first}{rank}", "red")))
    elif d.observations:
        out.append(Text.assemble(("observed: ", "bold"), "; ".join(d.observations)))
    if d.verdict == "no-known-case" or not d.matches:
        body = [Text("No known case fits this report with enough confidence.", style="bold")]
        if d.matches:
            body.append(Text("\nNearest related cases (not a diagnosis):", style="dim"))
            for m in d.matches:
                body.append(Text(f"  • {m.case_id} — {m.title} ({m.score:.2f})", style="dim"))
        out.append(Panel(Group(*body), title="trl-help", border_style="yellow"))
        return out
    top = d.matches[0]
    head = Text.assemble((top.confidence.upper(), _BADGE[top.confidence]), f"  {top.score:.2f}  ", (top.title, "bold"))
    parts: list = [head, Text(f"case {top.case_id}", style="dim")]
    if top.evidence:
        parts.append(Text("\nWhy it matched:", style="bold"))
        parts += [Text(f"  > {e}", style="cyan") for e in top.evidence[:4]]
    parts += [Text("\nCause", style="bold"), Markdown(top.cause)]
    parts.append(Text("\nFix", style="bold"))
    for i, fx in enumerate(top.fixes, 1):
        trade = f" — trade-off: {fx.tradeoff}" if fx.tradeoff else ""
        parts.append(Text(f"{i}. {fx.title} [{fx.safety}]{trade}"))
        if fx.code:
            # wrapped, never cropped: a fix cut at the panel's edge would be copied wrong
            parts.append(
                Syntax(fx.code.rstrip(), fx.language, theme="ansi_dark", background_color="default", word_wrap=True)
            )
    parts.append(
        Text.assemble(
            ("\nVersions: ", "bold"),
            (top.versions.verdict, _VERSION[top.versions.verdict]),
            f" — {version_detail(top)}",
        )
    )
    if top.probe:
        parts.append(Text.assemble(("Confirm: ", "bold"), f"trl-help probe {top.case_id} --model /path/to/model"))
    parts.append(Text("References: " + "  ".join(r.url for r in top.references[:4]), style="dim"))
    out.append(Panel(Group(*parts), title="trl-help diagnosis", border_style="green"))
    others = other_candidates(d)
    if others:
        t = Table(title="Other candidates", show_edge=False)
        t.add_column("case")
        t.add_column("confidence")
        t.add_column("score", justify="right")
        t.add_column("versions")
        for m in others:
            t.add_row(m.case_id, Text(m.confidence, _BADGE[m.confidence]), f"{m.score:.2f}", m.versions.verdict)
        out.append(t)
    return out
