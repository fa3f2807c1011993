"""CLI contract: fast --help/--version, one-line errors with exit 2, parse output shape."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys

import pytest

from tests.conftest import shared_reports


def _cli(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "assistant.cli.main", *args], capture_output=True, input=stdin)


def test_help_and_version_import_nothing_heavy():
    code = (
        "import sys\nfrom assistant.cli.main import main\n"
        "for argv in (['--version'], ['--help'], ['explain', '--help'], ['probe', '--help']):\n"
        "    try:\n        main(argv)\n    except SystemExit:\n        pass\n"
        "heavy = [m for m in ('torch', 'transformers', 'sentence_transformers', 'trl', 'peft', 'faiss', 'onnxruntime') if m in sys.modules]\n"
        "print('HEAVY', heavy)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout
    assert "HEAVY []" in out


@pytest.mark.parametrize(
    "content,expect",
    [
        (b"", "empty"),
        (b"\x00\xff\x00\x01" * 64, "binary"),
    ],
)
@pytest.mark.parametrize("command", ["parse", "explain"])
def test_unusable_file_one_line_exit_2(tmp_path, content, expect, command):
    f = tmp_path / "log.txt"
    f.write_bytes(content)
    res = _cli(command, str(f))
    assert res.returncode == 2
    err = res.stderr.decode()
    assert err.count("\n") == 1 and expect in err and str(f) in err


def test_missing_file_and_directory(tmp_path):
    for target in (tmp_path / "nope.txt", tmp_path):
        res = _cli("parse", str(target))
        assert res.returncode == 2 and res.stderr.decode().count("\n") == 1


def test_parse_json_shape_from_stdin_and_gzip(tmp_path):
    case_id, text = next((c, t) for c, t in shared_reports() if c == "ddp-reentrant-gc-mark-ready-twice")
    res = _cli("parse", "-", "--format", "json", stdin=text.encode())
    assert res.returncode == 0, res.stderr
    data = json.loads(res.stdout)
    for key in ("primary", "chain", "metrics", "environment", "settings"):
        assert key in data
    assert data["primary"]["exception"] == "RuntimeError"
    assert {"exception", "message", "rank", "frames"} <= set(data["primary"])
    gz = tmp_path / "log.txt.gz"
    gz.write_bytes(gzip.compress(text.encode()))
    again = json.loads(_cli("parse", str(gz), "--format", "json").stdout)
    assert again["primary"] == data["primary"]


def test_parse_no_error_gives_null_primary():
    res = _cli("parse", "-", "--format", "json", stdin=b"all good, training finished\n")
    assert json.loads(res.stdout)["primary"] is None


def test_kb_new_writes_into_the_kb_it_was_given_not_the_cwd(tmp_path):
    import os

    body = 'Traceback (most recent call last):\n  File "t.py", line 1, in <module>\nValueError: boom\n'
    issues = tmp_path / "issues.json"
    issues.write_text(json.dumps([{"number": 7, "title": "ValueError boom in SFT", "body": body, "labels": []}]))
    kb = tmp_path / "mykb"
    (kb / "cases").mkdir(parents=True)
    cwd = tmp_path / "elsewhere"
    cwd.mkdir()
    res = subprocess.run(
        [sys.executable, "-m", "assistant.cli.main", "kb", "new", "--from-issue", "7", "--issues", str(issues)]
        + ["--kb", str(kb)],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": os.getcwd()},
    )
    assert res.returncode == 0, res.stderr
    assert len(list((kb / "cases").glob("*.yaml"))) == 1
    assert not (cwd / "kb").exists()


def test_output_piped_into_head_exits_0_silently():
    """`trl-help parse big.log | head -1`: the reader closes the pipe early; no traceback, exit 0."""
    text = "\n".join(f"step {i}: loss={i / 7:.4f}" for i in range(50_000)) + "\nValueError: boom\n"
    proc = subprocess.Popen(
        [sys.executable, "-m", "assistant.cli.main", "parse", "-", "--format", "json"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    proc.stdin.write(text.encode())
    proc.stdin.close()
    proc.stdout.readline()
    proc.stdout.close()  # like head -1
    err = proc.stderr.read()
    assert proc.wait(timeout=120) == 0, err
    assert b"Traceback" not in err and b"BrokenPipe" not in err
