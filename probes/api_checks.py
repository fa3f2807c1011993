"""API checks: the call a report makes, run against the installed trl / peft / transformers, and the
documented fix (seconds each; the model is loaded on the CPU or the probe's device, nothing trains).

Each scenario calls the libraries' own classes and functions with the arguments users pass; the
symptom is whatever those libraries raise or log, checked with the case's patterns. On a release
that no longer has the failure the baseline runs clean and the verdict is ``not-reproduced``, which
is the answer to "is my version affected?" (run it on yours with ``--versions``).

trainer-api: SFTTrainer(tokenizer=) · SFTTrainer(max_seq_length=) · DPOTrainer(beta=) ·
    DPOTrainer(ref_model=, peft_config=) · SFTTrainer(PeftModel, peft_config=) ·
    TrainingArguments(evaluation_strategy=)
peft-api: PeftModel.generate(positional ids) · PeftModel.from_pretrained(dir without an adapter) ·
    PeftModel.from_pretrained(...) then training (adapters frozen) ·
    ``from peft import prepare_model_for_int8_training``
transformers-api: sequence-classification batch without pad_token_id · generate with right padding
import-shadowing: ``from trl import SFTTrainer`` from a directory that holds a ``trl/`` folder
grpo-data-checks (one real GRPO step each): a dataset without "prompt" · a reward function that needs
    a column the dataset lacks · a reward function returning one number per batch
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from probes._base import ensure_pad, load_model, load_tokenizer, lora_targets
from probes.contract import FunctionProbe, PhaseContext, PhaseOutput

DESCRIPTIONS = {
    "baseline": "the call as the report makes it, against your installed libraries",
    "treatment": "the same call with the documented fix",
}

Scenario = Callable[[PhaseContext], Any]


# --------------------------------------------------------------------------- helpers


def _lora(model) -> Any:
    from peft import LoraConfig

    return LoraConfig(r=4, lora_alpha=8, target_modules=lora_targets(model), task_type="CAUSAL_LM")


def _args(ctx: PhaseContext) -> dict[str, Any]:
    return dict(
        output_dir=f"{ctx.workdir}/out",
        report_to="none",
        use_cpu=ctx.device == "cpu",
        max_steps=1,
        per_device_train_batch_size=2,
        save_strategy="no",
    )


def _sft_data():
    from datasets import Dataset

    return Dataset.from_dict({"text": ["Write a short poem about the sea.", "What is 2 + 2?"] * 2})


def _dpo_data():
    from datasets import Dataset

    return Dataset.from_dict({"prompt": ["Hi"] * 4, "chosen": [" Hello!"] * 4, "rejected": [" Go away."] * 4})


def _tok(ctx: PhaseContext):
    tok = load_tokenizer(ctx)
    ensure_pad(tok)
    return tok


def _say(msg: str) -> None:
    print(msg, flush=True)


# --------------------------------------------------------------------------- trainer-api


def sft_tokenizer_kwarg(ctx: PhaseContext, fixed: bool) -> None:
    from trl import SFTConfig, SFTTrainer

    tok = _tok(ctx)
    kw = {"processing_class": tok} if fixed else {"tokenizer": tok}
    SFTTrainer(model=load_model(ctx), args=SFTConfig(**_args(ctx)), train_dataset=_sft_data(), **kw)
    _say(f"SFTTrainer(..., {'processing_class' if fixed else 'tokenizer'}=tok) constructed")


def sft_max_seq_length(ctx: PhaseContext, fixed: bool) -> None:
    from trl import SFTConfig, SFTTrainer

    tok = _tok(ctx)
    if fixed:
        SFTTrainer(
            model=load_model(ctx),
            args=SFTConfig(**_args(ctx), max_length=32),
            train_dataset=_sft_data(),
            processing_class=tok,
        )
        _say("SFTConfig(max_length=32): constructed")
    else:
        SFTTrainer(  # type: ignore[call-arg,arg-type]  # wrong on purpose: the report's call
            model=load_model(ctx),
            args=SFTConfig(**_args(ctx)),
            train_dataset=_sft_data(),
            processing_class=tok,
            max_seq_length=32,
        )
        _say("SFTTrainer(max_seq_length=32): accepted by this trl")


def dpo_beta_kwarg(ctx: PhaseContext, fixed: bool) -> None:
    from trl import DPOConfig, DPOTrainer

    tok = _tok(ctx)
    if fixed:
        DPOTrainer(
            model=load_model(ctx),
            args=DPOConfig(**_args(ctx), beta=0.1),
            train_dataset=_dpo_data(),
            processing_class=tok,
        )
        _say("DPOConfig(beta=0.1): constructed")
    else:
        DPOTrainer(  # type: ignore[call-arg,arg-type]  # wrong on purpose: the report's call
            model=load_model(ctx),
            args=DPOConfig(**_args(ctx)),
            train_dataset=_dpo_data(),
            processing_class=tok,
            beta=0.1,
        )
        _say("DPOTrainer(beta=0.1): accepted by this trl")


def dpo_ref_and_peft(ctx: PhaseContext, fixed: bool) -> None:
    from trl import DPOConfig, DPOTrainer

    tok = _tok(ctx)
    model = load_model(ctx)
    ref = None if fixed else load_model(ctx)
    DPOTrainer(
        model=model,
        ref_model=ref,
        args=DPOConfig(**_args(ctx)),
        train_dataset=_dpo_data(),
        processing_class=tok,
        peft_config=_lora(model),
    )
    _say(f"DPOTrainer({'ref_model=None' if fixed else 'ref_model=<model>'}, peft_config=LoraConfig): constructed")


def peft_model_plus_config(ctx: PhaseContext, fixed: bool) -> None:
    from peft import get_peft_model
    from trl import SFTConfig, SFTTrainer

    tok = _tok(ctx)
    base = load_model(ctx)
    peft_model = get_peft_model(base, _lora(base))
    model = peft_model.merge_and_unload() if fixed else peft_model
    SFTTrainer(
        model=model,
        args=SFTConfig(**_args(ctx)),
        train_dataset=_sft_data(),
        processing_class=tok,
        peft_config=_lora(base),
    )
    _say(f"SFTTrainer({'merged base' if fixed else 'PeftModel'}, peft_config=LoraConfig): constructed")


def evaluation_strategy(ctx: PhaseContext, fixed: bool) -> None:
    from transformers import TrainingArguments

    key = "eval_strategy" if fixed else "evaluation_strategy"
    TrainingArguments(output_dir=f"{ctx.workdir}/out", report_to="none", **{key: "steps"})  # type: ignore[call-arg,arg-type]  # wrong on purpose: the report's call
    _say(f"TrainingArguments({key}='steps'): accepted")


def grpo_config_removed_args(ctx: PhaseContext, fixed: bool) -> None:
    """GRPOConfig with an argument trl 0.27-0.29 removed (`max_prompt_length`, as recipes written
    for older trl pass it); the fix drops it (prompts are no longer truncated by the trainer)."""
    from trl import GRPOConfig

    kw = {} if fixed else {"max_prompt_length": 256}
    GRPOConfig(**_args(ctx), num_generations=2, **kw)  # type: ignore[arg-type]  # wrong on purpose: the report's call
    _say(f"GRPOConfig({'' if fixed else 'max_prompt_length=256'}): accepted by this trl")


# --------------------------------------------------------------------------- peft-api


def _peft_model(ctx: PhaseContext):
    from peft import get_peft_model

    base = load_model(ctx)
    return get_peft_model(base, _lora(base))


def peft_generate_positional(ctx: PhaseContext, fixed: bool) -> None:
    tok = _tok(ctx)
    model = _peft_model(ctx)
    ids = tok("Hello", return_tensors="pt").input_ids.to(ctx.device)
    if fixed:
        model.generate(input_ids=ids, max_new_tokens=2, do_sample=False)
    else:
        model.generate(ids, max_new_tokens=2, do_sample=False)
    _say(f"PeftModel.generate({'input_ids=ids' if fixed else 'ids'}): generated")


def adapter_dir(ctx: PhaseContext, fixed: bool) -> None:
    from peft import PeftModel

    saved = Path(ctx.workdir) / "adapter"
    _peft_model(ctx).save_pretrained(saved)
    # the mistake: the base model's directory (or a checkpoint root) instead of the adapter's
    where = saved if fixed else Path(ctx.model_path)
    PeftModel.from_pretrained(load_model(ctx), str(where))
    _say(f"PeftModel.from_pretrained(base, {where}): loaded")


def adapter_frozen(ctx: PhaseContext, fixed: bool) -> PhaseOutput:
    from peft import PeftModel

    saved = Path(ctx.workdir) / "adapter"
    _peft_model(ctx).save_pretrained(saved)
    kw = {"is_trainable": True} if fixed else {}
    model = PeftModel.from_pretrained(load_model(ctx), str(saved), **kw)  # type: ignore[call-arg,arg-type]  # wrong on purpose: the report's call
    model.print_trainable_parameters()  # what users see before training starts
    n = sum(p.numel() for p in model.parameters() if p.requires_grad)
    return {"info": {"trainable_parameters": n}, "detail": f"{n} trainable parameters after from_pretrained({kw})"}


def int8_helper_import(ctx: PhaseContext, fixed: bool) -> None:
    name = "prepare_model_for_kbit_training" if fixed else "prepare_model_for_int8_training"
    exec(f"from peft import {name}", {})  # the exact statement scripts contain
    _say(f"from peft import {name}: ok")


def adapter_after_resize(ctx: PhaseContext, fixed: bool) -> PhaseOutput:
    """An adapter trained on a base whose embeddings were resized (added tokens), loaded onto the base
    as published; the fix resizes the fresh base to the adapter's vocabulary first."""
    from peft import PeftModel, get_peft_model

    base = load_model(ctx)
    grown = base.get_input_embeddings().weight.shape[0] + 16
    base.resize_token_embeddings(grown)
    saved = Path(ctx.workdir) / "adapter"
    get_peft_model(base, _lora(base)).save_pretrained(saved)  # peft saves the resized embeddings too
    fresh = load_model(ctx)
    if fixed:
        fresh.resize_token_embeddings(grown)
    PeftModel.from_pretrained(fresh, str(saved))
    rows = fresh.get_input_embeddings().weight.shape[0]
    _say(f"adapter loaded onto a base with {rows} embeddings")
    # loading worked (peft's resize warning at save time is printed in both phases: not the failure)
    return {"detected": False, "check_matcher": False, "detail": f"loaded onto {rows} embeddings"}


