"""Launched by torchrun (2 processes, gloo on CPU / NCCL on GPU) for the DDP probe.

    torchrun --nproc_per_node 2 probes/_ddp_script.py MODEL --variant raw:reentrant:find1:lora ...
    torchrun --nproc_per_node 2 probes/_ddp_script.py MODEL --sft-default

Each ``raw`` variant: LoRA (or full) model → gradient checkpointing → DDP(find_unused_parameters,
static_graph) → 2 AdamW steps. ``--sft-default``: trl SFTTrainer + peft_config + reentrant
checkpointing with the default ddp_find_unused_parameters.
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback
from typing import Any


def _log(msg: str) -> None:
    print(f"[rank {os.environ.get('RANK', '?')}] {msg}", flush=True)


def _model(path: str, lora: bool, device):
    import torch
    from transformers import AutoModelForCausalLM

    torch.manual_seed(0)
    m = AutoModelForCausalLM.from_pretrained(path).to(device)
    if lora:
        from peft import LoraConfig, get_peft_model

        m = get_peft_model(m, LoraConfig(r=8, target_modules=["q_proj", "v_proj"], task_type="CAUSAL_LM"))
    return m


def raw(path: str, variant: str, device) -> None:
    import torch
    from torch.nn.parallel import DistributedDataParallel as DDP
    from transformers import AutoTokenizer

    parts = set(variant.split(":"))
    reentrant = "reentrant" in parts
    find_unused = "find1" in parts
    static = "static" in parts
    lora = "lora" in parts
    tok = AutoTokenizer.from_pretrained(path)
    if tok.pad_token is None:
        tok.pad_token = tok.eos_token
    m = _model(path, lora, device)
    if "nogc" not in parts:  # the user's run without gradient checkpointing
        m.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": reentrant})
        m.enable_input_require_grads()
    m.config.use_cache = False
    m.train()
    kw: dict[str, Any] = {"find_unused_parameters": find_unused}
    if static:
        kw["static_graph"] = True
    if device.type == "cuda":
        kw["device_ids"] = [device.index]
    ddp = DDP(m, **kw)
    opt = torch.optim.AdamW([p for p in ddp.parameters() if p.requires_grad], lr=1e-4)
    enc = tok(
        ["hello world, this is rank data", "gradient checkpointing under DDP"], return_tensors="pt", padding=True
    ).to(device)
    for step in range(2):
        out = ddp(input_ids=enc["input_ids"], attention_mask=enc["attention_mask"], labels=enc["input_ids"])
        out.loss.backward()
        opt.step()
        opt.zero_grad()
        _log(f"{variant}: step {step} loss {out.loss.item():.4f}")


def sft_default(path: str, device) -> None:
    import dataclasses

    from datasets import Dataset
    from peft import LoraConfig
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import SFTConfig, SFTTrainer

    tok = AutoTokenizer.from_pretrained(path)
    if tok.pad_token is None:
        tok.pad_token = tok.eos_token
    model = AutoModelForCausalLM.from_pretrained(path)
    kw = dict(
        output_dir=os.environ.get("PROBE_WORKDIR", "/tmp/ddp-sft"),
        per_device_train_batch_size=2,
        max_steps=2,
        logging_steps=1,
        report_to="none",
        save_strategy="no",
        disable_tqdm=True,
        use_cpu=device.type == "cpu",
        bf16=False,
        fp16=False,
        gradient_checkpointing=True,
        gradient_checkpointing_kwargs={"use_reentrant": True},
        max_length=32,
        max_seq_length=32,
    )
    names = {f.name for f in dataclasses.fields(SFTConfig)}
    args = SFTConfig(**{k: v for k, v in kw.items() if k in names})
    _log(f"ddp_find_unused_parameters={args.ddp_find_unused_parameters} (default)")
    ds = Dataset.from_dict({"text": ["hello world, this is a sentence"] * 8})
    extra: dict[str, Any] = (
        {"processing_class": tok}
        if "processing_class" in SFTTrainer.__init__.__code__.co_varnames
        else {"tokenizer": tok}
    )
    t = SFTTrainer(
        model=model,
        args=args,
        train_dataset=ds,
        peft_config=LoraConfig(r=8, target_modules=["q_proj", "v_proj"], task_type="CAUSAL_LM"),
        **extra,
    )
    t.train()


def main() -> int:
    import torch
    import torch.distributed as dist

    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("--variant", action="append", default=[])
    ap.add_argument("--sft-default", action="store_true")
    a = ap.parse_args()
    rank = int(os.environ.get("LOCAL_RANK", 0))
    if torch.cuda.is_available() and os.environ.get("PROBE_DEVICE", "cpu") == "cuda":
        device = torch.device("cuda", rank)
        torch.cuda.set_device(device)
        backend = "nccl"
    else:
        device = torch.device("cpu")
        backend = "gloo"
    rc = 0
    if a.sft_default:
        try:
            sft_default(a.model, device)
            _log("sft-default: ok")
        except Exception:  # noqa: BLE001
            traceback.print_exc()
            rc = 1
        return rc
    dist.init_process_group(backend)
    _log(f"world {dist.get_world_size()} backend {backend} device {device}")
    for v in a.variant:
        try:
            raw(a.model, v, device)
            _log(f"{v}: ok")
        except Exception:  # noqa: BLE001
            traceback.print_exc()
            _log(f"{v}: FAILED")
            rc = 1
            break
    dist.destroy_process_group()
    return rc


if __name__ == "__main__":
    code = main()
    # Leave without interpreter teardown: torch's gloo threads can abort the process at exit
    # ("terminate called without an active exception", SIGABRT) after the work succeeded, which
    # the launcher reports as a failed rank. Everything worth keeping is printed by now.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
