"""User text inside markdown that GitHub renders: it must show as typed and do nothing else
(no closed code span, no HTML, no @mention, no link, no table break)."""

from __future__ import annotations

import html
import re

_BACKTICKS = re.compile(r"`+")
_MENTION = re.compile(r"@(?=[A-Za-z0-9])")
_MD_SPECIAL = re.compile(r"([\\`*_\[\]|#!])")


def code_span(text: str) -> str:
    """*text* as one inline code span: the fence is one backtick longer than any run of backticks
    inside, so the text cannot close it (CommonMark); HTML and mentions are inert in code."""
    text = " ".join(text.split())
    longest = max((len(m.group()) for m in _BACKTICKS.finditer(text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or not text else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def plain(text: str) -> str:
    """*text* as inert markdown prose on one line: HTML entities escaped, markdown punctuation
    backslash-escaped, @mentions broken with a zero-width space."""
    text = " ".join(text.split())
    text = html.escape(_MD_SPECIAL.sub(r"\\\1", text), quote=False)
    return _MENTION.sub("@\u200b", text)
