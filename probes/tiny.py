"""Tiny models built locally (no hub): a built-in tiny Qwen2/Llama, or a tiny replica of the
user's architecture.

Works with transformers 4.48 … 5.x (the version under test builds its own fixture: a directory
saved by 5.x does not load in 4.x). Usage::

    python -m probes.tiny OUTDIR [--arch qwen2|llama]
    python -m probes.tiny OUTDIR --replica-of PATH [--trust-remote-code]
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import Any

CHATML = (
    "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\n' + message['content']"
    " + '<|im_end|>' + '\n' }}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}"
    "{% endif %}"
)

_CORPUS = [
    "The quick brown fox jumps over the lazy dog.",
    "Gradient checkpointing trades compute for memory during training.",
    "LoRA adds low-rank adapters to the attention projections of a language model.",
    "Reinforcement learning from human feedback uses a reward model and a policy.",
    "def add(a, b):\n    return a + b\n",
    "What is 2 + 2? The answer is 4. What is the capital of France? Paris.",
    "Hello world! This is a tiny tokenizer for testing trainers on the CPU.",
    "0123456789 +-*/=()[]{}<>:;,.!? \"'\n\t",
]

SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|pad|>"]


def build_tokenizer(vocab_size: int = 512):
    """A ByteLevel BPE trained on a small built-in corpus, wrapped in PreTrainedTokenizerFast."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=SPECIALS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(_CORPUS * 4, trainer=trainer)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        bos_token=None,
        eos_token="<|im_end|>",
        pad_token="<|pad|>",
        unk_token=None,
        padding_side="left",
        model_input_names=["input_ids", "attention_mask"],
    )
    fast.chat_template = CHATML
    return fast


def _small_dims(cfg, *, hidden: int = 64, layers: int = 2, heads: int = 4, kv_heads: int = 2):
    """Shrink a config in place, keeping its class and module names."""
    sub = getattr(cfg, "text_config", None)
    targets = [cfg] + ([sub] if sub is not None and sub is not cfg else [])
    for c in targets:
        for name, value in (
            ("num_hidden_layers", layers),
            ("n_layer", layers),
            ("num_layers", layers),
            ("hidden_size", hidden),
            ("n_embd", hidden),
            ("d_model", hidden),
            ("intermediate_size", hidden * 2),
            ("moe_intermediate_size", hidden),
            ("shared_expert_intermediate_size", hidden * 2),
            ("num_attention_heads", heads),
            ("n_head", heads),
            ("num_key_value_heads", kv_heads),
            ("head_dim", hidden // heads),
            ("num_experts", 4),
            ("num_local_experts", 4),
            ("n_routed_experts", 4),
            ("num_experts_per_tok", 2),
            ("max_window_layers", layers),
        ):
            if hasattr(c, name) and getattr(c, name) is not None:
                try:
                    setattr(c, name, value)
                except Exception:  # noqa: BLE001 - some configs expose read-only properties
                    pass
        if hasattr(c, "layer_types") and isinstance(c.layer_types, list):
            c.layer_types = list(c.layer_types[:layers]) or None
    return cfg


def build_tiny(
    outdir: str | os.PathLike,
    arch: str = "qwen2",
    hidden: int = 64,
    layers: int = 2,
    *,
    overrides: dict[str, Any] | None = None,
    dtype: Any = None,
) -> Path:
    """Build and ``save_pretrained`` a tiny causal LM + tokenizer into *outdir*. *overrides*
    replace config fields (a real model's shape: tests/gpu/run_probes.py), *dtype* the weights'
    dtype (float32 by default)."""
    import torch
    from transformers import AutoModelForCausalLM, GenerationConfig

    out = Path(outdir)
    out.mkdir(parents=True, exist_ok=True)
    tok = build_tokenizer()
    common = dict(
        vocab_size=len(tok),
        hidden_size=hidden,
        intermediate_size=hidden * 2,
        num_hidden_layers=layers,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=512,
        tie_word_embeddings=False,
        eos_token_id=tok.eos_token_id,
        pad_token_id=tok.pad_token_id,
        bos_token_id=None,
    )
    common.update(overrides or {})
    C: type
    if arch == "qwen2":
        from transformers import Qwen2Config as C
    elif arch == "llama":
        from transformers import LlamaConfig as C  # type: ignore[assignment]
    else:
        raise ValueError(f"unknown arch {arch!r} (qwen2 or llama)")
    cfg = C(**common)
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_config(cfg)
    if dtype is not None:
        model = model.to(dtype)
    model.generation_config = GenerationConfig(
        eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id, bos_token_id=None
    )
    model.save_pretrained(out)
    tok.save_pretrained(out)
    (out / "TINY_MODEL.json").write_text(json.dumps({"source": "builtin", "arch": arch}))
    return out


def build_replica(src: str, outdir: str | os.PathLike, *, trust_remote_code: bool = False) -> Path:
    """Same architecture class and module names as the model at *src*, with 2 layers and small
    dims, random weights; the user's tokenizer is copied as it is."""
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

    out = Path(outdir)
    out.mkdir(parents=True, exist_ok=True)
    cfg = AutoConfig.from_pretrained(src, trust_remote_code=trust_remote_code)
    for q in ("quantization_config",):
        if hasattr(cfg, q):
            delattr(cfg, q)
    _small_dims(cfg)
    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_config(cfg, trust_remote_code=trust_remote_code)
    model.to(torch.float32)
    model.save_pretrained(out)
    try:
        tok = AutoTokenizer.from_pretrained(src, trust_remote_code=trust_remote_code)
        tok.save_pretrained(out)
    except Exception as exc:  # noqa: BLE001 - a model dir without tokenizer is still probe-able
        (out / "NO_TOKENIZER.txt").write_text(f"{type(exc).__name__}: {exc}\n")
    (out / "TINY_MODEL.json").write_text(
        json.dumps({"source": "replica", "of": str(src), "class": type(model).__name__})
    )
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m probes.tiny")
    ap.add_argument("outdir")
    ap.add_argument("--arch", default="qwen2", choices=["qwen2", "llama"])
    ap.add_argument("--hidden", type=int, default=64)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--replica-of")
    ap.add_argument("--trust-remote-code", action="store_true")
    a = ap.parse_args(argv)
    if a.replica_of:
        p = build_replica(a.replica_of, a.outdir, trust_remote_code=a.trust_remote_code)
    else:
        p = build_tiny(a.outdir, a.arch, a.hidden, a.layers)
    print(p)
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
