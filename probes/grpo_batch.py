"""GRPO: (per-device batch × processes × grad. accumulation) must be divisible by num_generations.

baseline   GRPOConfig + GRPOTrainer built with your batch arguments (``--set``
           per_device_train_batch_size=…, num_generations=…, num_processes=…,
           gradient_accumulation_steps=…; defaults 1, 8, 1, 1: one GPU with batch 1 and trl's
           default 8 generations) → trl's divisibility ValueError.
treatment  the nearest valid combination (listed), built the same way.
The check is arithmetic on the global batch, so N processes are stood in for by one process with
an N-times larger per-device batch (same global batch, same check); no model weights are needed
(a tiny model stands in for yours).
"""

from __future__ import annotations

from math import gcd

from probes.contract import FunctionProbe, PhaseContext, PhaseOutput

DESCRIPTIONS = {
    "baseline": "GRPOConfig/GRPOTrainer with your batch arguments",
    "treatment": "GRPOConfig/GRPOTrainer with the nearest valid combination",
}

FALLBACK_SYMPTOMS = {
    "grpo-batch-not-divisible-by-num-generations": {
        "exceptions": ["ValueError"],
        "messages": [
            {"pattern": "must be evenly divisible by the number of generations per prompt"},
            {"pattern": r"generation_batch_size \(\d+\) must be divisible by num_generations \(\d+\)", "kind": "regex"},
        ],
    }
}

DEFAULTS = {
    "per_device_train_batch_size": 1,
    "num_generations": 8,
    "num_processes": 1,
    "gradient_accumulation_steps": 1,
}


def _args(ctx) -> dict:
    opts = dict(DEFAULTS)
    for k, v in ctx.options.items():
        if k in opts:
            opts[k] = int(v)
    return opts


def valid_combinations(per_device: int, num_generations: int, num_processes: int, ga: int) -> dict:
    glob = per_device * num_processes * ga
    gens = [g for g in range(2, glob + 1) if glob % g == 0]
    step = num_generations // gcd(num_generations, num_processes * ga)
    batches = [step * k for k in range(1, 5)]
    return {"global_batch": glob, "valid_num_generations": gens, "valid_per_device_train_batch_size": batches}


def treatment_args(a: dict) -> dict:
    combos = valid_combinations(
        a["per_device_train_batch_size"], a["num_generations"], a["num_processes"], a["gradient_accumulation_steps"]
    )
    fixed = dict(a)
    if combos["global_batch"] % a["num_generations"] != 0:
        fixed["per_device_train_batch_size"] = combos["valid_per_device_train_batch_size"][0]
    return fixed


def run_phase(phase: str, ctx: PhaseContext) -> PhaseOutput:
    from probes._grpo import run_grpo

    a = _args(ctx)
    if phase == "treatment":
        a = treatment_args(a)
    combos = valid_combinations(
        a["per_device_train_batch_size"], a["num_generations"], a["num_processes"], a["gradient_accumulation_steps"]
    )
    print(
        f"arguments {a}; valid num_generations for this global batch: {combos['valid_num_generations']}; "
        f"per-device batch sizes that work with num_generations={a['num_generations']}: "
        f"{combos['valid_per_device_train_batch_size']}",
        flush=True,
    )
    if ctx.model_source == "user":
        from probes.tiny import build_tiny

        ctx = ctx.replace(model_path=str(build_tiny(f"{ctx.workdir}/tiny")))
    out = run_grpo(
        ctx,
        ctx.workdir,
        train=False,
        per_device_train_batch_size=a["per_device_train_batch_size"] * a["num_processes"],
        num_generations=a["num_generations"],
        gradient_accumulation_steps=a["gradient_accumulation_steps"],
        label=phase,
    )
    _ = out
    detail = (
        f"per_device_train_batch_size={a['per_device_train_batch_size']} × {a['num_processes']} process(es) × "
        f"GA {a['gradient_accumulation_steps']}, num_generations={a['num_generations']}: GRPOTrainer builds"
    )
    print(detail, flush=True)
    return {"detail": detail, "info": {"arguments": a, **combos}}


def decide(case_id: str, phases: dict, env: dict):
    from probes.verdicts import default_decide

    verdict, notes = default_decide(phases, "not reproduced: these batch arguments are valid")
    t = phases["treatment"].info
    if t:
        notes.append(
            f"valid: per_device_train_batch_size={t['arguments']['per_device_train_batch_size']} with "
            f"num_generations={t['arguments']['num_generations']} on {t['arguments']['num_processes']} process(es); "
            f"for the original batch the valid num_generations are {_orig_valid(phases)}"
        )
    notes.append(
        f"{env.get('versions', {}).get('trl')}: trl >= 0.15 counts completions in "
        "per_device_train_batch_size; multi-process runs are checked as one process with the same global batch"
    )
    return verdict, notes


def _orig_valid(phases) -> str:
    import re

    text = phases["baseline"].output_tail
    m = re.search(r"valid num_generations for this global batch: (\[[^\]]*\])", text)
    if not m:
        return "?"
    return m.group(1) if m.group(1) != "[]" else "none (the global batch is smaller than 2)"


PROBE = FunctionProbe(
    descriptions=DESCRIPTIONS, fallback_symptoms=FALLBACK_SYMPTOMS, run_phase=run_phase, decide=decide
)
