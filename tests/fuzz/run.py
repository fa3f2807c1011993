"""Fuzz the whole pipeline: parse -> match -> report (every format) and triage, on hostile inputs.

    python -m tests.fuzz.run --n 2000                   # a quick look
    python -m tests.fuzz.run --chunk 7 --n 5000 --workers 2 --save tests/fuzz/results
                                                        # one chunk of the README figure
    python -m tests.fuzz.summary tests/fuzz/results     # the figure, over every saved chunk

About 110 ms per input on one idle core (explain 40 ms, triage 70 ms), so 100k inputs are
about 1.5 h on 2 idle cores: the README figure is run in chunks of distinct seeds (``--chunk``),
each saved as ``chunk-K.json`` (counts, a 1 ms histogram of per-input times, failures, slow
inputs, peak RSS, the git revision), and summed by ``tests.fuzz.summary``.

Every input goes through `explain` as the CLI runs it (bytes in, `parse_bytes`), the pasted-text
path (`parse_text`, the TUI's), the engine and the three renderers; every 64 inputs also go
through `triage` as one export (JSON, titles from the first line) with its JSON, markdown and CSV
output. Fails (exit 1) on any exception, on output that lets a terminal escape through, and on
any input slower than --limit seconds (explain) or a triage batch slower than 64 x --limit.
"""

from __future__ import annotations

import argparse
import base64
import json
import multiprocessing as mp
import os
import resource
import statistics
import subprocess
import sys
import time
import traceback
from pathlib import Path

from tests.fuzz.inputs import generate

BATCH = 64
#: what no rendered answer may contain: OSC / DCS / C1 introducers and a full reset (styling CSI is fine)
FORBIDDEN = ("\x1b]", "\x1bP", "\x1bc", "\x9b", "\x9d", "\x90", "\x07")


def check_explain(engine, text: str) -> None:
    """One input through explain's paths; raises AssertionError on a bad answer."""
    from assistant.parse import InputError, parse_bytes, parse_text
    from assistant.report.formats import FORMATS

    try:
        reports = [parse_bytes(text.encode("utf-8", "surrogatepass")), parse_text(text)]
    except InputError as exc:  # refused (empty, binary): a one-line message
        assert "\n" not in str(exc), str(exc)
        return
    for report in reports:
        d = engine.diagnose(report)
        for fmt, render in FORMATS.items():
            out = render(d)
            if fmt == "json":
                json.loads(out)
            bad = [f for f in FORBIDDEN if f in out]
            assert not bad, f"{fmt} output carries {bad!r}"


def check_triage(engine, texts: list[str], first: int) -> None:
    from assistant.triage.inputs import ExportError, parse_export
    from assistant.triage.render_csv import render_csv
    from assistant.triage.render_json import render_json
    from assistant.triage.render_markdown import render_markdown_report
    from assistant.triage.run import Options, triage

    issues = [
        {"number": first + k, "title": (t.splitlines() or [""])[0][:120], "body": t, "labels": []}
        for k, t in enumerate(texts)
    ]
    try:
        batch = parse_export(json.dumps(issues))
    except ExportError as exc:
        assert "\n" not in str(exc)
        return
    res = triage(batch, engine, Options(use_cache=False))
    json.loads(render_json(res))
    for out in (render_markdown_report(res), render_csv(res)):
        assert not [f for f in FORBIDDEN if f in out]


