"""Versions installed in this environment (for `--installed`), without importing the packages."""

from __future__ import annotations

from importlib import metadata

DISTS = {
    "trl": "trl",
    "transformers": "transformers",
    "peft": "peft",
    "deepspeed": "deepspeed",
    "accelerate": "accelerate",
    "vllm": "vllm",
    "torch": "torch",
    "bitsandbytes": "bitsandbytes",
    "unsloth": "unsloth",
    "datasets": "datasets",
    "flash-attn": "flash_attn",
}


def installed_versions() -> dict[str, str]:
    out = {}
    for pkg, dist in DISTS.items():
        try:
            out[pkg] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            continue
    return out
