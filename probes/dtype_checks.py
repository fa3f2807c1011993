"""Trainable-parameter dtypes (a tiny replica in your config's dtype when --model is given).

fp16-trainable-params-unscale
    baseline   model loaded in float16, get_peft_model with peft's defaults (or the user's
               autocast_adapter_dtype), one fp16 AMP step (GradScaler.scale → backward →
               unscale_, what Trainer(fp16=True) does).
    treatment  the same with every trainable parameter cast to float32.
    mechanism  trainable parameters left in fp16 (peft < 0.12 without adapter autocast, or
               model.half() after get_peft_model) → "Attempting to unscale FP16 gradients."
lora-dtype-mismatch-float-bfloat16
    baseline   bfloat16 base + LoRA (peft defaults), forward and generate without autocast.
    treatment  the mismatched model below, run under torch.autocast(bfloat16).
    mechanism  a float32 module feeding bfloat16 layers without autocast (an upcast embedding /
               norm, as older k-bit preparation and custom scripts do) → dtype mismatch in a matmul.
"""

from __future__ import annotations

from probes._base import lm_batch, load_tokenizer, lora_targets
from probes.contract import FunctionProbe, PhaseContext, PhaseOutput

FP16 = "fp16-trainable-params-unscale"
BF16 = "lora-dtype-mismatch-float-bfloat16"

DESCRIPTIONS = {
    "baseline": "the natural path: half-precision base + get_peft_model defaults",
    "treatment": "with the fix (fp32 trainable params / autocast)",
    "mechanism": "trainable params or a module left in the wrong dtype on purpose",
}

FALLBACK_SYMPTOMS = {
    FP16: {"exceptions": ["ValueError"], "messages": [{"pattern": "Attempting to unscale FP16 gradients."}]},
    BF16: {
        "exceptions": ["RuntimeError"],
        "messages": [
            {"pattern": "expected scalar type (Float|BFloat16|Half) but found (Float|BFloat16|Half)", "kind": "regex"},
            {
                "pattern": "mat1 and mat2 must have the same dtype, but got (Float|BFloat16|Half) and (Float|BFloat16|Half)",
                "kind": "regex",
            },
        ],
    },
}

NOT_REPRODUCED = {
    FP16: "not reproduced on the natural path: peft (>= 0.12, autocast_adapter_dtype=True) keeps LoRA weights "
    "in float32 on a float16 base; it still happens when trainable weights end up fp16 (see mechanism)",
    BF16: "not reproduced on the natural path: peft's LoRA forward casts its input to the adapter dtype; it "
    "still happens when modules of different dtypes meet without autocast (see mechanism)",
}


def phases(case_id: str) -> list[str]:
    return ["baseline", "treatment", "mechanism"]


def _model_path(ctx) -> str:
    if ctx.model_source == "user":  # never load a full user model for a dtype check
        from probes.tiny import build_replica

        return str(build_replica(ctx.model_path, f"{ctx.workdir}/replica", trust_remote_code=ctx.trust_remote_code))
    return ctx.model_path


def _peft(ctx, dtype, **kw):
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    from probes._base import from_pretrained_kwargs

    torch.manual_seed(0)
    m = AutoModelForCausalLM.from_pretrained(ctx.model_path, **from_pretrained_kwargs(ctx, dtype))
    m.to(ctx.device)
    return get_peft_model(m, LoraConfig(r=8, target_modules=lora_targets(m), task_type="CAUSAL_LM"), **kw)


def _amp_step(ctx, model) -> dict:
    import torch

    dev = ctx.device
    tok = load_tokenizer(ctx)
    batch = lm_batch(tok, dev)
    train = [p for p in model.parameters() if p.requires_grad]
    dtypes = sorted({str(p.dtype) for p in train})
    for n, p in model.named_parameters():
        if p.requires_grad and "lora_A" in n:
            print(f"{n} requires_grad=True {p.dtype}", flush=True)
            break
    opt = torch.optim.AdamW(train, lr=1e-4)
    scaler = torch.amp.GradScaler(dev)
    with torch.autocast(dev, dtype=torch.float16):
        loss = model(**batch).loss
    scaler.scale(loss).backward()
    scaler.unscale_(opt)  # Trainer: clip_grad_norm_ → unscale_
    torch.nn.utils.clip_grad_norm_(train, 1.0)
    scaler.step(opt)
    scaler.update()
    return {"trainable_dtypes": dtypes}


def _forward_generate(ctx, model, autocast: bool) -> None:
    import contextlib

    import torch

    dev = ctx.device
    tok = load_tokenizer(ctx)
    batch = lm_batch(tok, dev)
    cm = torch.autocast(dev, dtype=torch.bfloat16) if autocast else contextlib.nullcontext()
    with cm:
        model(**batch)
        batch.pop("labels")
        model.generate(**batch, max_new_tokens=4, do_sample=False, pad_token_id=tok.pad_token_id)


def _upcast_embeddings(model) -> str:
    emb = model.get_input_embeddings()
    emb.float()
    return "input embeddings upcast to float32 in a bfloat16 model"


def run_phase(phase: str, ctx: PhaseContext) -> PhaseOutput:
    import torch

    case = ctx.case_id
    ctx = ctx.replace(model_path=_model_path(ctx))  # a replica for a user model
    if case == FP16:
        if phase == "baseline":  # the user's peft setting when given (--set autocast_adapter_dtype=false)
            keep = str(ctx.options.get("autocast_adapter_dtype", "true")).strip().lower() not in (
                "0",
                "false",
                "no",
                "off",
            )
            info = _amp_step(ctx, _peft(ctx, torch.float16, autocast_adapter_dtype=keep))
            info["autocast_adapter_dtype"] = keep
        elif phase == "treatment":
            m = _peft(ctx, torch.float16, autocast_adapter_dtype=False)
            for p in m.parameters():
                if p.requires_grad:
                    p.data = p.data.float()
            info = _amp_step(ctx, m)
        else:
            info = _amp_step(ctx, _peft(ctx, torch.float16, autocast_adapter_dtype=False))
        detail = f"fp16 AMP step ok; trainable dtypes {info['trainable_dtypes']}"
        print(detail, flush=True)
        return {"detail": detail, "info": info}
    if case == BF16:
        m = _peft(ctx, torch.bfloat16)
        what = "bfloat16 base + LoRA (peft defaults)"
        if phase in ("treatment", "mechanism"):
            what = _upcast_embeddings(m)
        _forward_generate(ctx, m, autocast=(phase == "treatment"))
        detail = f"{what}: forward + generate ok" + (" under autocast" if phase == "treatment" else "")
        print(detail, flush=True)
        return {"detail": detail}
    raise ValueError(f"dtype-checks has no check for case {case!r}")


def decide(case_id: str, phases: dict, env: dict):
    from probes.verdicts import default_decide

    verdict, notes = default_decide(phases, NOT_REPRODUCED.get(case_id, ""))
    mech = phases.get("mechanism")
    if mech is not None and mech.reproduced:
        notes.append(
            f"mechanism shown on purpose ({mech.description}): {mech.exception or mech.detail}"
            " — the fix in the treatment clears the same setup"
        )
    return verdict, notes


PROBE = FunctionProbe(
    descriptions=DESCRIPTIONS, fallback_symptoms=FALLBACK_SYMPTOMS, phases=phases, run_phase=run_phase, decide=decide
)