def embeddings_saved_into_adapter(ctx: PhaseContext, fixed: bool) -> None:
    """Resizing the embeddings (without needing new tokens) makes peft store the whole embedding
    matrices in the adapter; the fix leaves them alone."""
    from peft import get_peft_model

    base = load_model(ctx)
    if not fixed:
        base.resize_token_embeddings(base.get_input_embeddings().weight.shape[0] + 8)
    saved = Path(ctx.workdir) / "adapter"
    get_peft_model(base, _lora(base)).save_pretrained(saved)
    size = sum(f.stat().st_size for f in saved.glob("adapter_model.*"))
    _say(f"adapter file size: {size} bytes")


def state_dict_override(ctx: PhaseContext, fixed: bool) -> PhaseOutput:
    """The alpaca-lora era idiom: model.state_dict replaced by a lambda returning the PEFT state dict,
    then save_pretrained. Affected peft versions write an empty adapter file."""
    from peft import get_peft_model, get_peft_model_state_dict

    base = load_model(ctx)
    model = get_peft_model(base, _lora(base))
    if not fixed:
        old_state_dict = model.state_dict
        model.state_dict = (  # type: ignore[method-assign]
            lambda self, *_, **__: get_peft_model_state_dict(self, old_state_dict())
        ).__get__(model, type(model))
    saved = Path(ctx.workdir) / "adapter"
    model.save_pretrained(saved)
    sizes = {f.name: f.stat().st_size for f in saved.glob("adapter_model.*")}
    for name, size in sizes.items():
        _say(f"{name} {size} bytes")
    tensors = 0
    for f in saved.glob("adapter_model.safetensors"):
        from safetensors import safe_open

        with safe_open(str(f), "pt") as fh:
            tensors = len(list(fh.keys()))
    _say(f"tensors in the adapter file: {tensors}")
    return {"detected": tensors == 0, "detail": f"{tensors} tensors saved", "info": {"sizes": sizes}}


