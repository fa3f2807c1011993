"""Benchmark: stream-parse a generated ~1 GB multi-rank training log; prints time and peak RSS.

python tests/benchmarks/bench_parse.py [SIZE_MB]   (default 1024)
"""

from __future__ import annotations

import os
import resource
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))


def generate(path: str, size_mb: int) -> None:
    block = []
    for i in range(2000):
        block.append(f"[rank{i % 4}]: [INFO|trainer.py:2300] step {i} tokens/s=1234.5 mem=23.1GB\n")
        block.append(f" {i % 100:3d}%|#####     | {i}/20000 [01:00<10:00,  1.2it/s]\r {i % 100:3d}%|######    |\n")
        if i % 50 == 0:
            block.append(
                "{'loss': 0.1234, 'grad_norm': 0.52, 'learning_rate': 1e-06, 'reward': 0.4, 'reward_std': 0.2, 'epoch': 0.01}\n"
            )
    data = "".join(block).encode()
    err = (
        b"[rank0]: Traceback (most recent call last):\n"
        b'[rank0]:   File "/opt/venv/lib/python3.11/site-packages/trl/models/utils.py", line 150, in remove_hooks\n'
        b"[rank0]:     optimizer_offload = model.optimizer.parameter_offload\n"
        b"[rank0]: AttributeError: 'Qwen2ForCausalLM' object has no attribute 'optimizer'\n"
    )
    with open(path, "wb") as fh:
        fh.write(b"- TRL version: 0.14.0\n- Transformers version: 4.48.3\n")
        written = 0
        target = size_mb << 20
        while written < target:
            fh.write(data)
            written += len(data)
            if target - written < len(data) * 2 and err:
                fh.write(err)
                err = b""


def main() -> None:
    size_mb = int(sys.argv[1]) if len(sys.argv) > 1 else 1024
    from assistant.parse import parse_file

    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "train.log")
        generate(path, size_mb)
        real = os.path.getsize(path)
        base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        t = time.perf_counter()
        report = parse_file(path)
        dt = time.perf_counter() - t
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    assert report.primary is not None and report.primary.exception == "AttributeError", report.primary
    print(
        f"parsed {real / 2**20:.0f} MiB in {dt:.1f} s ({real / 2**20 / dt:.0f} MiB/s); "
        f"peak RSS {peak / 1024:.0f} MiB (before parse {base / 1024:.0f} MiB); "
        f"primary={report.primary.exception}; metric rows kept={len(report.metrics)}"
    )


if __name__ == "__main__":
    main()
