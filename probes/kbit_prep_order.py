"""prepare_model_for_kbit_training after get_peft_model freezes the adapters (needs CUDA +
bitsandbytes: skipped on CPU with that reason).

baseline   4-bit base → get_peft_model → prepare_model_for_kbit_training: count trainable LoRA
           tensors (0 = the adapters were frozen), print ``lora_A.default.weight: False`` lines.
treatment  4-bit base → prepare_model_for_kbit_training → get_peft_model: adapters trainable.
"""

from __future__ import annotations

from typing import Any

from probes._base import lora_targets
from probes.contract import FunctionProbe, PhaseContext, PhaseOutput

DESCRIPTIONS = {
    "baseline": "4-bit base, get_peft_model, then prepare_model_for_kbit_training",
    "treatment": "4-bit base, prepare_model_for_kbit_training, then get_peft_model",
}

FALLBACK_SYMPTOMS = {
    "kbit-prep-after-peft-freezes-adapters": {
        "messages": [{"pattern": r"lora_[AB]\.default\.weight\W{1,5}(requires_grad\W{1,3})?False", "kind": "regex"}],
        "log_patterns": [{"pattern": r"trainable params: 0 \|\| all params", "kind": "regex"}],
    }
}


def skip_reason(env: dict) -> str | None:
    if not env.get("cuda_available"):
        return "needs a CUDA GPU: bitsandbytes 4-bit layers do not run on this CPU-only machine"
    return None


def run_phase(phase: str, ctx: PhaseContext) -> PhaseOutput:
    import torch
    from peft import LoraConfig, get_peft_model, prepare_model_for_kbit_training
    from transformers import AutoModelForCausalLM, BitsAndBytesConfig

    q = BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_compute_dtype=torch.bfloat16, bnb_4bit_quant_type="nf4")
    m: Any = AutoModelForCausalLM.from_pretrained(
        ctx.model_path, quantization_config=q, device_map={"": 0}, trust_remote_code=ctx.trust_remote_code
    )
    cfg = LoraConfig(r=8, target_modules=lora_targets(m), task_type="CAUSAL_LM")
    if phase == "baseline":
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
        "detail": f"{sum(rg for _, rg in lora)}/{len(lora)} LoRA tensors trainable",
        "info": {"trainable_params": trainable},
    }


PROBE = FunctionProbe(
    descriptions=DESCRIPTIONS, fallback_symptoms=FALLBACK_SYMPTOMS, skip_reason=skip_reason, run_phase=run_phase
)
