"""Markdown answer, ready to paste into a GitHub comment."""

from __future__ import annotations

from assistant.match.diagnosis import Diagnosis, Match
from assistant.report.candidates import other_candidates
from assistant.report.safe_markdown import code_span
from assistant.report.version_hint import version_detail


def _case_section(m: Match, full: bool, hint: bool = True) -> list[str]:
    out = [
        f"### {m.title}",
        "",
        f"**Case** `{m.case_id}` · confidence **{m.confidence}** ({m.score:.2f}) · "
        f"versions: **{m.versions.verdict}** — {version_detail(m, hint)}",
        "",
    ]
    if m.evidence:
        out += ["**Why it matched** (from your log):", ""] + [f"> {code_span(e)}" for e in m.evidence[:4]] + [""]
    if not full:
        return out
    out += ["**Cause.** " + m.cause, "", "**Fix**", ""]
    for i, fx in enumerate(m.fixes, 1):
        trade = f" _Trade-off: {fx.tradeoff}_" if fx.tradeoff else ""
        out.append(f"{i}. **{fx.title}** ({fx.safety}). {fx.description}{trade}")
        if fx.code:
            out += ["", f"   ```{fx.language}"] + [f"   {ln}" for ln in fx.code.rstrip().splitlines()] + ["   ```"]
    out.append("")
    if m.probe:
        out += [f"Confirm on your model: `trl-help probe {m.case_id} --model /path/to/model`", ""]
    refs = ", ".join(f"[{r.type}]({r.url})" for r in m.references[:6])
    out += [f"References: {refs}", ""]
    return out


def render_markdown(d: Diagnosis, hint: bool = True) -> str:
    """Markdown answer; `hint=False` drops CLI-only advice (for replies read on GitHub)."""
    lines: list[str] = []
    if d.error is not None:
        first = d.error.message.splitlines()[0][:200] if d.error.message else ""
        lines += [f"**Error:** {code_span(f'{d.error.exception}: {first}')}", ""]
    if d.verdict == "no-known-case" or not d.matches:
        lines += ["## No known case", "", "trl-help found no known failure that fits this report confidently."]
        if d.matches:
            lines += ["", "Nearest related cases (low confidence):", ""]
            lines += [f"- `{m.case_id}` — {m.title} ({m.score:.2f})" for m in d.matches]
        return "\n".join(lines) + "\n"
    lines += ["## Diagnosis (trl-help)", ""]
    lines += _case_section(d.matches[0], full=True, hint=hint)
    others = other_candidates(d)
    if others:
        lines += ["<details><summary>Other candidates</summary>", ""]
        lines += [f"- `{m.case_id}` — {m.title} ({m.confidence}, {m.score:.2f})" for m in others]
        lines += ["", "</details>"]
    return "\n".join(lines) + "\n"