def all_linear(ctx: PhaseContext, fixed: bool) -> None:
    from peft import LoraConfig, get_peft_model

    base = load_model(ctx)
    targets: Any = lora_targets(base) if fixed else "all-linear"
    get_peft_model(base, LoraConfig(r=4, target_modules=targets, task_type="CAUSAL_LM"))
    _say(f"LoraConfig(target_modules={targets!r}): adapters injected")


def prefix_tuning_forward(ctx: PhaseContext, fixed: bool) -> None:
    """Prefix tuning through a current transformers model; the fix is a peft that builds a Cache."""
    from peft import LoraConfig, PrefixTuningConfig, get_peft_model

    tok = _tok(ctx)
    base = load_model(ctx)
    cfg: Any = (
        LoraConfig(r=4, target_modules=lora_targets(base), task_type="CAUSAL_LM")
        if fixed
        else PrefixTuningConfig(task_type="CAUSAL_LM", num_virtual_tokens=4)
    )
    model = get_peft_model(base, cfg)
    ids = tok(["Hello there"], return_tensors="pt").input_ids.to(ctx.device)
    model(input_ids=ids, labels=ids).loss.backward()
    _say(f"{type(cfg).__name__}: forward + backward done")


def _load_adapter_with_config_keys(ctx: PhaseContext, extra: dict[str, Any] | None) -> PhaseOutput:
    """Save a fresh adapter, add *extra* keys to its adapter_config.json (none: the fix), load it
    back with PeftModel.from_pretrained. Loading raises where this peft refuses the keys; when it
    loads, a peft that ignores unknown keys (it may warn) is not affected."""
    import json

    from peft import PeftModel

    saved = Path(ctx.workdir) / "adapter"
    _peft_model(ctx).save_pretrained(saved)
    if extra:
        cfg_file = saved / "adapter_config.json"
        cfg_file.write_text(json.dumps({**json.loads(cfg_file.read_text()), **extra}))
    PeftModel.from_pretrained(load_model(ctx), str(saved))
    return {"detected": False, "check_matcher": False, "detail": "adapter loaded"}


