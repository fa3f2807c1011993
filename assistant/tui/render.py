"""Pure builders for what the TUI shows: Markdown documents, candidate labels, clipboard text.

No widgets here, so each piece can be tested (and reused) without a terminal. Colours are
Textual theme variables (``$success``, ``$text-warning`` …) so they read in light and dark themes.
"""

from __future__ import annotations

from typing import Any

from textual.content import Content

from assistant.match.diagnosis import Diagnosis, Match
from assistant.parse.model import Report

#: confidence -> (badge label, style)
CONFIDENCE_STYLE = {
    "high": ("HIGH", "bold $text-success on $success-muted"),
    "medium": ("MED", "bold $text-warning on $warning-muted"),
    "low": ("LOW", "bold $text-error on $error-muted"),
}

#: version verdict -> (short label, style)
VERSION_STYLE = {
    "affected": ("affected", "$text-warning"),
    "fixed-in-your-version": ("fixed in yours", "$text-success"),
    "predates-affected": ("before range", "$text-success"),
    "unknown": ("ver ?", "$text-muted"),
}

VERDICT_STYLE = {
    "confirmed": "success",
    "reproduced-in-part": "accent",
    "not-reproduced": "warning",
    "fix-ineffective": "error",
    "skipped": "primary",
    "error": "error",
}

VERDICT_TEXT = {
    "confirmed": "confirmed — the baseline shows the symptom and the fix removes it",
    "reproduced-in-part": "reproduced in part — shown against an emulation of the failing library's check, "
    "which does not run here; the fix removes it",
    "not-reproduced": "not reproduced — the baseline did not show the symptom here",
    "fix-ineffective": "fix ineffective — the symptom is still there with the fix",
    "skipped": "skipped — this probe cannot run here",
    "error": "error — the probe itself failed",
}


def _first_line(text: str, limit: int = 200) -> str:
    return text.splitlines()[0][:limit] if text else ""


def _fence(code: str, language: str = "text") -> list[str]:
    """A fenced block that survives backticks inside *code*."""
    ticks = "```"
    while ticks in code:
        ticks += "`"
    return [f"{ticks}{language}", code.rstrip("\n"), ticks]


# --------------------------------------------------------------------------- candidates


#: candidate titles are cut here (the case view shows them in full)
TITLE_CHARS = 72


def candidate_prompt(rank: int, m: Match, related: bool = False) -> Content:
    """Two lines: rank, confidence badge, score, version verdict / the case title."""
    label, style = CONFIDENCE_STYLE.get(m.confidence, (m.confidence.upper(), "bold"))
    vlabel, vstyle = VERSION_STYLE.get(m.versions.verdict, (m.versions.verdict, "$text-muted"))
    parts: list[Any] = [
        (f"{rank} ", "bold"),
        (f" {label} ", style),
        (f" {m.score:.2f} ", "$text-muted"),
        (vlabel, vstyle),
    ]
    if m.probe:
        parts.append((" probe", "$text-accent"))
    title = m.title if len(m.title) <= TITLE_CHARS else m.title[: TITLE_CHARS - 1].rstrip() + "…"
    parts += ["\n", (title, "italic $text-muted" if related else "")]
    return Content.assemble(*parts)


# --------------------------------------------------------------------------- documents


INTRO = """\
# trl-help

Paste a **traceback or a whole training log** into the box above (your terminal's paste, or
`ctrl+v`). The diagnosis starts by itself once the paste settles, or press **F5**
(also `ctrl+enter` / `ctrl+r`). `ctrl+o` opens a log file.

Then:

- `↑` `↓` pick a candidate case, read its cause and fix here
- `c` copies the fix, `m` a GitHub-ready markdown answer
- `v` shows what was understood from your text (error, chain, environment)
- `p` runs the case's probe: reproduce it on a tiny model and test the fix
- `?` all keys · `escape` leaves the paste box · `ctrl+q` quits
"""


def case_markdown(m: Match, *, related: bool = False, probe_note: str | None = None) -> str:
    """The selected case: badges, evidence from the input, cause, fixes with code, references."""
    out = [f"## {m.title}", ""]
    out.append(f"`{m.case_id}` · confidence **{m.confidence}** ({m.score:.2f}) · versions: **{m.versions.verdict}**")
    if m.versions.detail:
        out += ["", f"_{m.versions.detail}_"]
    out.append("")
    if related:
        out += [
            "> **Low-confidence related case, not a diagnosis.** It scored below the match "
            "threshold; read it as a lead.",
            "",
        ]
    if m.summary:
        out += [m.summary, ""]
    if m.evidence:
        out += ["### Why it matched", "", "From your input:", ""]
        out += _fence("\n".join(e[:300] for e in m.evidence[:6]))
        out.append("")
    if m.cause:
        out += ["### Cause", "", m.cause, ""]
    out += ["### Fix", ""]
    if m.fixes:
        for i, fx in enumerate(m.fixes, 1):
            out.append(f"{i}. **{fx.title}** ({fx.safety}). {fx.description}")
            if fx.tradeoff:
                out.append(f"   _Trade-off: {fx.tradeoff.strip()}_")
            out.append("")
            if fx.code:
                out += _fence(fx.code, fx.language)
                out.append("")
    else:
        out += _fence(m.fix) + [""]
    if m.probe:
        out += ["### Probe", ""]
        out.append(
            probe_note
            or f"Press `p` to run probe `{m.probe}`: it reproduces the failure "
            "on a tiny model (or yours) and checks that the fix removes it."
        )
        out.append("")
    if m.references:
        out += ["### References", ""]
        out += [f"- {r.type}: <{r.url}>" for r in m.references[:8]]
        out.append("")
    return "\n".join(out)


