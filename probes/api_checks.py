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
from probes.contract import PhaseContext, PhaseOutput, Probe

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


# --------------------------------------------------------------------------- transformers-api


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


def grpo_missing_prompt_column(ctx: PhaseContext, fixed: bool) -> None:
    from probes._grpo import length_reward

    key = "prompt" if fixed else "question"  # the fix: rename the column to "prompt"
    _grpo_step(ctx, length_reward, {key: _prompts()})


def accuracy_reward(prompts, completions, solution, **kwargs) -> list[float]:
    """A reward that needs the dataset's `solution` column (trl passes extra columns as kwargs)."""
    return [float(str(s) in str(c)) for c, s in zip(completions, solution)]


def grpo_reward_missing_column(ctx: PhaseContext, fixed: bool) -> None:
    cols: dict[str, list] = {"prompt": _prompts()}
    if fixed:
        cols["solution"] = ["4"] * len(cols["prompt"])
    _grpo_step(ctx, accuracy_reward, cols)


def batch_reward(prompts, completions, **kwargs) -> list[float]:
    """The mistake: one number for the whole batch instead of one per completion."""
    return [sum(len(str(c)) for c in completions) / max(1, len(completions))]


def per_completion_reward(prompts, completions, **kwargs) -> list[float]:
    return [float(len(str(c))) for c in completions]


def grpo_reward_wrong_count(ctx: PhaseContext, fixed: bool) -> None:
    _grpo_step(ctx, per_completion_reward if fixed else batch_reward, {"prompt": _prompts()})


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
    flags = [] if fixed else ["-S"]
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
}


def run_phase(phase: str, ctx: PhaseContext) -> PhaseOutput:
    if phase not in ("baseline", "treatment"):
        raise ValueError(f"unknown phase {phase!r}")
    scenario = SCENARIOS[ctx.case_id]
    out = scenario(ctx, phase == "treatment")
    return out if isinstance(out, dict) else {"detail": "ran without error"}  # type: ignore[return-value]


class ApiChecksProbe(Probe):
    """The contract (`probes.contract.Probe`) over this module's scenarios."""

    descriptions = DESCRIPTIONS
    not_reproduced_note = (
        "the installed libraries accept this call (the failure belongs to other releases: see the "
        "case's affected versions, or run the probe with --versions on yours)"
    )

    def run_phase(self, phase: str, ctx: PhaseContext) -> PhaseOutput:
        return run_phase(phase, ctx)


PROBE = ApiChecksProbe()
