"""Probe ids and the KB cases each one confirms (kept import-light: no torch here).

A probe is registered by id; its :class:`ProbeSpec` says which KB cases it confirms, what it
needs (packages, CUDA, number of processes) and what it preloads in the worker process. The
phases themselves live in the module named by ``module`` (see ``probes/_base.py`` for the
contract) and only ever run inside the worker subprocess.
"""

from __future__ import annotations

from dataclasses import dataclass, field

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
    "trainer-api-checks": "probes.api_checks",
    "peft-api-checks": "probes.api_checks",
    "transformers-api-checks": "probes.api_checks",
    "import-shadowing-check": "probes.api_checks",
    "grpo-data-checks": "probes.api_checks",
    "torchrun-port-check": "probes.api_checks",
}


@dataclass(frozen=True)
class ProbeSpec:
    id: str
    module: str
    cases: tuple[str, ...]
    title: str
    #: importable distributions the probe needs (checked without importing them)
    packages: tuple[str, ...] = ("torch", "transformers")
    cuda: bool = False
    processes: int = 1
    #: "cheap": config/tokenizer/meta-device checks (seconds); "train": real steps
    kind: str = "train"
    #: modules the worker imports once before forking the phases
    preload: tuple[str, ...] = ("torch", "transformers")
    #: extra phases run after baseline and treatment (shown with their role)
    extra_phases: tuple[str, ...] = field(default_factory=tuple)


