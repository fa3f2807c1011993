"""Stress benchmark: peak RSS and wall time of `trl-help` on hostile input shapes (issue 14).

    python tests/benchmarks/bench_stress.py                 # default sizes (1 GiB of error lines …)
    python tests/benchmarks/bench_stress.py --scale 0.1     # everything 10x smaller (quick look)

Each shape is generated into a temporary directory and run in its own process; peak RSS is that
process's ru_maxrss. Target: <= 500 MB for every shape. Run on demand, not in CI.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET_MB = 500
ERROR_LINE = b"[rank0]: RuntimeError: CUDA error: an illegal memory access was encountered\n"
TQDM_LINE = b"\r 42%|####2     | 420/1000 [01:02<01:26,  6.71it/s, loss=0.123]"
ISSUE_LINE = "[rank0]: step {i} loss=0.12 tokens/s=1200 lr=1e-5 grad_norm=0.8 memory=40GB\n"
ISSUE_ERROR = "RuntimeError: element 0 of tensors does not require grad and does not have a grad_fn\n"


def _write_repeated(path: Path, unit: bytes, total: int) -> None:
    block = unit * max(1, (1 << 20) // len(unit))
    with path.open("wb") as f:
        written = 0
        while written < total:
            f.write(block)
            written += len(block)


def _issues(path: Path, n: int, size: int) -> None:
    lines = max(1, size // len(ISSUE_LINE.format(i=0)))
    body = "".join(ISSUE_LINE.format(i=i) for i in range(lines)) + ISSUE_ERROR
    with path.open("w") as f:
        f.write("[")
        for k in range(n):
            if k:
                f.write(",")
            f.write(json.dumps({"number": k + 1, "title": f"run {k} fails", "body": body, "labels": []}))
        f.write("]")


def _measure(args: list[str]) -> tuple[float, float, int]:
    """(seconds, peak RSS in MB, exit code) of `trl-help ARGS` in a fresh process."""
    probe = (
        "import resource, subprocess, sys, time\n"
        "t = time.perf_counter()\n"
        "rc = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL).returncode\n"
        "print(time.perf_counter() - t, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, rc)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe, sys.executable, "-m", "assistant.cli.main", *args],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    return float(out[0]), int(out[1]) / 1024, int(out[2])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--scale", type=float, default=1.0, help="multiply every size (0.1 for a quick run)")
    a = ap.parse_args()
    mb = 1 << 20
    with tempfile.TemporaryDirectory(prefix="trl-help-stress-") as d:
        root = Path(d)
        shapes = [
            (
                "error lines",
                "explain",
                root / "errors.log",
                lambda p: _write_repeated(p, ERROR_LINE, int(1024 * mb * a.scale)),
            ),
            (
                "tqdm noise",
                "explain",
                root / "tqdm.log",
                lambda p: _write_repeated(p, TQDM_LINE, int(1024 * mb * a.scale)),
            ),
            (
                "one huge line",
                "explain",
                root / "line.log",
                lambda p: p.write_bytes(b"RuntimeError: boom " + b"Error " * int(8_000_000 * a.scale) + b"\n"),
            ),
            ("issues", "triage", root / "issues.json", lambda p: _issues(p, int(10_000 * a.scale), 100 * 1024)),
        ]
        print(f"{'shape':16s} {'input':>10s} {'command':8s} {'seconds':>8s} {'peak RSS':>10s}  ok")
        for name, cmd, path, make in shapes:
            make(path)
            size = path.stat().st_size / mb
            extra = ["--no-cache", "--format", "json"] if cmd == "triage" else []
            secs, rss, rc = _measure([cmd, str(path), *extra])
            flag = "yes" if rss <= TARGET_MB else f"NO (> {TARGET_MB} MB)"
            print(f"{name:16s} {size:8.0f}MB {cmd:8s} {secs:8.1f} {rss:8.0f}MB  {flag}  (exit {rc})", flush=True)
            os.remove(path)
        time.sleep(0)


if __name__ == "__main__":
    main()
