"""Run every probe on a model of real size, on CUDA: verdicts and times for probes/README.md.

On demand, and whenever a GPU machine is available (no hub there either: the model is a
Qwen2.5-0.5B-shaped config with random weights, saved locally and passed by path as a user's
model would be; kbit-prep-order loads it in 4-bit when bitsandbytes and CUDA are present)::

    python -m tests.gpu.run_probes --device cuda --out gpu-probes.json
    python -m tests.gpu.run_probes --shape tiny --device cpu --only tokenizer-missing-pad-token   # smoke run

Prints one markdown row per case (case, probe, verdict, seconds, first note) and writes the
results as JSON. Exit status: 0 when every probe produced a verdict other than ``error``, 1
otherwise, 2 for bad arguments (e.g. ``--device cuda`` without CUDA).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

#: Qwen2.5-0.5B's published architecture (config.json of Qwen/Qwen2.5-0.5B), random weights.
QWEN25_05B: dict[str, Any] = dict(
    hidden_size=896,
    intermediate_size=4864,
    num_hidden_layers=24,
    num_attention_heads=14,
    num_key_value_heads=2,
    max_position_embeddings=32768,
    rope_theta=1_000_000.0,
    rms_norm_eps=1e-6,
    tie_word_embeddings=True,
    vocab_size=151_936,
)


def build_model(shape: str, outdir: Path) -> Path:
    """Save a model of *shape* ("qwen2.5-0.5b" in bf16, or "tiny") with the built-in tokenizer."""
    from probes.tiny import build_tiny

    if shape == "tiny":
        return build_tiny(outdir)
    import torch

    return build_tiny(outdir, overrides=QWEN25_05B, dtype=torch.bfloat16)


def cases(only: list[str] | None) -> list[str]:
    from probes.registry import CASE_TO_PROBE

    if not only:
        return sorted(CASE_TO_PROBE)
    unknown = [c for c in only if c not in CASE_TO_PROBE]
    if unknown:
        raise SystemExit(f"run_probes: no probe for {', '.join(unknown)} (see trl-help probe --list)")
    return only


def run(case_ids: list[str], model: Path, device: str, timeout: float) -> list[dict[str, Any]]:
    from probes.harness import run_probe
    from probes.registry import CASE_TO_PROBE

    rows = []
    for case in case_ids:
        t0 = time.perf_counter()
        res = run_probe(case, model=str(model), device=device, timeout=timeout)
        verdict, seconds, note = str(res.verdict.value), round(time.perf_counter() - t0, 1), (res.notes or [""])[0]
        rows.append(
            {
                "case": case,
                "probe": CASE_TO_PROBE[case],
                "verdict": verdict,
                "seconds": seconds,
                "note": note,
                "environment": res.environment,
            }
        )
        print(f"| {case} | {CASE_TO_PROBE[case]} | {verdict} | {seconds} | {note[:120]} |", flush=True)
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tests.gpu.run_probes", description=__doc__.split("\n")[0])
    ap.add_argument("--shape", choices=["qwen2.5-0.5b", "tiny"], default="qwen2.5-0.5b")
    ap.add_argument("--device", choices=["cuda", "cpu", "auto"], default="cuda")
    ap.add_argument("--only", nargs="*", metavar="CASE", help="case ids (default: every case with a probe)")
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds per phase")
    ap.add_argument("--out", type=Path, help="write the results as JSON here")
    args = ap.parse_args(argv)

    import torch

    if args.device == "cuda" and not torch.cuda.is_available():
        print(
            "run_probes: --device cuda but torch sees no CUDA device (use --device cpu for a smoke run)",
            file=sys.stderr,
        )
        return 2
    selected = cases(args.only)
    with tempfile.TemporaryDirectory(prefix="trl-help-gpu-") as tmp:
        t0 = time.perf_counter()
        model = build_model(args.shape, Path(tmp) / "model")
        built = round(time.perf_counter() - t0, 1)
        gpu = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "none"
        print(f"model {args.shape} built in {built} s; device {args.device}; GPU {gpu}", flush=True)
        print("| case | probe | verdict | s | note |\n|---|---|---|---:|---|", flush=True)
        rows = run(selected, model, args.device, args.timeout)
    if args.out:
        doc = {"shape": args.shape, "device": args.device, "gpu": gpu, "model_build_s": built, "results": rows}
        args.out.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    return 0 if all(r["verdict"] != "error" for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
