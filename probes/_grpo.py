"""A few real GRPOTrainer steps, version-tolerant (trl 0.14 … 1.x), CPU or CUDA."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from typing import Any

from probes._base import (
    emit_metrics,
    ensure_pad,
    load_model,
    load_tokenizer,
    metrics_callback,
    tiny_dataset_texts,
    training_args_kwargs,
)
from probes.contract import PhaseContext


def length_reward(prompts=None, completions=None, **kw) -> list[float]:
    """Varies within a group: -|len(text) - 8| / 8."""
    out = []
    for c in completions:
        text = c if isinstance(c, str) else " ".join(m.get("content", "") for m in c)
        out.append(-abs(len(text) - 8) / 8.0)
    return out


def constant_reward(prompts=None, completions=None, **kw) -> list[float]:
    """The bug: every completion of every group gets the same reward (e.g. a format regex that
    never matches)."""
    return [0.0 for _ in completions]


def grpo_config(ctx: PhaseContext, workdir: str, **overrides: Any):
    from trl import GRPOConfig

    kw: dict[str, Any] = training_args_kwargs(
        ctx,
        workdir,
        num_generations=4,
        max_completion_length=8,
        max_prompt_length=64,
        temperature=1.0,
        gradient_checkpointing=False,
    )
    kw.pop("dataloader_num_workers", None)
    kw.update(overrides)
    names = {f.name for f in dataclasses.fields(GRPOConfig)}
    dropped = sorted(k for k in kw if k not in names)
    cfg = GRPOConfig(**{k: v for k, v in kw.items() if k in names})
    return cfg, dropped


def run_grpo(
    ctx: PhaseContext,
    workdir: str,
    *,
    reward: Callable = length_reward,
    model=None,
    peft_config=None,
    label: str = "grpo",
    train: bool = True,
    dataset=None,
    **overrides: Any,
) -> dict:
    """Build a GRPOTrainer and train a few steps; returns {trainer, metrics, seconds}. *dataset*:
    the training data (default: 8 plain-string prompts under "prompt")."""
    from datasets import Dataset
    from trl import GRPOTrainer

    tok = load_tokenizer(ctx)
    ensure_pad(tok)
    if model is None:
        model = load_model(ctx)
    cfg, dropped = grpo_config(ctx, workdir, **overrides)
    ds = Dataset.from_dict({"prompt": tiny_dataset_texts(8)}) if dataset is None else dataset
    cb = metrics_callback()
    kwargs: dict[str, Any] = dict(
        model=model, reward_funcs=reward, args=cfg, train_dataset=ds, processing_class=tok, callbacks=[cb]
    )
    if peft_config is not None:
        kwargs["peft_config"] = peft_config
    trainer = GRPOTrainer(**kwargs)
    t0 = time.perf_counter()
    if train:
        trainer.train()
    secs = time.perf_counter() - t0
    emit_metrics(cb.series, label)
    return {"trainer": trainer, "metrics": cb.series, "seconds": secs, "dropped": dropped}
