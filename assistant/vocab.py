"""The project's shared vocabulary: the libraries it knows, their other spellings and their
distribution names, and the width of the sentence embeddings. Parse, KB, match and probes all
read these; nothing else keeps a copy."""

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


#: Width of the all-MiniLM-L6-v2 sentence embeddings (index vectors and queries).
EMBEDDING_DIM = 384
