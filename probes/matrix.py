"""Run probes and compare verdicts with expectations (used by the nox version matrix).

    python -m probes.matrix lora-gradient-checkpointing-no-grad=confirmed [CASE=VERDICT ...] [--json OUT]

Exit status 1 when a verdict differs from its expectation.
"""

from __future__ import annotations

import argparse
import json
import sys
import time


def main(argv: list[str] | None = None) -> int:
    from probes.harness import ProbeSession, resolve
    from probes.worker import versions

    ap = argparse.ArgumentParser(prog="python -m probes.matrix")
    ap.add_argument("expect", nargs="+", metavar="CASE=VERDICT")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--timeout", type=float, default=300)
    ap.add_argument("--json", metavar="OUT")
    a = ap.parse_args(argv)
    pairs = [e.split("=", 1) for e in a.expect]
    preload: list[str] = []
    for cid, _ in pairs:
        preload += list(resolve(cid)[1].preload)
    rows, bad = [], 0
    print(f"stack: {json.dumps({k: v for k, v in versions().items() if v})}", flush=True)
    with ProbeSession(preload=preload, on_status=lambda s: print(f"[probe] {s}", flush=True)) as s:
        for cid, want in pairs:
            t0 = time.perf_counter()
            r = s.run(cid, device=a.device, timeout=a.timeout)
            ok = r.verdict.value == want
            bad += not ok
            row = {
                "case": cid,
                "expected": want,
                "verdict": r.verdict.value,
                "ok": ok,
                "seconds": round(time.perf_counter() - t0, 1),
                "baseline": {
                    "reproduced": r.baseline.reproduced,
                    "evidence": r.baseline.evidence[:2],
                    "detail": r.baseline.detail[:300],
                },
                "treatment": {"reproduced": r.treatment.reproduced, "detail": r.treatment.detail[:300]},
                "notes": r.notes,
            }
            rows.append(row)
            print(
                f"{'OK ' if ok else 'BAD'} {cid}: {r.verdict.value} (expected {want}) in {row['seconds']} s", flush=True
            )
            for n in r.notes:
                print(f"    • {n}", flush=True)
            if not ok:
                print(r.baseline.output_tail[-3000:], flush=True)
                print(r.treatment.output_tail[-3000:], flush=True)
    if a.json:
        with open(a.json, "w") as fh:
            json.dump({"stack": versions(), "results": rows}, fh, indent=2)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
