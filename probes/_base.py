"""Helpers for probe phases (run inside the worker's forked child; heavy imports are local).

What a probe module provides is the contract in :mod:`probes.contract` (a ``Probe`` subclass
exposed as ``PROBE``); these are the shared building blocks its phases use.
"""

from __future__ import annotations

import json
import sys
import traceback
from collections.abc import Callable
from typing import Any

from probes.contract import PhaseContext

METRICS_PREFIX = "PROBE_METRICS "


def version_of(pkg: str) -> str | None:
    from importlib import metadata

    try:
        return metadata.version(pkg)
    except metadata.PackageNotFoundError:
        return None


def vtuple(pkg: str) -> tuple[int, ...]:
    v = version_of(pkg) or "0"
    out = []
    for part in v.split("+")[0].split(".")[:3]:
        digits = "".join(ch for ch in part if ch.isdigit())
        out.append(int(digits or 0))
    return tuple(out)


def torch_dtype(ctx: PhaseContext, *, default_cpu: str = "float32"):
    """dtype for the phase: the user's config dtype on CUDA, float32 on CPU (fp16 kernels on CPU
    are slow or missing); a tiny model is always float32."""
    import torch

    name = ctx.config_dtype or "float32"
    if ctx.device == "cpu":
        name = default_cpu
    return getattr(torch, str(name).replace("torch.", ""), torch.float32)


def from_pretrained_kwargs(ctx: PhaseContext, dtype=None) -> dict:
    kw: dict = {"trust_remote_code": ctx.trust_remote_code}
    if dtype is not None:
        # transformers 5 renamed torch_dtype -> dtype
        kw["dtype" if vtuple("transformers") >= (4, 56) else "torch_dtype"] = dtype
    return kw


def load_model(ctx: PhaseContext, dtype=None, **kw):
    from transformers import AutoModelForCausalLM

    dtype = dtype if dtype is not None else torch_dtype(ctx)
    model = AutoModelForCausalLM.from_pretrained(ctx.model_path, **from_pretrained_kwargs(ctx, dtype), **kw)
    if ctx.device != "cpu":
        model.to(ctx.device)  # type: ignore[arg-type]
    return model


def load_tokenizer(ctx: PhaseContext, **kw):
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(ctx.model_path, trust_remote_code=ctx.trust_remote_code, **kw)
    return tok


def ensure_pad(tok) -> None:
    if tok.pad_token is None:
        tok.pad_token = tok.eos_token or tok.unk_token


def lora_targets(model) -> list[str]:
    """Attention projection names present in the model (q_proj/v_proj style when available)."""
    import torch

    names = {n.rsplit(".", 1)[-1] for n, m in model.named_modules() if isinstance(m, torch.nn.Linear)}
    for pair in (["q_proj", "v_proj"], ["query_key_value"], ["c_attn"], ["W_pack"], ["wqkv"], ["qkv_proj"]):
        if all(p in names for p in pair):
            return pair
    names.discard("lm_head")
    return sorted(names)[:2]


def emit_metrics(metrics: dict[str, list[float]], label: str = "") -> None:
    clean = {k: [float(x) for x in v] for k, v in metrics.items()}
    print(METRICS_PREFIX + json.dumps({"label": label, "metrics": clean}), flush=True)


def metrics_callback():
    """A TrainerCallback collecting every logged scalar per name (trl's slashes kept)."""
    from transformers import TrainerCallback

    class _Collect(TrainerCallback):
        def __init__(self) -> None:
            self.series: dict[str, list[float]] = {}

        def on_log(self, args, state, control, logs=None, **kwargs):  # noqa: D401
            for k, v in (logs or {}).items():
                if isinstance(v, (int, float)) and not isinstance(v, bool):
                    self.series.setdefault(k, []).append(float(v))

    return _Collect()


def print_exception(exc: BaseException, header: str = "") -> None:
    if header:
        print(header, flush=True)
    traceback.print_exception(type(exc), exc, exc.__traceback__, file=sys.stdout)
    sys.stdout.flush()


def exc_chain(exc: BaseException, limit: int = 2000) -> list[str]:
    """`Type: message` of *exc* and its causes / contexts, outermost first."""
    out: list[str] = []
    seen: set[int] = set()
    e: BaseException | None = exc
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        out.append(f"{type(e).__name__}: {str(e)[:limit]}")
        e = e.__cause__ or e.__context__
    return out


def attempt(label: str, fn: Callable[[], Any]) -> dict:
    """Run *fn*, printing a header and, on failure, the traceback (so the matcher sees it)."""
    print(f"--- {label}", flush=True)
    try:
        value = fn()
    except Exception as exc:  # noqa: BLE001
        print_exception(exc)
        return {"ok": False, "label": label, "exception": exc_chain(exc)[0], "chain": exc_chain(exc)}
    print(f"--- {label}: ok", flush=True)
    return {"ok": True, "label": label, "value": value}


def tiny_dataset_texts(n: int = 8) -> list[str]:
    base = [
        "Write a short poem about the sea.",
        "What is 2 + 2?",
        "Name three colors.",
        "Explain gradient checkpointing in one sentence.",
        "Translate hello to French.",
        "Give me a prime number.",
        "What is the capital of France?",
        "Say something kind.",
    ]
    return (base * ((n + len(base) - 1) // len(base)))[:n]


def lm_batch(tok, device: str = "cpu", n: int = 4, max_len: int = 32):
    ensure_pad(tok)
    enc = tok(tiny_dataset_texts(n), return_tensors="pt", padding=True, truncation=True, max_length=max_len)
    enc = {k: v.to(device) for k, v in enc.items() if k in ("input_ids", "attention_mask")}
    labels = enc["input_ids"].clone()
    labels[enc["attention_mask"] == 0] = -100
    enc["labels"] = labels
    return enc


class LMDataset:
    """A list-like dataset of tokenised examples for transformers.Trainer."""

    def __init__(self, tok, n: int = 8, max_len: int = 24):
        ensure_pad(tok)
        self.rows = []
        for t in tiny_dataset_texts(n):
            ids = tok(t, truncation=True, max_length=max_len, padding="max_length")
            row = {"input_ids": ids["input_ids"], "attention_mask": ids["attention_mask"]}
            row["labels"] = [i if m else -100 for i, m in zip(ids["input_ids"], ids["attention_mask"])]
            self.rows.append(row)

    def __len__(self) -> int:
        return len(self.rows)

    def __getitem__(self, i: int) -> dict:
        return self.rows[i]


def training_args_kwargs(ctx: PhaseContext, workdir: str, **kw) -> dict:
    """TrainingArguments kwargs that work from transformers 4.48 to 5.x on CPU or CUDA."""
    on_cpu = ctx.device == "cpu"
    base = dict(
        output_dir=workdir,
        per_device_train_batch_size=4,
        max_steps=2,
        logging_steps=1,
        learning_rate=1e-4,
        report_to="none",
        save_strategy="no",
        disable_tqdm=True,
        use_cpu=on_cpu,
        bf16=False,
        fp16=False,
        dataloader_num_workers=0,
        seed=0,
    )
    base.update(kw)
    return base