def adapter_config_newer_keys(ctx: PhaseContext, fixed: bool) -> PhaseOutput:
    """adapter_config.json written by a newer peft (keys this peft does not know), loaded here."""
    newer = {
        "alora_invocation_tokens": None,
        "target_parameters": None,
        "trainable_token_indices": None,
        "peft_version": "99.0.0",
    }
    return _load_adapter_with_config_keys(ctx, None if fixed else newer)


def regex_inside_target_list(ctx: PhaseContext, fixed: bool) -> None:
    """A regex passed as an entry of a `target_modules` list (peft >= 0.6 matches list entries as
    module names); the fix passes the regex as one string."""
    from peft import LoraConfig, get_peft_model

    base = load_model(ctx)
    regex = r".*\.(" + "|".join(lora_targets(base)) + ")"
    targets: str | list[str] = regex if fixed else [regex]
    get_peft_model(base, LoraConfig(r=4, lora_alpha=8, target_modules=targets, task_type="CAUSAL_LM"))
    _say(f"get_peft_model(target_modules={targets!r}): adapters attached")


def adapter_config_legacy_keys(ctx: PhaseContext, fixed: bool) -> PhaseOutput:
    """adapter_config.json as an early peft (alpaca-lora era) wrote it: `enable_lora`,
    `merge_weights`; the fix deletes those keys."""
    return _load_adapter_with_config_keys(ctx, None if fixed else {"enable_lora": None, "merge_weights": False})