def no_case_markdown(d: Diagnosis) -> str:
    """The honest "no known case" answer, with what was understood and the nearest cases."""
    out = [
        "## No known case",
        "",
        "trl-help found **no known failure that fits this report confidently**. It would rather say so than guess.",
        "",
    ]
    if d.error is not None:
        out += ["Understood error:", ""]
        out += _fence(f"{d.error.exception}: {_first_line(d.error.message, 300)}".rstrip(": "))
        out.append("")
    elif d.observations:
        out += ["Observed: " + "; ".join(d.observations), ""]
    else:
        out += [
            "No exception was found in the text. If this is a silent failure, paste the "
            "logged metrics (loss, grad_norm, reward …) too.",
            "",
        ]
    if d.matches:
        out += ["### Nearest related cases (low confidence)", ""]
        out += [f"- `{m.case_id}` — {m.title} ({m.score:.2f})" for m in d.matches]
        out += ["", "Select one on the left to read it; treat it as a lead, not an answer.", ""]
    out += [
        "### Next steps",
        "",
        "- `v`: check what was understood (error, chain, versions, settings)",
        "- paste more context: the full traceback of **every** rank, versions "
        "(`pip list | grep -E 'trl|peft|transformers|accelerate|deepspeed|vllm|torch'`)",
        "- `m`: copy a markdown summary to ask upstream",
        "",
    ]
    return "\n".join(out)


def parsed_markdown(r: Report) -> str:
    """What the parser understood (the TUI's version of `trl-help parse`)."""
    out = ["# What was understood", ""]
    if r.primary is None:
        out += ["**Primary error:** none found", ""]
    else:
        rank = f" (rank {r.primary.rank})" if r.primary.rank is not None else ""
        out += [f"**Primary error**{rank}:", ""]
        out += _fence(f"{r.primary.exception}: {r.primary.message[:800]}".rstrip(": "))
        out.append("")
    if r.chain:
        out += ["## Chain (outermost first)", ""]
        for e in r.chain:
            rel = f" _({e.relation})_" if e.relation else ""
            out.append(f"- `{e.exception}`: {_first_line(e.message, 160).replace('`', '')}{rel}")
        out.append("")
    frames = [f for e in r.chain for f in e.frames]
    if frames:
        out += ["## Frames (innermost last)", "", "| package | file | line | function |", "|---|---|---|---|"]
        for f in frames[-15:]:
            file = f.file[-48:].replace("|", "/")
            out.append(f"| {f.package} | {file} | {f.line or ''} | {f.function or ''} |")
        out.append("")
    if r.other_errors:
        out += [f"**Other errors:** {len(r.other_errors)} (other ranks / knock-on)", ""]
        out += [f"- `{e.exception}`: {_first_line(e.message, 120).replace('`', '')}" for e in r.other_errors[:5]]
        out.append("")
    out += ["## Environment", ""]
    if r.environment:
        out += [f"- **{k}** {v}" for k, v in r.environment.items()]
    else:
        out.append("_no package versions found in the text_")
    out.append("")
    if r.settings:
        out += ["## Settings", ""] + [f"- **{k}** = {v}" for k, v in r.settings.items()] + [""]
    series = r.metric_series()
    if series:
        out += ["## Metrics", ""]
        out += [f"- **{k}**: {len(v)} values, last {v[-1]:g}" for k, v in series.items()]
        out.append("")
    if r.observations:
        out += ["## Observed", ""] + [f"- {o}" for o in r.observations] + [""]
    if r.warnings:
        out += ["## Warnings", ""] + [f"- {w[:200]}" for w in r.warnings[:5]] + [""]
    sig = r.signature.text()
    if sig:
        out += ["## Signature (used for matching)", ""] + _fence(sig) + [""]
    if r.truncated:
        out += ["_Large input: only windows around errors and metric/env lines were kept._", ""]
    return "\n".join(out)


# --------------------------------------------------------------------------- clipboard


def fix_text(m: Match) -> str:
    """The first fix, as something to paste into code: its code if it has any."""
    if m.fixes:
        fx = m.fixes[0]
        if fx.code:
            return fx.code.rstrip() + "\n"
        return f"{fx.title}: {fx.description}\n"
    return m.fix.rstrip() + "\n"


# --------------------------------------------------------------------------- probes


def probe_summary(result: Any) -> list[str]:
    """Plain lines describing a ProbeResult's phases and notes (for the dialog's log)."""
    lines: list[str] = []
    phases = [result.baseline, result.treatment, *getattr(result, "extra", {}).values()]
    for ph in phases:
        status = getattr(ph.status, "value", ph.status)
        if status == "not-run" and not ph.description:
            continue
        mark = {True: "symptom", False: "clean", None: "n/a"}[ph.reproduced]
        lines.append(f"── {ph.name}: {mark} ({status}, {ph.seconds:.1f} s)")
        if ph.detail:
            lines.append(f"   {ph.detail[:300]}")
        for ev in ph.evidence[:3]:
            lines.append(f"   evidence: {ev[:200]}")
    for n in getattr(result, "notes", []) or []:
        lines.append(f"• {n}")
    return lines
