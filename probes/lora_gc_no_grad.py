"""LoRA + reentrant gradient checkpointing without the input-grad hook → loss without grad_fn.

baseline   the natural user paths: a PeftModel in transformers.Trainer with gradient
           checkpointing (use_reentrant=True), and GRPOTrainer(peft_config=LoraConfig,
           gradient_checkpointing=True) with default checkpointing kwargs (when trl is present).
treatment  the same paths with the fixes: use_reentrant=False / enable_input_require_grads().
mechanism  the hook bypassed on purpose (gradient_checkpointing_enable, then
           disable_input_require_grads()) — shows the mechanism on versions that add the hook
           themselves; reported as such, never as the user's verdict.
"""

from __future__ import annotations

from typing import Any

from probes._base import (
    LMDataset,
    attempt,
    ensure_pad,
    lm_batch,
    load_model,
    load_tokenizer,
    lora_targets,
    training_args_kwargs,
    version_of,
)
from probes.contract import FunctionProbe, PhaseContext, PhaseOutput

DESCRIPTIONS = {
    "baseline": "LoRA + gradient checkpointing (reentrant) through Trainer and GRPOTrainer, as users run it",
    "treatment": "the same with use_reentrant=False, and with enable_input_require_grads()",
    "mechanism": "hook bypassed on purpose: gradient_checkpointing_enable(reentrant) then disable_input_require_grads()",
}

FALLBACK_SYMPTOMS = {
    "lora-gradient-checkpointing-no-grad": {
        "exceptions": ["RuntimeError"],
        "messages": [{"pattern": "element 0 of tensors does not require grad and does not have a grad_fn"}],
        "log_patterns": [{"pattern": "None of the inputs have requires_grad=True. Gradients will be None"}],
    }
}

NOT_REPRODUCED_NOTE = (
    "not reproduced on the natural paths with these versions: transformers >= 5 registers the "
    "input-grad hook (enable_input_require_grads) in gradient_checkpointing_enable and defaults to "
    "use_reentrant=False; peft adds the hook when the base model already has checkpointing on; "
    "trl's GRPO/SFT trainers call enable_input_require_grads() for PEFT + checkpointing"
)

_SIG = "does not require grad"


def _peft(ctx: PhaseContext):
    from peft import LoraConfig, get_peft_model

    model = load_model(ctx)
    cfg = LoraConfig(r=8, lora_alpha=16, target_modules=lora_targets(model), task_type="CAUSAL_LM")
    return get_peft_model(model, cfg)


def _lora_config(ctx: PhaseContext, model=None):
    from peft import LoraConfig

    targets = lora_targets(model) if model is not None else ["q_proj", "v_proj"]
    return LoraConfig(r=8, lora_alpha=16, target_modules=targets, task_type="CAUSAL_LM")


def _trainer_path(ctx: PhaseContext, reentrant: bool, fix_hook: bool = False) -> None:
    from transformers import Trainer, TrainingArguments

    tok = load_tokenizer(ctx)
    ensure_pad(tok)
    model = _peft(ctx)
    if fix_hook:
        model.enable_input_require_grads()
    args = TrainingArguments(
        **training_args_kwargs(
            ctx, ctx.workdir, gradient_checkpointing=True, gradient_checkpointing_kwargs={"use_reentrant": reentrant}
        )
    )
    Trainer(model=model, args=args, train_dataset=LMDataset(tok)).train()


def _grpo_path(ctx: PhaseContext, gc_kwargs: dict | None) -> None:
    from probes._grpo import run_grpo

    model = load_model(ctx)
    over: dict[str, Any] = {"gradient_checkpointing": True}
    if gc_kwargs is not None:
        over["gradient_checkpointing_kwargs"] = gc_kwargs
    run_grpo(ctx, ctx.workdir, model=model, peft_config=_lora_config(ctx, model), label="grpo", **over)