def base_class_for_causal_lm(ctx: PhaseContext, fixed: bool) -> None:
    """task_type CAUSAL_LM on AutoModel (no LM head); the fix loads AutoModelForCausalLM."""
    from peft import get_peft_model
    from transformers import AutoModel, AutoModelForCausalLM

    from probes._base import from_pretrained_kwargs, torch_dtype

    cls = AutoModelForCausalLM if fixed else AutoModel
    base = cls.from_pretrained(ctx.model_path, **from_pretrained_kwargs(ctx, torch_dtype(ctx))).to(ctx.device)  # type: ignore[arg-type]
    model = get_peft_model(base, _lora(base))
    tok = _tok(ctx)
    ids = tok(["Hello there"], return_tensors="pt").input_ids.to(ctx.device)
    model(input_ids=ids, labels=ids)
    _say(f"{cls.__name__} + LoraConfig(task_type='CAUSAL_LM'): forward with labels done")


# --------------------------------------------------------------------------- transformers-api


def use_cache_warning(ctx: PhaseContext, fixed: bool) -> PhaseOutput:
    """Rollouts from the training model (train mode, gradient checkpointing on), as GRPO/online
    trainers do: affected releases log the decoder layer's cache message once per layer per step
    instead of once. The fix generates without the cache."""
    import logging

    layer_msgs: list[str] = []

    class Count(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            msg = record.getMessage()
            if msg.startswith("Caching is incompatible with gradient checkpointing"):
                layer_msgs.append(msg)

    logging.getLogger("transformers").addHandler(Count())
    tok = _tok(ctx)
    model = load_model(ctx)
    model.gradient_checkpointing_enable()
    model.train()
    ids = tok(["Hello there"], return_tensors="pt").input_ids.to(ctx.device)
    for _ in range(2):
        model.generate(ids, max_new_tokens=3, do_sample=False, use_cache=not fixed)
        model(input_ids=ids, labels=ids).loss.backward()
    _say(f"per-layer cache message logged {len(layer_msgs)} time(s) in 2 rollouts + 2 training steps")
    return {"detected": len(layer_msgs) > 1, "check_matcher": False, "detail": f"{len(layer_msgs)} layer messages"}


def torch_load_checkpoint(ctx: PhaseContext, fixed: bool) -> None:
    """A .bin (pickle) checkpoint loaded with transformers: refused when torch < 2.6."""
    import torch

    saved = Path(ctx.workdir) / "bin-checkpoint"
    model = load_model(ctx)
    model.save_pretrained(saved)  # config + safetensors
    if not fixed:  # a checkpoint as older tools wrote it: a pickled state dict only
        for f in saved.glob("model*.safetensors*"):
            f.unlink()
        torch.save(model.state_dict(), saved / "pytorch_model.bin")
    load_model(ctx.replace(model_path=str(saved)))
    _say(f"loaded a {'safetensors' if fixed else 'pytorch_model.bin'} checkpoint")


def trainer_label_names(ctx: PhaseContext, fixed: bool) -> None:
    from transformers import Trainer, TrainingArguments

    from probes._base import LMDataset

    tok = _tok(ctx)
    kw: dict[str, Any] = {"label_names": ["labels"]} if fixed else {}
    Trainer(model=_peft_model(ctx), args=TrainingArguments(**_args(ctx), **kw), train_dataset=LMDataset(tok, n=4))
    _say(f"Trainer(PeftModel, {kw or 'no label_names'}): constructed")


# --------------------------------------------------------------------------- torchrun


def torchrun_port(ctx: PhaseContext, fixed: bool) -> None:
    """torchrun on a master port another job holds (gloo, 1 process); the fix takes a free port.

    With the user's port (``--set master_port=N``, or read from the log) the baseline launches on
    that port as it is on this machine, holding nothing: a port no other job holds comes out
    not-reproduced."""
    import socket

    held = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    users = ctx.options.get("master_port")
    if users is not None and not fixed:
        port = int(str(users))
        _say(f"your master port {port}, as it is on this machine (the probe holds nothing)")
    else:
        held.bind(("127.0.0.1", 0))
        held.listen(1)
        port = held.getsockname()[1]
    if fixed:
        free = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
        free.close()
    script = Path(ctx.workdir) / "ddp_init.py"
    script.write_text(
        "import torch.distributed as dist\n"
        "dist.init_process_group('gloo')\n"
        "print('rank', dist.get_rank(), 'joined', flush=True)\n"
        "dist.destroy_process_group()\n"
    )
    cmd = [
        sys.executable, "-m", "torch.distributed.run", "--nnodes=1", "--nproc_per_node=1",
        "--master_addr=127.0.0.1", f"--master_port={port}", str(script),
    ]  # fmt: skip
    try:
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=240, cwd=ctx.workdir)
    finally:
        held.close()
    print(res.stdout + res.stderr, flush=True)
    if res.returncode != 0:
        raise RuntimeError(f"torchrun exited with {res.returncode} on port {port}")


