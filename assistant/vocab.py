"""The project's shared vocabulary: the libraries it knows (their other spellings and distribution
names), the settings and metric names the parser reads and cases may name, and the width of the
sentence embeddings. Parse, KB, match and probes all read these; nothing else keeps a copy.
Standard library only: the probe worker imports it in interpreters that have nothing else."""

from __future__ import annotations

#: Libraries a traceback frame, a version line or a KB range can name (canonical spelling).
PACKAGES: tuple[str, ...] = (
    "trl",
    "peft",
    "transformers",
    "accelerate",
    "deepspeed",
    "torch",
    "vllm",
    "bitsandbytes",
    "unsloth",
    "datasets",
    "flash-attn",
)

#: Other spellings seen in logs -> canonical name.
ALIASES: dict[str, str] = {"pytorch": "torch", "flash_attn": "flash-attn"}

#: Canonical name -> the distribution whose metadata carries the installed version.
DISTRIBUTIONS: dict[str, str] = {p: p.replace("-", "_") if p == "flash-attn" else p for p in PACKAGES}


def canonical_package(name: str) -> str | None:
    """The canonical spelling of a library name (any case), or None for an unknown one."""
    low = name.lower()
    low = ALIASES.get(low, low)
    return low if low in PACKAGES else None


#: Settings the parser reads from a log (`parse.environment`); a case's ``context.settings`` may name these only.
SETTINGS = (
    "gradient_checkpointing",
    "use_reentrant",
    "zero_stage",
    "deepspeed",
    "fsdp",
    "ddp",
    "use_vllm",
    "vllm_mode",
    "load_in_4bit",
    "load_in_8bit",
    "quantization",
    "lora",
    "bf16",
    "fp16",
    "num_generations",
    "per_device_train_batch_size",
    "gradient_accumulation_steps",
    "world_size",
    "master_port",
    "device_map_auto",
    "docker",
    "multimodal",
)

#: Canonical metric names the parser extracts from Trainer / TRL log lines; a case's
#: ``symptoms.metrics`` may name these only.
METRICS = (
    "loss",
    "grad_norm",
    "learning_rate",
    "reward",
    "reward_std",
    "frac_reward_zero_std",
    "kl",
    "clipped_ratio",
    "completion_length",
    "mean_completion_length",
    "entropy",
)


#: A logged metric name (or its last path part) -> its canonical name in `METRICS`.
METRIC_SPELLINGS: dict[str, str] = {
    "loss": "loss",
    "train_loss": "loss",
    "training loss": "loss",
    "grad_norm": "grad_norm",
    "learning_rate": "learning_rate",
    "reward": "reward",
    "reward_std": "reward_std",
    "frac_reward_zero_std": "frac_reward_zero_std",
    "kl": "kl",
    "clipped_ratio": "clipped_ratio",
    "completion_length": "completion_length",
    "mean_length": "mean_completion_length",
    "mean_completion_length": "mean_completion_length",
    "entropy": "entropy",
}

#: Width of the all-MiniLM-L6-v2 sentence embeddings (index vectors and queries).
EMBEDDING_DIM = 384