def _work(args: tuple[int, int, int, float, int, int]) -> dict:
    worker, start, n, limit, every, chunk = args
    from assistant.match.engine import Matcher
    from tests.conftest import oos_reports, shared_reports

    engine = Matcher.load(progress=False)
    reports = [t for _, t in shared_reports()] + oos_reports()
    gen = generate(1_000_003 * (worker + 1) + 7_919 * chunk, reports)
    times: list[float] = []
    by_kind: dict[str, float] = {}
    failures: list[str] = []
    slow: list[str] = []
    slow_inputs: list[str] = []  # kept (up to 20) so `tests.fuzz.summary --retime` can time them alone
    tri_max = 0.0
    pending: list[str] = []
    for i in range(n):
        kind, text = next(gen)
        t = time.perf_counter()
        try:
            check_explain(engine, text)
        except Exception:  # noqa: BLE001 - collected and reported
            failures.append(f"worker {worker} input {i} ({kind}): {traceback.format_exc(limit=3)[-600:]}")
        dt = time.perf_counter() - t
        times.append(dt)
        by_kind[kind] = max(by_kind.get(kind, 0.0), dt)
        if dt > limit:
            slow.append(f"worker {worker} input {i} ({kind}, {len(text)} chars): {dt:.2f} s")
            if len(slow_inputs) < 20:
                slow_inputs.append(text)
        pending.append(text)
        if every and (i + 1) % every == 0:
            print(
                f"worker {worker}: {i + 1}/{n} inputs, {len(failures)} failure(s), {len(slow)} slow",
                file=sys.stderr,
                flush=True,
            )
        if len(pending) == BATCH or i == n - 1:
            t = time.perf_counter()
            try:
                check_triage(engine, pending, start + i)
            except Exception:  # noqa: BLE001
                failures.append(f"worker {worker} triage batch ending {i}: {traceback.format_exc(limit=3)[-600:]}")
            dt = time.perf_counter() - t
            tri_max = max(tri_max, dt)
            if dt > BATCH * limit:
                slow.append(f"worker {worker} triage batch ending {i}: {dt:.2f} s")
            pending = []
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB
    return {
        "times": times,
        "by_kind": by_kind,
        "failures": failures,
        "slow": slow,
        "triage_max": tri_max,
        "rss_mb": rss_mb,
        "slow_inputs": slow_inputs,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=2000, help="inputs in all")
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--limit", type=float, default=2.0, help="seconds one input may take")
    ap.add_argument("--progress", type=int, default=0, help="print a progress line every N inputs per worker")
    ap.add_argument(
        "--chunk", type=int, default=0, help="seed block: chunks with different numbers see different inputs"
    )
    ap.add_argument("--save", type=Path, help="write the chunk's result to SAVE/chunk-K.json")
    a = ap.parse_args(argv)
    per = [a.n // a.workers + (1 if k < a.n % a.workers else 0) for k in range(a.workers)]
    jobs = [(k, sum(per[:k]), per[k], a.limit, a.progress, a.chunk) for k in range(a.workers)]
    t0 = time.perf_counter()
    if a.workers == 1:
        results = [_work(jobs[0])]
    else:
        with mp.get_context("spawn").Pool(a.workers) as pool:
            results = pool.map(_work, jobs)
    times = sorted(x for r in results for x in r["times"])
    failures = [f for r in results for f in r["failures"]]
    slow = [s for r in results for s in r["slow"]]
    kinds: dict[str, float] = {}
    for r in results:
        for k, v in r["by_kind"].items():
            kinds[k] = max(kinds.get(k, 0.0), v)
    print(
        f"{len(times)} inputs in {time.perf_counter() - t0:.0f} s: {len(failures)} failure(s), {len(slow)} over the limit; "
        f"explain per input p50 {statistics.median(times) * 1000:.0f} ms, p99 {times[int(0.99 * (len(times) - 1))] * 1000:.0f} ms, "
        f"max {times[-1]:.2f} s; slowest triage batch of {BATCH}: {max(r['triage_max'] for r in results):.2f} s"
    )
    print(
        f"peak RSS per worker: {max(r['rss_mb'] for r in results):.0f} MB (pid {os.getpid()} ran {a.workers} worker(s))"
    )
    print("slowest per kind: " + ", ".join(f"{k} {v:.2f} s" for k, v in sorted(kinds.items())))
    for line in failures[:20] + slow[:20]:
        print(line, file=sys.stderr)
    if a.save:
        save_chunk(a.save, a.chunk, a.workers, a.limit, time.perf_counter() - t0, results)
    return 1 if failures or slow else 0


def encode_input(text: str) -> dict[str, str]:
    """An input as base64 of its UTF-8 bytes, lone surrogates kept (`decode_input` reverses it)."""
    return {"utf8_b64": base64.b64encode(text.encode("utf-8", "surrogatepass")).decode("ascii")}


def decode_input(data: dict[str, str]) -> str:
    """The input saved by `encode_input`."""
    return base64.b64decode(data["utf8_b64"]).decode("utf-8", "surrogatepass")


def save_chunk(folder: Path, chunk: int, workers: int, limit: float, seconds: float, results: list[dict]) -> Path:
    """One chunk's result as JSON (a histogram of per-input times in whole ms, not every time)."""
    hist: dict[str, int] = {}
    for r in results:
        for t in r["times"]:
            key = str(int(t * 1000))
            hist[key] = hist.get(key, 0) + 1
    try:
        rev = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    except OSError:
        rev = ""
    doc = {
        "chunk": chunk,
        "inputs": sum(len(r["times"]) for r in results),
        "workers": workers,
        "limit_s": limit,
        "wall_s": round(seconds, 1),
        "git": rev,
        "max_s": round(max((max(r["times"], default=0.0) for r in results), default=0.0), 3),
        "triage_batch_max_s": round(max(r["triage_max"] for r in results), 3),
        "peak_rss_mb": round(max(r["rss_mb"] for r in results)),
        "failures": [f for r in results for f in r["failures"]],
        "slow": [x for r in results for x in r["slow"]],
        # base64 of the UTF-8 bytes (lone surrogates kept): JSON would join a lone surrogate pair
        "slow_inputs": [encode_input(x) for r in results for x in r.get("slow_inputs", [])],
        "ms_histogram": dict(sorted(hist.items(), key=lambda kv: int(kv[0]))),
    }
    folder.mkdir(parents=True, exist_ok=True)
    out = folder / f"chunk-{chunk}.json"
    out.write_text(json.dumps(doc, indent=1) + "\n")
    return out


if __name__ == "__main__":
    sys.exit(main())