def reward_model_pad(ctx: PhaseContext, fixed: bool) -> None:
    from transformers import AutoModelForSequenceClassification

    from probes._base import from_pretrained_kwargs, torch_dtype

    tok = _tok(ctx)
    model = AutoModelForSequenceClassification.from_pretrained(
        ctx.model_path, num_labels=1, **from_pretrained_kwargs(ctx, torch_dtype(ctx))
    ).to(ctx.device)
    model.config.pad_token_id = tok.pad_token_id if fixed else None
    enc = tok(["a longer first answer", "short"], return_tensors="pt", padding=True).to(ctx.device)
    model(**enc)
    _say(f"reward model forward on a batch of 2 (pad_token_id={model.config.pad_token_id}): ok")


def right_padding_generate(ctx: PhaseContext, fixed: bool) -> None:
    tok = _tok(ctx)
    tok.padding_side = "left" if fixed else "right"
    enc = tok(["a longer first prompt", "short"], return_tensors="pt", padding=True).to(ctx.device)
    load_model(ctx).generate(**enc, max_new_tokens=2, do_sample=False)
    _say(f"generate with padding_side={tok.padding_side!r}: done")


# --------------------------------------------------------------------------- GRPO data and rewards (1 real step)


def _grpo_step(ctx: PhaseContext, reward, columns: dict[str, list]) -> None:
    from datasets import Dataset

    from probes._grpo import run_grpo

    run_grpo(ctx, f"{ctx.workdir}/grpo", reward=reward, dataset=Dataset.from_dict(columns), max_steps=1)
    _say("one GRPO step: done")


def _prompts() -> list[str]:
    from probes._base import tiny_dataset_texts

    return tiny_dataset_texts(8)


def grpo_missing_prompt_column(ctx: PhaseContext, fixed: bool) -> PhaseOutput:
    """baseline: prompts under the user's column name (`--set prompt_column=...`, default
    "question"); treatment: the column renamed to "prompt"."""
    from probes._grpo import length_reward

    theirs = str(ctx.options.get("prompt_column", "question"))
    key = "prompt" if fixed else theirs
    _grpo_step(ctx, length_reward, {key: _prompts()})
    return {"detail": f"prompts under {key!r}: one GRPO step done", "info": {"prompt_column": key}}


def accuracy_reward(prompts, completions, solution, **kwargs) -> list[float]:
    """A reward that needs the dataset's `solution` column (trl passes extra columns as kwargs)."""
    return [float(str(s) in str(c)) for c, s in zip(completions, solution)]


def grpo_reward_missing_column(ctx: PhaseContext, fixed: bool) -> PhaseOutput:
    """A reward that needs `solution`. baseline: the user's dataset columns (`--set
    dataset_columns=prompt,answer`, default just "prompt"); treatment: a `solution` column added."""
    columns = [c.strip() for c in str(ctx.options.get("dataset_columns", "prompt")).split(",") if c.strip()]
    if "prompt" not in columns:
        columns.insert(0, "prompt")
    if fixed and "solution" not in columns:
        columns.append("solution")
    prompts = _prompts()
    cols: dict[str, list] = {c: (prompts if c == "prompt" else ["4"] * len(prompts)) for c in columns}
    _grpo_step(ctx, accuracy_reward, cols)
    return {"detail": f"dataset columns {columns}: one GRPO step done", "info": {"columns": columns}}


