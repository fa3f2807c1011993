"""Hard bounds on untrusted input, named in one place (no heavy imports)."""

from __future__ import annotations

import re
from functools import lru_cache

#: Longest line a symptom pattern may scan; longer lines are cut before regex search.
MAX_SCAN_LINE = 4096

#: Longest exception message kept (a 50 MB one-line message would be searched and printed in full)
MAX_MESSAGE_CHARS = 16 * 1024

#: seconds `explain FIFO` waits for a writer to open a named pipe before giving up with a message
FIFO_WRITER_WAIT_S = 30.0

_LONG_LINE = re.compile(r"([^\n]{" + str(MAX_SCAN_LINE) + r"})[^\n]+")

# Nested quantifiers (`(a+)+`) are refused when a case loads: assistant/kb/regex_safety.py.


@lru_cache(maxsize=16)
def cap_lines(text: str) -> str:
    """*text* with every line cut to MAX_SCAN_LINE characters (same object when none is longer).

    Memoised: the matcher passes the same report text for every case and pattern."""
    if len(text) <= MAX_SCAN_LINE or max(map(len, text.split("\n"))) <= MAX_SCAN_LINE:
        return text
    return _LONG_LINE.sub(r"\1", text)


def cap_message(message: str) -> str:
    """*message* cut to MAX_MESSAGE_CHARS, saying how much was cut (same object when short)."""
    if len(message) <= MAX_MESSAGE_CHARS:
        return message
    return message[:MAX_MESSAGE_CHARS] + f" … [{len(message) - MAX_MESSAGE_CHARS} more characters cut]"
