"""prepare_model_for_kbit_training after get_peft_model freezes the adapters.

baseline   base → get_peft_model → prepare_model_for_kbit_training (the user's order, or
           prepare first with ``--set kbit_order=prepare-first``): count trainable LoRA tensors
           (0 = the adapters were frozen), print ``lora_A.default.weight: False`` lines.
treatment  base → prepare_model_for_kbit_training → get_peft_model: adapters trainable.

The base is loaded in 4-bit (bitsandbytes) on CUDA. Without CUDA or bitsandbytes it is loaded
unquantized: peft's own ``prepare_model_for_kbit_training`` still runs, and its freezing of every
parameter does not depend on quantization, but the 4-bit layers are not there, so a reproduction
is reported as ``reproduced-in-part``, never ``confirmed``.
"""

from __future__ import annotations

import importlib.util
from typing import Any

from probes._base import lora_targets
from probes.contract import FunctionProbe, PhaseContext, PhaseOutput

DESCRIPTIONS = {
    "baseline": "base model, get_peft_model, then prepare_model_for_kbit_training (the user's order)",
    "treatment": "base model, prepare_model_for_kbit_training, then get_peft_model",
}

FALLBACK_SYMPTOMS = {
    "kbit-prep-after-peft-freezes-adapters": {
        "messages": [{"pattern": r"lora_[AB]\.default\.weight\W{1,5}(requires_grad\W{1,3})?False", "kind": "regex"}],
        "log_patterns": [{"pattern": r"trainable params: 0 \|\| all params", "kind": "regex"}],
    }
}

#: orders a user's code may use; the failing one first
ORDERS = ("peft-first", "prepare-first")


def _order(ctx: PhaseContext, phase: str) -> str:
    if phase != "baseline":
        return "prepare-first"
    given = str(ctx.options.get("kbit_order", "peft-first")).strip().lower()
    if given not in ORDERS:
        raise ValueError(f"kbit_order must be one of {', '.join(ORDERS)}, got {given!r}")
    return given


def run_phase(phase: str, ctx: PhaseContext) -> PhaseOutput:
    import torch
    from peft import LoraConfig, get_peft_model, prepare_model_for_kbit_training
    from transformers import AutoModelForCausalLM

    quantize = bool(torch.cuda.is_available()) and importlib.util.find_spec("bitsandbytes") is not None
    kwargs: dict[str, Any] = {"trust_remote_code": ctx.trust_remote_code}
    if quantize:
        from transformers import BitsAndBytesConfig

        kwargs["quantization_config"] = BitsAndBytesConfig(
            load_in_4bit=True, bnb_4bit_compute_dtype=torch.bfloat16, bnb_4bit_quant_type="nf4"
        )
        kwargs["device_map"] = {"": 0}
    m: Any = AutoModelForCausalLM.from_pretrained(ctx.model_path, **kwargs)
    print(f"base loaded {'in 4-bit (bitsandbytes)' if quantize else 'unquantized (no CUDA/bitsandbytes)'}", flush=True)
    cfg = LoraConfig(r=8, target_modules=lora_targets(m), task_type="CAUSAL_LM")
    order = _order(ctx, phase)
    if order == "peft-first":
        m = get_peft_model(m, cfg)
        m = prepare_model_for_kbit_training(m)
    else:
        m = prepare_model_for_kbit_training(m)
        m = get_peft_model(m, cfg)
    lora = [(n, p.requires_grad) for n, p in m.named_parameters() if "lora_" in n]
    for n, rg in lora[:4]:
        print(f"{n}: {rg}", flush=True)
    trainable = sum(p.numel() for p in m.parameters() if p.requires_grad)
    total = sum(p.numel() for p in m.parameters())
    print(f"trainable params: {trainable:,d} || all params: {total:,d}", flush=True)
    frozen = all(not rg for _, rg in lora)
    return {
        "detected": frozen,
        "detail": f"{order}: {sum(rg for _, rg in lora)}/{len(lora)} LoRA tensors trainable",
        "info": {"trainable_params": trainable, "quantized": quantize, "order": order},
    }


def decide(case_id: str, phases: dict, env: dict):
    from probes.result import Verdict
    from probes.verdicts import default_decide

    verdict, notes = default_decide(phases)
    b = phases.get("baseline")
    order = (b.info or {}).get("order") if b is not None else None
    if order == "prepare-first" and verdict is Verdict.not_reproduced:
        notes.append("your order (prepare_model_for_kbit_training before get_peft_model) already avoids it")
    if b is not None and not (b.info or {}).get("quantized", False):
        notes.append(
            "the base was loaded unquantized (4-bit needs CUDA + bitsandbytes): peft's own "
            "prepare_model_for_kbit_training ran, but not on 4-bit layers"
        )
        if verdict is Verdict.confirmed:
            verdict = Verdict.reproduced_in_part
    return verdict, notes


PROBE = FunctionProbe(
    descriptions=DESCRIPTIONS, fallback_symptoms=FALLBACK_SYMPTOMS, run_phase=run_phase, decide=decide
)
