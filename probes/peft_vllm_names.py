"""What a vLLM engine would receive from a PeftModel (vLLM itself does not run here).

The weights are fed to an emulation of vLLM's ``AutoWeightsLoader`` prefix walk over the base
architecture's module tree (same message format: ``There is no module or parameter named
'<prefix>' in <Arch>``). Real vLLM also fuses q/k/v into ``qkv_proj`` below ``model.``, so errors
deeper in the tree look different there; the top-level ``'base_model'`` failure is the same.

baseline             raw PeftModel ``state_dict`` names → the loader walk fails on 'base_model'
                     (with ``--set weight_sync=merged``, the user's sync already merges and maps
                     names: the walk passes → not-reproduced).
treatment            merge_adapter() + TRL's name rule, and merge_and_unload(): names == base
                     names, strict load OK, logits identical to the PeftModel's.
strip-without-merge  TRL's name rule without merging: names fit, but the adapter is silently
                     lost (logits differ) — the quiet variant of the same mistake.
"""

from __future__ import annotations

from probes._base import lm_batch, load_model, load_tokenizer, lora_targets
from probes.contract import FunctionProbe, PhaseContext, PhaseOutput

DESCRIPTIONS = {
    "baseline": "raw PeftModel weight names through a vLLM-style load_weights name walk",
    "treatment": "merge_adapter() + TRL's name mapping, and merge_and_unload(): names and logits checked",
    "strip-without-merge": "TRL's name mapping without merging: names fit, logits checked",
}

FALLBACK_SYMPTOMS = {
    "peft-vllm-base-model-weight-names": {
        "exceptions": ["ValueError"],
        "messages": [{"pattern": r"There is no module or parameter named 'base_model' in \w+", "kind": "regex"}],
    }
}


def vllm_name_walk(model, names) -> None:
    """Emulates vLLM AutoWeightsLoader: every dotted name must resolve to a submodule path ending
    in a parameter or buffer of the target architecture."""
    root = type(model).__name__
    for name in names:
        mod, prefix = model, []
        parts = name.split(".")
        for i, part in enumerate(parts):
            prefix.append(part)
            children = dict(mod.named_children())
            if part in children:
                mod = children[part]
                continue
            last = i == len(parts) - 1
            if last and (
                part in dict(mod.named_parameters(recurse=False)) or part in dict(mod.named_buffers(recurse=False))
            ):
                break
            raise ValueError(f"There is no module or parameter named '{'.'.join(prefix)}' in {root}")


def trl_name(name: str) -> str | None:
    """TRL's mapping (trl/generation/vllm_generation.py, trl 1.16) of PeftModel names to base names."""
    name = name.removeprefix("base_model.model.").replace(".base_layer", "")
    if "lora_" in name or "original_module" in name:
        return None
    return name.replace("modules_to_save.default.", "")


def _merged_state(peft_model) -> dict:
    """The adapter merged in, the state under TRL's base names (copies), the adapter unmerged again."""
    peft_model.merge_adapter()
    sd = {}
    for k, v in peft_model.state_dict().items():
        n = trl_name(k)
        if n is not None:
            sd[n] = v.detach().clone()
    peft_model.unmerge_adapter()
    return sd


def _setup(ctx):
    import torch
    from peft import LoraConfig, get_peft_model

    torch.manual_seed(0)
    base = load_model(ctx)
    base_names = set(base.state_dict().keys())
    cfg = LoraConfig(
        r=8, lora_alpha=16, target_modules=lora_targets(base), init_lora_weights=False, task_type="CAUSAL_LM"
    )
    peft_model = get_peft_model(base, cfg)
    peft_model.eval()
    tok = load_tokenizer(ctx)
    batch = lm_batch(tok, ctx.device)
    batch.pop("labels")
    return peft_model, base_names, batch


def _fresh_base(ctx):
    return load_model(ctx).eval()


def _logits(model, batch):
    import torch

    with torch.no_grad():
        return model(**batch).logits.float()