def batch_reward(prompts, completions, **kwargs) -> list[float]:
    """The mistake: one number for the whole batch instead of one per completion."""
    return [sum(len(str(c)) for c in completions) / max(1, len(completions))]


def per_completion_reward(prompts, completions, **kwargs) -> list[float]:
    return [float(len(str(c))) for c in completions]


def grpo_reward_wrong_count(ctx: PhaseContext, fixed: bool) -> None:
    _grpo_step(ctx, per_completion_reward if fixed else batch_reward, {"prompt": _prompts()})


def string_column_collator(ctx: PhaseContext, fixed: bool) -> None:
    """One Trainer step over a tokenized dataset that still holds its raw `text` column, with
    `remove_unused_columns=False` (how the strings reach the padding collator); the fix keeps the
    default, which drops columns the model's forward does not take."""
    from datasets import Dataset
    from transformers import DataCollatorForLanguageModeling, Trainer, TrainingArguments

    tok = _tok(ctx)
    texts = ["Write a short poem about the sea.", "What is 2 + 2?"] * 2
    data = Dataset.from_dict({"text": texts}).map(lambda b: tok(b["text"]), batched=True)
    args = TrainingArguments(**_args(ctx), remove_unused_columns=fixed)
    collator = DataCollatorForLanguageModeling(tok, mlm=False)
    Trainer(model=load_model(ctx), args=args, train_dataset=data, data_collator=collator).train()
    _say(f"Trainer step with remove_unused_columns={fixed}: done")


# --------------------------------------------------------------------------- import-shadowing


def trl_shadowed(ctx: PhaseContext, fixed: bool) -> None:
    """baseline: the reporter's situation, an interpreter in which trl is not a regular installed
    package (emulated with ``python -S``: no site-packages) run from a directory holding ``trl/`` (a
    clone of the repository); treatment: the fix, the folder renamed and the environment that has
    trl installed. (With trl installed as a regular package, a local folder does not shadow it.)"""
    run_dir = Path(ctx.workdir) / "project"
    run_dir.mkdir(parents=True, exist_ok=True)
    folder = run_dir / "trl"
    if fixed:
        if folder.exists():
            folder.rename(run_dir / "trl-src")
    else:
        folder.mkdir(exist_ok=True)
    # `--set trl_installed=true`: the user's interpreter has trl as a regular package (then a local
    # folder does not shadow it, and the probe says so)
    installed = str(ctx.options.get("trl_installed", "false")).lower() in ("1", "true", "yes")
    flags = [] if (fixed or installed) else ["-S"]
    res = subprocess.run(
        [sys.executable, *flags, "-c", "from trl import SFTTrainer; print('imported', SFTTrainer.__module__)"],
        cwd=run_dir,
        capture_output=True,
        text=True,
        timeout=300,
    )
    print(res.stdout + res.stderr, flush=True)
    if res.returncode != 0:
        raise ImportError(res.stderr.strip().splitlines()[-1] if res.stderr.strip() else "import failed")


# --------------------------------------------------------------------------- optional deps (transformers 5.3)

_COERCE = (
    "import trl.import_utils as u\n"
    "for n in dir(u):\n"
    "    v = getattr(u, n)\n"
    "    if n.endswith('_available') and isinstance(v, tuple):\n"
    "        setattr(u, n, bool(v[0]))\n"
)


