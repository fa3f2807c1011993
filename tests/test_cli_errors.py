"""One error taxonomy for every command: usage -> exit 2 with one line; internal fault -> exit 3
with one line pointing to --debug (which shows the traceback)."""

from __future__ import annotations

import subprocess
import sys

import pytest


def _cli(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    import os

    return subprocess.run(
        [sys.executable, "-m", "assistant.cli.main", *args],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, **(env or {})},
    )


@pytest.mark.parametrize(
    "args",
    [
        ("explain", "/nonexistent.log"),
        ("parse", "/nonexistent.log"),
        ("triage", "/nonexistent.json"),
        ("kb", "show", "no-such-case"),
        ("kb", "list", "--kb", "/nonexistent"),
        ("eval", "--kb", "/nonexistent"),
        ("kb", "validate", "/nonexistent"),
        ("probe", "no-such-case"),
        ("explain", "examples/grpo-zero3-multirank.log", "--top", "0"),
    ],
    ids=lambda a: "-".join(a[:2]),
)
def test_usage_errors_are_one_line_and_exit_2(args):
    res = _cli(*args)
    assert res.returncode == 2, res.stderr
    assert res.stderr.startswith("trl-help: error: ") and res.stderr.strip().count("\n") == 0
    assert "Traceback" not in res.stderr


def test_internal_fault_is_one_line_exit_3_and_debug_shows_the_traceback(monkeypatch, capsys):
    from assistant.cli.main import main
    from assistant.match.engine import Matcher

    def broken(*a, **k):
        raise RuntimeError("index file truncated\nsecond line")

    monkeypatch.setattr(Matcher, "load", classmethod(lambda cls, *a, **k: broken()))
    assert main(["explain", "examples/grpo-zero3-multirank.log"]) == 3
    err = capsys.readouterr().err
    assert err.strip().count("\n") == 0 and "RuntimeError: index file truncated" in err and "--debug" in err
    with pytest.raises(RuntimeError):
        main(["--debug", "explain", "examples/grpo-zero3-multirank.log"])


def test_no_command_module_imports_usage_error_from_main():
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    offenders = [
        str(p)
        for p in (root / "assistant").rglob("*.py")
        if "from assistant.cli.main import UsageError" in p.read_text()
    ]
    assert offenders == []