def run_phase(phase: str, ctx: PhaseContext) -> PhaseOutput:
    import torch

    peft_model, base_names, batch = _setup(ctx)
    ref = _logits(peft_model, batch)
    if phase == "baseline" and str(ctx.options.get("weight_sync", "raw")).lower() == "merged":
        # the user's sync already merges and maps names (TRL's way, or their own): the fix is in place
        names = list(_merged_state(peft_model))
        print(f"your sync (weight_sync=merged): {len(names)} merged, renamed keys", flush=True)
        vllm_name_walk(_fresh_base(ctx), names)
        return {"detected": False, "detail": "merged weights under base names resolve in the base architecture"}
    if phase == "baseline":
        names = list(peft_model.state_dict().keys())
        print(
            f"PeftModel state_dict: {len(names)} keys, e.g. {names[:3]}; base has {len(base_names)} keys; "
            f"{len(set(names) & base_names)} in common",
            flush=True,
        )
        target = _fresh_base(ctx)
        vllm_name_walk(target, names)  # raises the vLLM-style ValueError
        return {"detected": False, "detail": "raw PeftModel names resolved in the base architecture"}
    if phase == "treatment":
        checks = []
        sd = _merged_state(peft_model)
        target = _fresh_base(ctx)
        vllm_name_walk(target, sd.keys())
        missing, unexpected = target.load_state_dict(sd, strict=False)
        same_names = set(sd) == base_names
        out = _logits(target, batch)
        diff = float((out - ref).abs().max())
        after_unmerge = float((_logits(peft_model, batch) - ref).abs().max())
        checks.append(
            f"merge_adapter + TRL names: names == base names: {same_names}, missing {len(missing)}, "
            f"unexpected {len(unexpected)}, max |logit diff| {diff:.2e}; PeftModel unchanged after "
            f"unmerge: {after_unmerge:.2e}"
        )
        merged = peft_model.merge_and_unload()
        m_names = set(merged.state_dict().keys())
        diff2 = float((_logits(merged, batch) - ref).abs().max())
        checks.append(
            f"merge_and_unload: {type(merged).__name__}, keys == base keys: {m_names == base_names}, "
            f"max |logit diff| {diff2:.2e}"
        )
        ok = same_names and not missing and not unexpected and diff < 1e-4 and m_names == base_names and diff2 < 1e-4
        for c in checks:
            print(c, flush=True)
        if not ok:
            raise AssertionError("merged weights do not reproduce the PeftModel: " + " | ".join(checks))
        return {
            "detected": False,
            "detail": " | ".join(checks),
            "info": {"logit_diff_merge_adapter": diff, "logit_diff_merge_and_unload": diff2},
        }
    if phase == "strip-without-merge":
        sd = {}
        for k, v in peft_model.state_dict().items():
            n = trl_name(k)
            if n is not None:
                sd[n] = v.detach().clone()
        target = _fresh_base(ctx)
        vllm_name_walk(target, sd.keys())
        target.load_state_dict(sd, strict=True)
        diff = float((_logits(target, batch) - ref).abs().max())
        lost = diff > 1e-4
        detail = (
            f"names == base names: {set(sd) == base_names}; max |logit diff| vs the PeftModel "
            f"{diff:.3g}: {'the adapter is silently dropped' if lost else 'no difference'}"
        )
        print(detail, flush=True)
        _ = torch
        return {"detected": lost, "detail": detail, "check_matcher": False, "info": {"logit_diff": diff}}
    raise ValueError(f"unknown phase {phase!r}")


def decide(case_id: str, phases: dict, env: dict):
    from probes.result import Verdict
    from probes.verdicts import default_decide

    verdict, notes = default_decide(phases)
    s = phases.get("strip-without-merge")
    if s is not None and s.reproduced:
        notes.append(
            "stripping 'base_model.model.' / '.base_layer' and dropping lora_* without merging gives "
            "names vLLM accepts, but the adapter is silently lost (logits differ): merge first"
        )
    notes.append("emulated vLLM name walk (vLLM is not run here); real vLLM also fuses q/k/v below 'model.'")
    if verdict is Verdict.confirmed:  # the message came from our emulation of vLLM's loader, not vLLM
        verdict = Verdict.reproduced_in_part
    return verdict, notes


PROBE = FunctionProbe(
    descriptions=DESCRIPTIONS, fallback_symptoms=FALLBACK_SYMPTOMS, run_phase=run_phase, decide=decide
)
