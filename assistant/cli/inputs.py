"""Reading FILE|- for the commands: one-line errors for unusable input."""

from __future__ import annotations

import sys
from pathlib import Path

from assistant.parse import InputError, Report, parse_file, parse_stream


def read_report(path: str) -> Report:
    """Parse FILE, or stdin for '-'; raise UsageError with one line on bad input."""
    from assistant.cli.errors import UsageError

    try:
        if path == "-":
            if sys.stdin is None or sys.stdin.isatty():
                raise UsageError("reading from stdin: pipe a log in or pass a FILE")
            return parse_stream(sys.stdin.buffer)
        return parse_file(Path(path))
    except InputError as exc:
        name = "stdin" if path == "-" else path
        msg = str(exc)
        raise UsageError(msg if msg.startswith(name) else f"{name}: {msg}") from None
    except MemoryError:
        raise UsageError(f"{path}: input too large to parse in memory") from None
