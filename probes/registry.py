"""Probe ids and the KB cases each one confirms (kept import-light: no torch here)."""

from __future__ import annotations

#: probe id -> module under ``probes`` implementing it.
PROBES: dict[str, str] = {
    "lora-gradient-checkpointing-no-grad": "probes.lora_gc_no_grad",
    "grpo-loss-zero": "probes.grpo_loss_zero",
    "peft-vllm-weight-names": "probes.peft_vllm_names",
    "grpo-zero3-unwrapped-model": "probes.grpo_zero3_unwrapped",
    "ddp-reentrant-gc-mark-ready-twice": "probes.ddp_reentrant_gc",
    "tokenizer-checks": "probes.tokenizer_checks",
    "target-modules-check": "probes.target_modules",
    "grpo-batch-divisibility": "probes.grpo_batch",
    "dtype-checks": "probes.dtype_checks",
    "kbit-prep-order": "probes.kbit_prep_order",
}


def probe_ids() -> list[str]:
    return sorted(PROBES)
