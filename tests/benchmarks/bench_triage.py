"""Benchmark: `trl-help triage` on 1,000 synthetic issues built from the shared reports.

    python tests/benchmarks/bench_triage.py [--n 1000] [--distinct]

Issues are the real reports kept in the KB (positive fixtures and the
out-of-scope reports) in new clothes, as a tracker sees them: varied titles, some with a
`trl env` block, some with prose around the paste. Reports repeat (1,000 issues from ~240
reports), as known failures do in a real tracker. `--distinct` uses each report once instead
(no repeated error text at all: the worst case for the embedding memo).

Prints, with the matcher already loaded ("warm" process, cold triage cache):
issues/s on the batch, then issues/s of a re-run on the same export (warm triage cache), and
the peak RSS of the process. Target: >= 50 issues/s warm on the 2-core machine.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

TITLES = [
    "{exc} when training with {trainer}",
    "[Bug] {trainer} crashes: {exc}",
    "{exc}",
    "Training fails after upgrading",
    "Help! {trainer} + LoRA not working",
    "{exc} on multi-GPU",
    "Error during trainer.train()",
]
PROSE = [
    "I'm fine-tuning a 7B model and hit this:",
    "Same code worked last week.",
    "Any idea what I'm doing wrong?",
    "Full log below.",
    "Steps to reproduce: run the example script with my dataset.",
]
ENV = (
    "- Platform: Linux-5.15.0-x86_64-with-glibc2.35\n- Python version: 3.11.9\n- TRL version: {trl}\n"
    "- PyTorch version: {torch}\n- Transformers version: {tf}\n- Accelerate version: {acc}\n- PEFT version: {peft}\n"
)


def reports() -> list[str]:
    from tests.conftest import oos_reports, shared_reports

    return [t for _, t in shared_reports()] + oos_reports()


def synthetic(n: int, distinct: bool, seed: int = 0) -> list[dict]:
    rng = random.Random(seed)
    base = reports()
    texts = base[:n] if distinct else [base[i % len(base)] for i in range(n)]
    issues = []
    for k, text in enumerate(texts, 1):
        exc = next((ln.split(":")[0].strip() for ln in text.splitlines() if "Error" in ln.split(":")[0]), "error")[:40]
        title = rng.choice(TITLES).format(exc=exc, trainer=rng.choice(["GRPOTrainer", "SFTTrainer", "DPOTrainer"]))
        body = text
        if rng.random() < 0.5:
            body = rng.choice(PROSE) + "\n\n```\n" + body + "\n```\n"
        if rng.random() < 0.4:
            body += "\n\n### System Info\n\n" + ENV.format(
                trl=rng.choice(["0.14.0", "0.19.1", "0.23.0"]),
                torch=rng.choice(["2.4.1", "2.6.0", "2.8.0"]),
                tf=rng.choice(["4.46.3", "4.52.4", "4.56.1"]),
                acc=rng.choice(["1.0.1", "1.7.0"]),
                peft=rng.choice(["0.13.2", "0.15.2", "0.17.0"]),
            )
        issues.append({"number": k, "title": title, "body": body, "labels": [], "url": None, "createdAt": None})
    return issues


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--distinct", action="store_true", help="every report once (no repeats)")
    a = ap.parse_args()

    from assistant.match.engine import Matcher
    from assistant.triage.inputs import parse_export
    from assistant.triage.run import Options, triage

    issues = synthetic(a.n, a.distinct)
    t = time.perf_counter()
    matcher = Matcher.load(progress=False)
    load_s = time.perf_counter() - t
    batch = parse_export(json.dumps(issues), "synthetic.json")
    with tempfile.TemporaryDirectory() as d:
        opts = Options(cache_dir=Path(d))
        t = time.perf_counter()
        res = triage(batch, matcher, opts)
        cold = time.perf_counter() - t
        t = time.perf_counter()
        res2 = triage(batch, matcher, opts)
        warm_cache = time.perf_counter() - t
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    n = len(res.issues)
    print(
        f"issues: {n} ({'distinct reports' if a.distinct else f'from {len(reports())} reports'}), "
        f"matched {res.stats['matched']}, clusters {len(res.clusters)}, new categories {len(res.new_categories)}"
    )
    print(f"matcher load: {load_s:.1f} s (not counted)")
    print(f"warm process, cold cache: {n / cold:.1f} issues/s ({cold:.1f} s)")
    print(
        f"re-run, warm cache:       {n / warm_cache:.1f} issues/s ({warm_cache:.2f} s, {res2.stats['from_cache']} from cache)"
    )
    print(f"peak RSS: {rss:.0f} MiB")


if __name__ == "__main__":
    main()
