"""Hard bounds on untrusted input, named in one place (no heavy imports)."""

from __future__ import annotations

import re

#: Longest line a symptom pattern may scan; longer lines are cut before regex search.
MAX_SCAN_LINE = 4096

_LONG_LINE = re.compile(r"([^\n]{" + str(MAX_SCAN_LINE) + r"})[^\n]+")

# Nested quantifiers (`(a+)+`) are refused when a case loads: assistant/kb/regex_safety.py.


def cap_lines(text: str) -> str:
    """*text* with every line cut to MAX_SCAN_LINE characters (same object when none is longer)."""
    return _LONG_LINE.sub(r"\1", text) if len(text) > MAX_SCAN_LINE else text
