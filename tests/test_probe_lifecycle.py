"""A probe run cleans up after itself and refuses a bad --model before anything runs (issue 14)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _cli(*args: str, env: dict | None = None, **kw) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "assistant.cli.main", *args],
        cwd=ROOT,
        env={**os.environ, **(env or {})},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **kw,
    )


@pytest.mark.parametrize("kind", ["file", "empty-dir"])
def test_bad_model_path_is_a_usage_error_before_any_phase(tmp_path, kind):
    target = tmp_path / "model"
    if kind == "file":
        target.write_text("not a model")
    else:
        target.mkdir()
    t0 = time.monotonic()
    p = _cli("probe", "trainer-tokenizer-renamed-processing-class", "--model", str(target))
    out, err = p.communicate(timeout=120)
    assert p.returncode == 2, (out, err)
    assert err.count("\n") == 1 and "--model" in err and "Traceback" not in err
    assert time.monotonic() - t0 < 60  # refused up front, not after the phases


def test_sigterm_removes_the_probe_temp_dir_and_stops_the_worker(tmp_path):
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    p = _cli("probe", "grpo-batch-not-divisible-by-num-generations", env={"TMPDIR": str(tmp)}, start_new_session=True)
    for _ in range(600):  # the session's temp dir appears when the probe starts
        if list(tmp.glob("trl-help-probe-*")):
            break
        time.sleep(0.05)
    else:
        p.kill()
        pytest.fail("the probe never started")
    time.sleep(1.0)  # let the worker start
    p.send_signal(signal.SIGTERM)
    _, err = p.communicate(timeout=60)
    assert p.returncode == 143, err[-2000:]
    assert "terminated" in err and "Traceback" not in err
    assert not list(tmp.glob("trl-help-probe-*")), list(tmp.iterdir())
    # no process of the run is left (the worker runs in its own session, so look for its environment)
    marker = f"TMPDIR={tmp}".encode()
    for _ in range(100):
        left = [d.name for d in Path("/proc").iterdir() if d.name.isdigit() and _has_env(d, marker)]
        if not left:
            break
        time.sleep(0.1)
    assert not left, f"processes of the run still alive: {left}"


def _has_env(proc: Path, marker: bytes) -> bool:
    try:
        return marker in (proc / "environ").read_bytes().split(b"\0")
    except OSError:
        return False
