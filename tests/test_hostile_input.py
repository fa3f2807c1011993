"""Hostile or broken input (issue 14's reproductions): output that cannot attack its reader,
one bad item never sinks a batch, exit codes a pipeline can trust."""

from __future__ import annotations

import csv
import io
import json
import re
import subprocess
import sys

import pytest

from assistant.parse import parse_text
from assistant.parse.clean import strip_controls, valid_unicode
from assistant.report.safe_markdown import code_span, plain

TRACEBACK = (
    "Traceback (most recent call last):\n  File \"train.py\", line 1, in <module>\nKeyError: 'prompt' {payload}\n"
)


def _cli(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "assistant.cli.main", *args], input=stdin, capture_output=True, text=True, timeout=300
    )


@pytest.mark.parametrize(
    "seq",
    [
        "\x1b]0;pwned\x1b\\",
        "\x1b]52;c;ZWNobyBoaQ==\x07",
        "\x1b]8;;https://evil.example\x1b\\x\x1b]8;;\x1b\\",
        "\x1bc",
        "\x1bPq#0;2;0;0;0\x1b\\",
        "\x9b2J",
        "\x9d0;t\x9c",
        "\x07\x08",
    ],
    ids=["osc-st", "osc52", "osc8", "esc-c", "dcs", "c1-csi", "c1-osc", "c0"],
)
def test_control_sequences_never_reach_the_report(seq):
    report = parse_text(TRACEBACK.format(payload=seq))
    assert report.primary is not None
    assert not re.search(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]", report.primary.message + report.text)


def test_explain_text_output_carries_no_escape_sequence(tmp_path):
    log = tmp_path / "log.txt"
    log.write_text(TRACEBACK.format(payload="\x1b]52;c;ZWNobyBoaQ==\x07\x1bc\x1b]0;t\x1b\\"))
    res = _cli("explain", str(log))
    assert res.returncode == 0
    assert "\x1b" not in res.stdout and "\x9b" not in res.stdout


def test_markdown_keeps_user_text_inert():
    payload = "`</details><img src=x> @team [x](https://evil.example)"
    span = code_span(f"KeyError: {payload}")
    fence = re.match(r"`+", span).group()
    inner = span[len(fence) : -len(fence)]
    assert span.endswith(fence) and payload in inner
    assert max(len(r) for r in re.findall(r"`+", inner)) < len(fence)
    prose = plain(payload + " | next")
    assert "<" not in prose and "@team" not in prose and "\\|" in prose and "\\[" in prose


def test_explain_markdown_wraps_the_payload_in_code(tmp_path):
    log = tmp_path / "log.txt"
    log.write_text(TRACEBACK.format(payload="`</details><img src=x> @team"))
    res = _cli("explain", str(log), "--format", "markdown")
    assert res.returncode == 0
    for line in res.stdout.splitlines():
        if "<img" in line:  # only ever inside a code span longer than the backtick it carries
            assert "``" in line, line


def _issues(tmp_path, rows) -> str:
    path = tmp_path / "issues.json"
    path.write_text(json.dumps(rows))
    return str(path)


def test_lone_surrogate_does_not_sink_the_batch(tmp_path):
    assert valid_unicode("a\ud83db") == "a\ufffdb"
    rows = [
        {
            "number": 1,
            "title": "crash \ud83d",
            "body": "RuntimeError: boom \ud83d",
            "url": "https://github.com/o/r/issues/1",
        },
        {
            "number": 2,
            "title": "KeyError",
            "body": TRACEBACK.format(payload=""),
            "url": "https://github.com/o/r/issues/2",
        },
    ]
    res = _cli("triage", _issues(tmp_path, rows), "--format", "json")
    assert res.returncode == 0, res.stderr[-500:]
    out = json.loads(res.stdout)
    assert sorted(i["number"] for i in out["issues"]) == [1, 2]


def test_csv_cells_cannot_be_formulas(tmp_path):
    rows = [
        {
            "number": 7,
            "title": '=HYPERLINK("https://evil.example","x")',
            "body": "@SUM(1)",
            "url": "https://github.com/o/r/issues/7",
        }
    ]
    res = _cli("triage", _issues(tmp_path, rows), "--format", "csv")
    assert res.returncode == 0
    for row in csv.reader(io.StringIO(res.stdout)):
        assert not any(c.startswith(("=", "+", "-", "@")) for c in row), row


def test_strip_controls_keeps_text_and_layout():
    assert strip_controls("a\tb\nc\x1b[31md\x1b[0m") == "a\tb\ncd"


def test_explain_into_head_exits_quietly():
    proc = subprocess.Popen(
        [sys.executable, "-m", "assistant.cli.main", "explain", "examples/grpo-zero3-multirank.log"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None
    proc.stdout.readline()
    proc.stdout.close()  # the reader goes away, as `| head -1` does
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err.decode()[-500:]
    assert b"Traceback" not in err


def test_kb_list_on_a_missing_kb_is_a_usage_error():
    res = _cli("kb", "list", "--kb", "/nonexistent")
    assert res.returncode == 2
    assert res.stderr.strip().count("\n") == 0 and "not a KB" in res.stderr


def test_a_named_pipe_without_a_writer_is_an_error_not_a_hang(tmp_path, monkeypatch):
    import os
    import threading
    import time

    import assistant.limits as limits
    from assistant.parse import InputError, parse_file

    fifo = tmp_path / "log.fifo"
    os.mkfifo(fifo)
    monkeypatch.setattr(limits, "FIFO_WRITER_WAIT_S", 0.5)
    t0 = time.monotonic()
    try:
        parse_file(fifo)
    except InputError as exc:
        assert "no writer" in str(exc)
    else:
        raise AssertionError("a FIFO with no writer was read as if it had input")
    assert time.monotonic() - t0 < 5
    # with a writer (even one that starts a little later), it is read like a file
    msg = "RuntimeError: element 0 of tensors does not require grad and does not have a grad_fn\n"
    monkeypatch.setattr(limits, "FIFO_WRITER_WAIT_S", 10.0)

    def write() -> None:
        time.sleep(0.3)
        with open(fifo, "w") as fh:
            fh.write(msg)

    threading.Thread(target=write, daemon=True).start()
    report = parse_file(fifo)
    assert report.primary is not None and "does not require grad" in report.primary.message