def trl_optional_deps(ctx: PhaseContext, fixed: bool) -> dict:
    """baseline: `from trl import GRPOTrainer, SFTTrainer` in a fresh process of this interpreter
    (under `--versions`, the reporter's trl and transformers); treatment: the same after turning
    the `(found, version)` tuples trl stored from transformers' `_is_package_available` back into
    booleans — what trl 0.29 (#5129) does with its own helper. On stacks where trl already stores
    booleans the treatment changes nothing."""
    code = (
        _COERCE if fixed else ""
    ) + "from trl import GRPOTrainer, SFTTrainer; print('imported', GRPOTrainer.__module__)"
    res = subprocess.run([sys.executable, "-c", code], cwd=ctx.workdir, capture_output=True, text=True, timeout=300)
    print(res.stdout + res.stderr[-3000:], flush=True)
    if res.returncode != 0:
        raise RuntimeError(res.stderr.strip().splitlines()[-1] if res.stderr.strip() else "import failed")
    import importlib.util

    tuples = []
    if importlib.util.find_spec("trl"):
        import trl.import_utils as u

        tuples = sorted(n for n in dir(u) if n.endswith("_available") and isinstance(getattr(u, n), tuple))
    return {"detail": "trl trainers imported", "info": {"availability_flags_stored_as_tuples": tuples}}


#: case id -> scenario(ctx, fixed)
SCENARIOS: dict[str, Callable[[PhaseContext, bool], Any]] = {
    "trainer-tokenizer-renamed-processing-class": sft_tokenizer_kwarg,
    "trl-sfttrainer-moved-renamed-args": sft_max_seq_length,
    "dpo-hyperparams-moved-to-config": dpo_beta_kwarg,
    "dpo-ref-model-with-peft-config": dpo_ref_and_peft,
    "peft-on-peft-peftmodel-plus-peft-config": peft_model_plus_config,
    "evaluation-strategy-removed-transformers-4.51": evaluation_strategy,
    "peftmodel-generate-positional-args": peft_generate_positional,
    "adapter-config-missing-wrong-path-or-checkpoint": adapter_dir,
    "peftmodel-from-pretrained-frozen-is-trainable": adapter_frozen,
    "prepare-model-for-int8-training-removed": int8_helper_import,
    "reward-model-config-pad-token-id-missing": reward_model_pad,
    "right-padding-in-rl-generation": right_padding_generate,
    "trl-shadowed-by-local-directory": trl_shadowed,
    "dataset-missing-prompt-column": grpo_missing_prompt_column,
    "grpo-reward-func-missing-dataset-column": grpo_reward_missing_column,
    "reward-func-invalid-return-value": grpo_reward_wrong_count,
    "adapter-vocab-size-mismatch-resized-embeddings": adapter_after_resize,
    "embedding-layers-saved-into-adapter": embeddings_saved_into_adapter,
    "state-dict-override-empty-adapter-443-bytes": state_dict_override,
    "all-linear-unsupported-old-peft": all_linear,
    "prefix-tuning-legacy-tuple-past-key-values": prefix_tuning_forward,
    "adapter-config-newer-peft-keys": adapter_config_newer_keys,
    "task-type-mismatch-base-model-class": base_class_for_causal_lm,
    "use-cache-with-gradient-checkpointing-warning": use_cache_warning,
    "torch-load-needs-torch-2.6": torch_load_checkpoint,
    "trainer-label-names-peftmodel-warning": trainer_label_names,
    "master-port-in-use": torchrun_port,
    "trl-optional-deps-misdetected-transformers-5.3": trl_optional_deps,
    "grpo-config-args-removed-trl-0.28": grpo_config_removed_args,
    "target-modules-regex-inside-list": regex_inside_target_list,
    "adapter-config-removed-legacy-peft-keys": adapter_config_legacy_keys,
    "collator-string-column-unable-to-create-tensor": string_column_collator,
}


def run_phase(phase: str, ctx: PhaseContext) -> PhaseOutput:
    if phase not in ("baseline", "treatment"):
        raise ValueError(f"unknown phase {phase!r}")
    scenario = SCENARIOS[ctx.case_id]
    out = scenario(ctx, phase == "treatment")
    return out if isinstance(out, dict) else {"detail": "ran without error"}  # type: ignore[return-value]


PROBE = FunctionProbe(
    descriptions=DESCRIPTIONS,
    run_phase=run_phase,
    not_reproduced_note=(
        "the installed libraries accept this call (the failure belongs to other releases: see the "
        "case's affected versions, or run the probe with --versions on yours)"
    ),
)
