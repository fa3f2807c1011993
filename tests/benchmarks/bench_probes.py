"""Per-probe wall time on the built-in tiny model (run on demand, not in the suite):

    .venv/bin/python tests/benchmarks/bench_probes.py [--device cpu] [CASE ...]

Each probe runs in a fresh worker (imports included), as `trl-help probe CASE` would.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from probes.harness import run_probe  # noqa: E402
from probes.registry import SPECS  # noqa: E402

DEFAULT = [s.cases[0] for s in SPECS.values()] + ["grpo-zero-advantage-identical-group-rewards"]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("cases", nargs="*")
    ap.add_argument("--device", default="cpu")
    a = ap.parse_args()
    rows = []
    for cid in a.cases or DEFAULT:
        t0 = time.perf_counter()
        r = run_probe(cid, device=a.device, timeout=300)
        wall = time.perf_counter() - t0
        phases = ", ".join(
            f"{p.name} {p.seconds:.1f}s"
            for p in [r.baseline, r.treatment, *r.extra.values()]
            if p.status.value != "not-run"
        )
        rows.append((cid, r.verdict.value, wall, phases))
        print(f"{cid:48s} {r.verdict.value:16s} {wall:6.1f} s   ({phases})", flush=True)
    over = [r for r in rows if r[2] > 60]
    print(f"total {sum(r[2] for r in rows):.1f} s; over 60 s: {[r[0] for r in over] or 'none'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