SPECS: dict[str, ProbeSpec] = {
    s.id: s
    for s in (
        ProbeSpec(
            "lora-gradient-checkpointing-no-grad",
            PROBES["lora-gradient-checkpointing-no-grad"],
            ("lora-gradient-checkpointing-no-grad",),
            "LoRA + reentrant gradient checkpointing: loss without grad_fn",
            packages=("torch", "transformers", "peft"),
            preload=("torch", "transformers", "peft", "trl"),
            extra_phases=("mechanism",),
        ),
        ProbeSpec(
            "grpo-loss-zero",
            PROBES["grpo-loss-zero"],
            ("grpo-loss-zero-expected", "grpo-zero-advantage-identical-group-rewards"),
            "GRPO logged loss ~0: expected (grad_norm > 0) or constant group rewards (grad_norm 0)",
            packages=("torch", "transformers", "trl", "datasets"),
            preload=("torch", "transformers", "trl", "datasets", "peft"),
        ),
        ProbeSpec(
            "peft-vllm-weight-names",
            PROBES["peft-vllm-weight-names"],
            ("peft-vllm-base-model-weight-names",),
            "Weight names a vLLM engine would receive from a PeftModel",
            packages=("torch", "transformers", "peft"),
            preload=("torch", "transformers", "peft"),
            extra_phases=("strip-without-merge",),
        ),
        ProbeSpec(
            "grpo-zero3-unwrapped-model",
            PROBES["grpo-zero3-unwrapped-model"],
            ("grpo-zero3-unwrapped-model-no-optimizer",),
            "ZeRO-3 generation unwrap on the bare model: no attribute 'optimizer'",
            packages=("torch", "transformers", "trl", "datasets", "deepspeed"),
            preload=("torch", "transformers"),
        ),
        ProbeSpec(
            "ddp-reentrant-gc-mark-ready-twice",
            PROBES["ddp-reentrant-gc-mark-ready-twice"],
            ("ddp-reentrant-gc-mark-ready-twice",),
            "DDP + reentrant checkpointing + find_unused_parameters: marked ready twice",
            packages=("torch", "transformers", "peft"),
            processes=2,
            preload=("torch", "transformers"),
            extra_phases=("sft-default",),
        ),
        ProbeSpec(
            "tokenizer-checks",
            PROBES["tokenizer-checks"],
            ("tokenizer-missing-pad-token", "base-model-tokenizer-no-chat-template"),
            "Tokenizer: pad token and chat template",
            packages=("transformers",),
            kind="cheap",
            preload=("transformers",),
        ),
        ProbeSpec(
            "target-modules-check",
            PROBES["target-modules-check"],
            ("target-modules-wrong-names-for-arch",),
            "LoRA target_modules against the architecture's real linear layers (meta device)",
            packages=("torch", "transformers", "peft"),
            kind="cheap",
            preload=("torch", "transformers", "peft"),
        ),
        ProbeSpec(
            "grpo-batch-divisibility",
            PROBES["grpo-batch-divisibility"],
            ("grpo-batch-not-divisible-by-num-generations",),
            "GRPO batch size x processes divisible by num_generations",
            packages=("torch", "transformers", "trl", "datasets"),
            kind="cheap",
            preload=("torch", "transformers", "trl", "datasets"),
        ),
        ProbeSpec(
            "dtype-checks",
            PROBES["dtype-checks"],
            ("fp16-trainable-params-unscale", "lora-dtype-mismatch-float-bfloat16"),
            "Trainable-parameter dtypes: fp16 unscale and float/bfloat16 mismatch",
            packages=("torch", "transformers", "peft"),
            kind="cheap",
            preload=("torch", "transformers", "peft"),
        ),
        ProbeSpec(
            "kbit-prep-order",
            PROBES["kbit-prep-order"],
            ("kbit-prep-after-peft-freezes-adapters",),
            "prepare_model_for_kbit_training after get_peft_model freezes the adapters",
            packages=("torch", "transformers", "peft"),
            preload=("torch", "transformers", "peft"),
        ),
        ProbeSpec(
            "trainer-api-checks",
            PROBES["trainer-api-checks"],
            (
                "trainer-tokenizer-renamed-processing-class",
                "trl-sfttrainer-moved-renamed-args",
                "dpo-hyperparams-moved-to-config",
                "dpo-ref-model-with-peft-config",
                "peft-on-peft-peftmodel-plus-peft-config",
                "evaluation-strategy-removed-transformers-4.51",
                "grpo-config-args-removed-trl-0.28",
            ),
            "Trainer / config keyword arguments as the report passes them, against the installed trl",
            packages=("torch", "transformers", "trl", "peft", "datasets"),
            kind="cheap",
            preload=("torch", "transformers", "trl", "peft", "datasets"),
        ),
        ProbeSpec(
            "peft-api-checks",
            PROBES["peft-api-checks"],
            (
                "peftmodel-generate-positional-args",
                "adapter-config-missing-wrong-path-or-checkpoint",
                "peftmodel-from-pretrained-frozen-is-trainable",
                "prepare-model-for-int8-training-removed",
                "adapter-vocab-size-mismatch-resized-embeddings",
                "embedding-layers-saved-into-adapter",
                "state-dict-override-empty-adapter-443-bytes",
                "all-linear-unsupported-old-peft",
                "prefix-tuning-legacy-tuple-past-key-values",
                "adapter-config-newer-peft-keys",
                "task-type-mismatch-base-model-class",
                "target-modules-regex-inside-list",
                "adapter-config-removed-legacy-peft-keys",
            ),
            "PEFT calls as the report makes them: generate, from_pretrained, removed helpers",
            packages=("torch", "transformers", "peft"),
            kind="cheap",
            preload=("torch", "transformers", "peft"),
        ),
        ProbeSpec(
            "transformers-api-checks",
            PROBES["transformers-api-checks"],
            (
                "reward-model-config-pad-token-id-missing",
                "right-padding-in-rl-generation",
                "use-cache-with-gradient-checkpointing-warning",
                "torch-load-needs-torch-2.6",
                "trainer-label-names-peftmodel-warning",
                "collator-string-column-unable-to-create-tensor",
            ),
            "transformers calls as the report makes them: padding, caching, checkpoint loading, Trainer",
            packages=("torch", "transformers", "datasets"),
            kind="cheap",
            preload=("torch", "transformers"),
        ),
        ProbeSpec(
            "import-shadowing-check",
            PROBES["import-shadowing-check"],
            ("trl-shadowed-by-local-directory", "trl-optional-deps-misdetected-transformers-5.3"),
            "`from trl import ...` in a fresh interpreter (a local trl/ folder; optional-dependency checks)",
            packages=("trl",),
            kind="cheap",
            preload=(),
        ),
        ProbeSpec(
            "grpo-data-checks",
            PROBES["grpo-data-checks"],
            (
                "dataset-missing-prompt-column",
                "grpo-reward-func-missing-dataset-column",
                "reward-func-invalid-return-value",
            ),
            "GRPO dataset columns and reward-function contract (one real GRPOTrainer step)",
            packages=("torch", "transformers", "trl", "datasets"),
            preload=("torch", "transformers", "trl", "datasets"),
        ),
        ProbeSpec(
            "torchrun-port-check",
            PROBES["torchrun-port-check"],
            ("master-port-in-use",),
            "torchrun rendezvous on a master port that is already taken (gloo, 1 process)",
            packages=("torch",),
            kind="cheap",
            preload=("torch",),
        ),
    )
}

#: case id -> probe id (the KB's ``probe:`` field is authoritative; this is the fallback)
CASE_TO_PROBE: dict[str, str] = {c: s.id for s in SPECS.values() for c in s.cases}


def probe_ids() -> list[str]:
    return sorted(PROBES)
