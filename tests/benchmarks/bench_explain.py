"""Benchmark: `trl-help explain` on a 10k-line log in a cold process (p50 of N runs), and a warm
query with the index loaded (p50 over 50 queries).

    python tests/benchmarks/bench_explain.py [RUNS]   (default 5; the index must be built once)
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
sys.path.insert(0, ROOT)


def make_log(path: str) -> None:
    example = open(os.path.join(ROOT, "examples", "grpo-zero3-multirank.log")).read()
    noise = [
        f"[rank{i % 2}]: [INFO] step {i} loss=0.12 tokens/s=1200 {'x' * 40}"
        for i in range(10_000 - example.count("\n"))
    ]
    with open(path, "w") as fh:
        fh.write("\n".join(noise[:5000]) + "\n" + example + "\n".join(noise[5000:]) + "\n")


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    with tempfile.TemporaryDirectory() as d:
        log = os.path.join(d, "train.log")
        make_log(log)
        cmd = [sys.executable, "-m", "assistant.cli.main", "explain", log, "--format", "json"]
        subprocess.run(cmd, capture_output=True, check=True)  # make sure the index exists
        times = []
        for _ in range(runs):
            t = time.perf_counter()
            subprocess.run(cmd, capture_output=True, check=True)
            times.append(time.perf_counter() - t)
        print(
            f"cold explain on a 10k-line log: p50 {statistics.median(times):.2f} s (runs: {', '.join(f'{x:.2f}' for x in times)})"
        )
        from assistant.match.engine import Matcher
        from assistant.parse import parse_text

        m = Matcher.load(progress=False)
        report = parse_text(open(os.path.join(ROOT, "examples", "grpo-zero3-multirank.log")).read())
        warm = []
        for _ in range(50):
            t = time.perf_counter()
            m.diagnose(report)
            warm.append(time.perf_counter() - t)
        print(f"warm query (index loaded): p50 {statistics.median(warm) * 1000:.1f} ms")


if __name__ == "__main__":
    main()
