"""`trl-help tui [FILE]`: the interactive app (paste a traceback, read the diagnosis)."""

from __future__ import annotations

import argparse


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", nargs="?", metavar="FILE", help="log or traceback file to open and diagnose right away")
    p.add_argument("--kb", help="KB root (default: the bundled one)")


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from assistant.cli.errors import UsageError

    file = getattr(args, "file", None)
    if file is not None and not Path(file).is_file():
        raise UsageError(f"{file}: no such file")
    try:
        from assistant.tui.app import run as run_app
    except ImportError as exc:  # textual missing
        raise UsageError(f"the TUI needs textual: {exc}") from None
    return run_app(file, kb_root=getattr(args, "kb", None))
