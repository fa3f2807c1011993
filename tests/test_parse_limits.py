"""Hard bounds from issue 14: nested quantifiers refused, long lines cut before regex search."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from assistant.kb.model import Pattern
from assistant.limits import MAX_SCAN_LINE, cap_lines
from assistant.match.symptoms import first_match


@pytest.mark.parametrize("pat", [r"(a+)+$", r"(\w*)*x", r"(x+){2,}"])
def test_nested_quantifier_rejected(pat: str) -> None:
    with pytest.raises(ValidationError, match="nested quantifier"):
        Pattern(pattern=pat, kind="regex")


@pytest.mark.parametrize("pat", [r"remaining_argv: \[", r"model\.generate\(", r"a \| b"])
def test_literal_with_a_regex_escape_rejected(pat: str) -> None:
    """A literal is searched as written: `remaining_argv: \\[` (a regex escape in a literal) could
    never match (ms-swift-cli-argument-renamed had one, so its generic message pattern never fired)."""
    with pytest.raises(ValidationError, match="regex escape"):
        Pattern(pattern=pat)
    Pattern(pattern=pat, kind="regex")
    Pattern(pattern=pat.replace("\\", ""))
    Pattern(pattern=r"C:\Users\me\site-packages\trl")  # a Windows path in a literal is fine


def test_bounded_repeat_of_group_accepted() -> None:
    Pattern(pattern=r"view\([^\n]*\)(?:\n[^\n]*){0,2}?RuntimeError", kind="regex")


def test_cap_lines_cuts_only_long_lines() -> None:
    text = "short\n" + "a_" * 40_000 + "\nend"
    capped = cap_lines(text)
    assert capped.split("\n")[0] == "short" and capped.split("\n")[2] == "end"
    assert len(capped.split("\n")[1]) == MAX_SCAN_LINE
    assert cap_lines("short\nlines") == "short\nlines"


def test_symptom_patterns_scan_long_lines_only_up_to_the_cap() -> None:
    """Issue 14: a `\\w*` pattern over an 80 KB `a_a_…` line took minutes. Lines are now cut to
    MAX_SCAN_LINE before any pattern runs: a match that starts beyond the cap is not seen."""
    p = Pattern(pattern=r"\w*_\w*Error: y", kind="regex")
    text = "Traceback (most recent call last):\nRuntimeError: x\n" + "a_" * 40_000 + "Error: y\n"
    assert first_match(p, text) is None
    assert first_match(p, "Traceback\n" + "a_" * 100 + "Error: y\n") is not None


def test_a_huge_one_line_message_is_kept_bounded():
    """A 5 MB one-line error: the message is cut (with a note of how much) and no whole-text search
    sees more of a line than MAX_SCAN_LINE (issue 14: 50 MB took 78 s and the JSON repeated it)."""
    from assistant.limits import MAX_MESSAGE_CHARS, MAX_SCAN_LINE
    from assistant.parse import parse_text

    text = "RuntimeError: boom " + "Error " * 800_000 + "\n"
    r = parse_text(text)
    assert r.primary is not None and r.primary.exception == "RuntimeError"
    assert len(r.primary.message) < MAX_MESSAGE_CHARS + 100
    assert r.primary.message.endswith("more characters cut]")
    assert max(len(x) for x in r.match_text.split("\n")) <= MAX_SCAN_LINE


def test_error_dense_logs_keep_a_bounded_window_set():
    """Every line an error (issue 14: 4M lines took 6.6 GB): windows stop merging at MAX_WINDOW, so
    what is kept and parsed is bounded whatever the log's size."""
    import io

    from assistant.parse.stream import AFTER, BEFORE, FIRST_WINDOWS, LAST_WINDOWS, MAX_WINDOW, parse_stream

    line = b"RuntimeError: CUDA error: an illegal memory access was encountered\n"
    data = line * (24_000_000 // len(line))  # 24 MB, past the whole-parse limit
    r = parse_stream(io.BytesIO(data))
    assert r.truncated and r.primary is not None and r.primary.message.startswith("CUDA error")
    bound = (FIRST_WINDOWS + LAST_WINDOWS) * (MAX_WINDOW + AFTER + BEFORE) + 4 * 1024 * 1024
    assert len(r.text) < bound < len(data)


def test_one_endless_line_past_the_whole_parse_limit_keeps_a_bounded_text():
    """A window inside one huge line starts near its error, not at the line's start (which made each
    of the many windows a multi-MB copy: 2.4 GB for a 46 MB line)."""
    import io

    from assistant.parse.stream import AFTER, BEFORE, FIRST_WINDOWS, LAST_WINDOWS, MAX_WINDOW, parse_stream

    data = b"RuntimeError: boom " + b"Error " * 3_500_000 + b"\n"  # 21 MB, one line
    r = parse_stream(io.BytesIO(data))
    assert r.primary is not None and r.primary.exception == "RuntimeError"
    assert len(r.text) < (FIRST_WINDOWS + LAST_WINDOWS) * (MAX_WINDOW + AFTER + BEFORE) + (4 << 20)
