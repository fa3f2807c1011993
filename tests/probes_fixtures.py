"""Helpers for tests/test_probes.py: tiny model directories built at test time (no hub)."""

from __future__ import annotations

import json
from pathlib import Path


def tiny_without_pad_and_template(out: Path) -> Path:
    """A tiny Llama whose tokenizer has no pad token and no chat template (a base checkpoint)."""
    from transformers import AutoTokenizer

    from probes.tiny import build_tiny

    build_tiny(out, arch="llama")
    cfg = out / "tokenizer_config.json"
    data = json.loads(cfg.read_text())
    data.pop("pad_token", None)
    data.pop("chat_template", None)
    cfg.write_text(json.dumps(data))
    for extra in ("chat_template.jinja", "chat_template.json"):
        (out / extra).unlink(missing_ok=True)
    sp = out / "special_tokens_map.json"
    if sp.exists():
        d = json.loads(sp.read_text())
        d.pop("pad_token", None)
        sp.write_text(json.dumps(d))
    tok = AutoTokenizer.from_pretrained(out)
    assert tok.pad_token is None, tok.pad_token
    assert not getattr(tok, "chat_template", None)
    return out


def tiny_gpt2(out: Path) -> Path:
    """A tiny GPT-2 (fused c_attn / Conv1D: q_proj,v_proj do not exist there)."""
    from transformers import GPT2Config, GPT2LMHeadModel

    from probes.tiny import build_tokenizer

    out.mkdir(parents=True, exist_ok=True)
    tok = build_tokenizer()
    cfg = GPT2Config(
        vocab_size=len(tok),
        n_embd=64,
        n_layer=2,
        n_head=4,
        n_positions=128,
        eos_token_id=tok.eos_token_id,
        bos_token_id=tok.eos_token_id,
    )
    GPT2LMHeadModel(cfg).save_pretrained(out)
    tok.save_pretrained(out)
    return out
