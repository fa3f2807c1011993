"""Launched by torchrun (1 process) for the ZeRO-3 unwrap probe.

    torchrun --nproc_per_node 1 probes/_zero3_script.py MODEL --target model|model_wrapped

One real GRPOTrainer step under DeepSpeed ZeRO-3 (CPU: gloo, shm-op compile skipped), then
trl's ``unwrap_model_for_generation(<target>, trainer.accelerator)`` + generate — what GRPO's
evaluation path did in trl 0.14 / 0.15.0.dev0 with the bare model (``trainer.model``).
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import os
import sys
import traceback


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("--target", choices=["model", "model_wrapped"], required=True)
    ap.add_argument("--workdir", default="/tmp/zero3-probe")
    a = ap.parse_args()
    on_cpu = os.environ.get("PROBE_DEVICE", "cpu") == "cpu"
    if on_cpu:
        # deepspeed.init_distributed() JIT-compiles its shared-memory comm op (45-85 s) on CPU;
        # not needed with gloo. NB: `import deepspeed.comm.torch as m` binds torch itself.
        try:
            importlib.import_module("deepspeed.comm.torch").build_shm_op = lambda: None  # type: ignore[attr-defined]
        except Exception as exc:  # noqa: BLE001
            print(f"could not skip the shm op build: {exc}", flush=True)
    import torch
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import GRPOConfig, GRPOTrainer
    from trl.models import unwrap_model_for_generation

    tok = AutoTokenizer.from_pretrained(a.model)
    if tok.pad_token is None:
        tok.pad_token = tok.eos_token
    ds_cfg = {
        "zero_optimization": {"stage": 3},
        "train_batch_size": "auto",
        "train_micro_batch_size_per_gpu": "auto",
        "gradient_accumulation_steps": "auto",
        "gradient_clipping": "auto",
    }
    kw = dict(
        output_dir=a.workdir,
        per_device_train_batch_size=4,
        num_generations=4,
        max_completion_length=8,
        max_prompt_length=64,
        max_steps=1,
        logging_steps=1,
        report_to="none",
        save_strategy="no",
        disable_tqdm=True,
        use_cpu=on_cpu,
        bf16=False,
        fp16=False,
        learning_rate=1e-4,
        deepspeed=ds_cfg,
    )
    names = {f.name for f in dataclasses.fields(GRPOConfig)}
    args = GRPOConfig(**{k: v for k, v in kw.items() if k in names})

    def reward(prompts=None, completions=None, **_):
        return [-abs(len(c if isinstance(c, str) else str(c)) - 8) / 8 for c in completions]

    model = AutoModelForCausalLM.from_pretrained(a.model)
    ds = Dataset.from_dict({"prompt": ["What is 2 + 2?", "Name a color.", "Say hi.", "Count to three."] * 2})
    trainer = GRPOTrainer(model=model, reward_funcs=reward, args=args, train_dataset=ds, processing_class=tok)
    trainer.train()
    print(
        f"trained 1 ZeRO-3 step; model_wrapped is {type(trainer.model_wrapped).__name__}, "
        f"model is {type(trainer.model).__name__}",
        flush=True,
    )
    target = getattr(trainer, a.target)
    enc = tok(["What is 2 + 2?"], return_tensors="pt")
    enc = {k: v.to(trainer.accelerator.device) for k, v in enc.items() if k in ("input_ids", "attention_mask")}
    try:
        with unwrap_model_for_generation(target, trainer.accelerator) as unwrapped:
            out = unwrapped.generate(**enc, max_new_tokens=4, do_sample=False, pad_token_id=tok.pad_token_id)
        print(f"unwrap_model_for_generation(trainer.{a.target}) + generate: ok ({tuple(out.shape)})", flush=True)
    except BaseException as exc:  # noqa: BLE001
        traceback.print_exc()
        ctx = exc.__context__ or exc.__cause__
        print(
            f"PROBE_ZERO3 top={type(exc).__name__} context={type(ctx).__name__ if ctx else None}: "
            f"{str(ctx)[:300] if ctx else ''}",
            flush=True,
        )
        return 1
    _ = torch
    return 0


if __name__ == "__main__":
    sys.exit(main())
