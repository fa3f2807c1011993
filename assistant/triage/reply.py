"""The draft reply a maintainer can post as is: the `explain --format markdown` answer
(cause, fix, references, probe) composed with version advice and a request for what is missing."""

from __future__ import annotations

from assistant.match.diagnosis import Diagnosis, Match
from assistant.report.markdown import render_markdown

FOOTER = "<sub>Drafted by `trl-help triage`{what}. Run `trl-help explain your-log.txt` on the full log to check it yourself.</sub>"


def _upgrade_targets(m: Match) -> list[str]:
    return [f"`{f.package}>={f.version}`" + (f" ({f.fixed_by})" if f.fixed_by else "") for f in m.fixed_in]


def version_advice(m: Match) -> list[str]:
    """Markdown lines on versions: what to upgrade, or what to share when versions are unknown."""
    targets = _upgrade_targets(m)
    v = m.versions.verdict
    detail = m.versions.detail[:1].upper() + m.versions.detail[1:]
    lines = ["**Versions.**"]
    if v == "affected":
        lines[0] += f" {detail}."
        if targets:
            lines[0] += " Upgrading to " + ", ".join(targets) + " fixes it."
    elif v == "fixed-in-your-version":
        lines[0] += (
            f" {detail}. Since your versions look past the "
            "fix, please double-check the versions of the environment that actually ran (e.g. the "
            "training nodes); if they are current, this may be a different cause and a minimal "
            "reproduction would help."
        )
    elif v == "predates-affected":
        lines[0] += (
            f" {detail}, so this case only applies if "
            "the environment that actually ran is newer than the one in the report; otherwise it may be "
            "a different cause with the same message."
        )
    elif m.version_packages:
        pk = ", ".join(m.version_packages)
        lines[0] += (
            f" The versions of {pk} decide this case but are not in the report; please paste the output of `trl env`."
        )
        if targets:
            lines[0] += " Fixed in " + ", ".join(targets) + "."
    else:
        return []
    return lines + [""]


def _has_probe_line(md: str) -> bool:
    return "trl-help probe" in md


def draft_reply(d: Diagnosis) -> str:
    """Markdown comment for the issue."""
    # `--installed` is advice for the CLI user, not for someone reading a reply on GitHub
    body = render_markdown(d, hint=False).rstrip("\n")
    if d.verdict == "match" and d.matches:
        m = d.matches[0]
        opening = (
            "This looks like a known failure."
            if m.confidence == "high"
            else "This may be a known failure; please check the evidence below against your log."
        )
        parts = [f"Thanks for the report! {opening}", "", body, ""]
        parts += version_advice(m)
        if not _has_probe_line(body):
            parts += ["To confirm, run `trl-help explain` on the full log of the failing run.", ""]
        parts.append(FOOTER.format(what=f" (case `{m.case_id}`, score {m.score:.2f})"))
        return "\n".join(parts) + "\n"
    asks = []
    if d.error is None:
        asks.append(
            "the full error traceback (the whole `Traceback (most recent call last): ...` block, "
            "from every rank if you ran several processes)"
        )
    if not d.environment:
        asks.append("the output of `trl env`")
    asks.append("a minimal script or command that reproduces it, with the launcher and config you used")
    parts = [
        "Thanks for the report! We could not match it to a known failure yet. To help us look into "
        "it, could you share:",
        "",
    ]
    parts += [f"- {a}" for a in asks]
    parts += [
        "",
        "<details><summary>What trl-help found</summary>",
        "",
        body,
        "",
        "</details>",
        "",
        FOOTER.format(what=""),
    ]
    return "\n".join(parts) + "\n"
