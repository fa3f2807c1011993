"""Sum saved fuzz chunks (``tests.fuzz.run --save``) into the README figure.

python -m tests.fuzz.summary tests/fuzz/results
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def _quantile(hist: dict[int, int], total: int, q: float) -> int:
    """The per-input time in ms below which a fraction *q* of inputs fall (1 ms resolution)."""
    want, seen = q * total, 0
    for ms in sorted(hist):
        seen += hist[ms]
        if seen >= want:
            return ms
    return max(hist, default=0)


def summarise(folder: Path) -> dict:
    docs = [json.loads(p.read_text()) for p in sorted(folder.glob("chunk-*.json"))]
    chunks = [d["chunk"] for d in docs]
    if len(set(chunks)) != len(chunks):
        raise SystemExit(f"error: {folder}: a chunk number is saved twice")
    hist: dict[int, int] = {}
    for d in docs:
        for k, v in d["ms_histogram"].items():
            hist[int(k)] = hist.get(int(k), 0) + v
    total = sum(d["inputs"] for d in docs)
    return {
        "chunks": len(docs),
        "inputs": total,
        "failures": sum(len(d["failures"]) for d in docs),
        "slow": sum(len(d["slow"]) for d in docs),
        "p50_ms": _quantile(hist, total, 0.5),
        "p99_ms": _quantile(hist, total, 0.99),
        "max_s": max((d["max_s"] for d in docs), default=0.0),
        "triage_batch_max_s": max((d["triage_batch_max_s"] for d in docs), default=0.0),
        "peak_rss_mb": max((d["peak_rss_mb"] for d in docs), default=0),
        "revisions": sorted({d["git"] for d in docs}),
    }


def retime(folder: Path) -> list[tuple[str, int, float]]:
    """(chunk file, input length, seconds alone) for every saved slow input."""
    import time

    from assistant.match.engine import Matcher
    from tests.fuzz.run import check_explain, decode_input

    engine = Matcher.load(progress=False)
    out = []
    for p in sorted(folder.glob("chunk-*.json")):
        for data in json.loads(p.read_text()).get("slow_inputs", []):
            text = decode_input(data)
            check_explain(engine, text[:200])  # warm the process first
            t = time.perf_counter()
            check_explain(engine, text)
            out.append((p.name, len(text), time.perf_counter() - t))
    return out


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    again = "--retime" in args
    args = [a for a in args if a != "--retime"]
    folder = Path(args[0] if args else "tests/fuzz/results")
    if not folder.is_dir():
        print(f"error: {folder}: no such folder", file=sys.stderr)
        return 2
    s = summarise(folder)
    print(
        f"{s['inputs']} inputs in {s['chunks']} chunk(s): {s['failures']} failure(s), {s['slow']} over the limit; "
        f"explain per input p50 {s['p50_ms']} ms, p99 {s['p99_ms']} ms, max {s['max_s']:.2f} s; slowest triage "
        f"batch of 64: {s['triage_batch_max_s']:.2f} s; peak RSS per worker {s['peak_rss_mb']} MB; "
        f"revisions {', '.join(s['revisions'])}"
    )
    if again:
        timed = retime(folder)
        for name, n, sec in timed:
            print(f"  {name}: a slow input of {n} chars takes {sec:.2f} s alone")
        over = [t for t in timed if t[2] > 2.0]
        print(f"re-timed alone: {len(timed)} saved slow input(s), {len(over)} still over 2 s")
        return 1 if s["failures"] or over else 0
    return 1 if s["failures"] or s["slow"] else 0


if __name__ == "__main__":
    sys.exit(main())