def _manual(ctx: PhaseContext, *, bypass_hook: bool, fix: str | None) -> dict:
    """get_peft_model → gradient_checkpointing_enable(reentrant) → [disable hook] → [fix] → step."""
    import torch

    tok = load_tokenizer(ctx)
    model = _peft(ctx)
    reentrant = fix != "use_reentrant=False"
    model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": reentrant})
    if bypass_hook:
        try:
            model.disable_input_require_grads()
        except AttributeError:  # transformers 4.x registered no hook here: nothing to bypass
            print("no input-grad hook was registered (nothing to bypass)", flush=True)
    if fix == "enable_input_require_grads":
        model.enable_input_require_grads()
    model.train()
    batch = lm_batch(tok, ctx.device)
    out = model(**batch)
    print(f"loss.requires_grad={out.loss.requires_grad} grad_fn={out.loss.grad_fn}", flush=True)
    out.loss.backward()
    grads = [p.grad for n, p in model.named_parameters() if "lora_" in n and p.requires_grad]
    nonzero = sum(1 for g in grads if g is not None and torch.count_nonzero(g) > 0)
    print(f"LoRA tensors with a non-zero grad: {nonzero}/{len(grads)}", flush=True)
    return {"lora_grads_nonzero": nonzero, "lora_tensors": len(grads)}


def _summarise(results: list[dict]) -> PhaseOutput:
    hits = [r for r in results if not r["ok"] and _SIG in r["exception"]]
    other = [r for r in results if not r["ok"] and _SIG not in r["exception"]]
    lines = [f"{r['label']}: {'ok' if r['ok'] else r['exception'][:160]}" for r in results]
    if other and not hits:
        raise RuntimeError("unrelated failure: " + "; ".join(f"{r['label']}: {r['exception']}" for r in other))
    return {
        "detected": bool(hits),
        "detail": "; ".join(lines),
        "info": {"scenarios": {r["label"]: (r["exception"] if not r["ok"] else "ok") for r in results}},
    }


def run_phase(phase: str, ctx: PhaseContext) -> PhaseOutput:
    has_trl = version_of("trl") is not None
    if phase == "baseline":
        res = [
            attempt(
                "Trainer(PeftModel, gradient_checkpointing=True, use_reentrant=True)",
                lambda: _trainer_path(ctx, reentrant=True),
            )
        ]
        if has_trl:
            res.append(
                attempt(
                    "GRPOTrainer(peft_config=LoraConfig, gradient_checkpointing=True, default kwargs)",
                    lambda: _grpo_path(ctx, None),
                )
            )
        return _summarise(res)
    if phase == "treatment":
        res = [
            attempt(
                "Trainer(PeftModel, gradient_checkpointing=True, use_reentrant=False)",
                lambda: _trainer_path(ctx, reentrant=False),
            ),
            attempt(
                "Trainer(PeftModel + enable_input_require_grads(), use_reentrant=True)",
                lambda: _trainer_path(ctx, reentrant=True, fix_hook=True),
            ),
            attempt(
                "hook bypassed, then enable_input_require_grads()",
                lambda: _manual(ctx, bypass_hook=True, fix="enable_input_require_grads"),
            ),
            attempt(
                "hook bypassed, use_reentrant=False", lambda: _manual(ctx, bypass_hook=True, fix="use_reentrant=False")
            ),
        ]
        if has_trl:
            res.append(
                attempt(
                    "GRPOTrainer(peft_config, gradient_checkpointing_kwargs={'use_reentrant': False})",
                    lambda: _grpo_path(ctx, {"use_reentrant": False}),
                )
            )
        return _summarise(res)
    if phase == "mechanism":
        res = [
            attempt(
                "get_peft_model → gradient_checkpointing_enable(use_reentrant=True) → disable_input_require_grads()",
                lambda: _manual(ctx, bypass_hook=True, fix=None),
            )
        ]
        return _summarise(res)
    raise ValueError(f"unknown phase {phase!r}")


def decide(case_id: str, phases: dict, env: dict):
    from probes.result import Verdict
    from probes.verdicts import default_decide

    verdict, notes = default_decide(phases, NOT_REPRODUCED_NOTE)
    mech = phases.get("mechanism")
    if mech is not None:
        if mech.reproduced:
            fixed = phases["treatment"].reproduced is False
            notes.append(
                "mechanism shown with the hook bypassed (disable_input_require_grads()): "
                "'element 0 of tensors does not require grad' reproduced"
                + ("; both fixes (enable_input_require_grads, use_reentrant=False) clear it" if fixed else "")
                + " — this is a demonstration, not your verdict"
            )
        elif verdict is not Verdict.error:
            notes.append(f"mechanism phase (hook bypassed) did not reproduce either: {mech.exception or mech.detail}")
    return verdict, notes


PROBE = FunctionProbe(
    descriptions=DESCRIPTIONS,
    fallback_symptoms=FALLBACK_SYMPTOMS,
    not_reproduced_note=NOT_REPRODUCED_NOTE,
    run_phase=run_phase,
    decide=decide,
)
