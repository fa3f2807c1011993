"""LoRA target_modules against the architecture's real module names (meta device: no weights).

baseline   get_peft_model(model on the meta device, LoraConfig(target_modules=<yours, default the
           LLaMA recipe q_proj,v_proj>)) → peft's "Target modules … not found in the base model".
treatment  the same with target_modules suggested from the real linear layer names.
Lists every linear module name (excluding the output head) and suggests target_modules.
Options (``--set``): target_modules=q_proj,v_proj
"""

from __future__ import annotations

from probes.contract import FunctionProbe, PhaseContext, PhaseOutput

DESCRIPTIONS = {
    "baseline": "get_peft_model with your target_modules (default q_proj,v_proj) on the meta-device model",
    "treatment": "get_peft_model with target_modules suggested from the model's real linear layers",
}

FALLBACK_SYMPTOMS = {
    "target-modules-wrong-names-for-arch": {
        "exceptions": ["ValueError"],
        "messages": [{"pattern": r"Target modules? .{0,200} not found in the base model", "kind": "regex"}],
    }
}

_ATTN_HINTS = (
    "q_proj",
    "k_proj",
    "v_proj",
    "o_proj",
    "query_key_value",
    "c_attn",
    "W_pack",
    "wqkv",
    "qkv_proj",
    "query",
    "key",
    "value",
    "Wqkv",
    "q_a_proj",
    "kv_a_proj_with_mqa",
)


def _meta_model(ctx):
    from accelerate import init_empty_weights
    from transformers import AutoConfig, AutoModelForCausalLM

    trust = ctx.trust_remote_code
    cfg = AutoConfig.from_pretrained(ctx.model_path, trust_remote_code=trust)
    if hasattr(cfg, "quantization_config"):
        delattr(cfg, "quantization_config")
    with init_empty_weights():
        return AutoModelForCausalLM.from_config(cfg, trust_remote_code=trust)


def linear_names(model) -> dict[str, int]:
    """Leaf name -> count of nn.Linear (and Conv1D) modules, output head excluded."""
    import torch

    kinds: tuple[type, ...] = (torch.nn.Linear,)
    try:
        from transformers.pytorch_utils import Conv1D

        kinds = kinds + (Conv1D,)
    except ImportError:
        pass
    out: dict[str, int] = {}
    out_emb = model.get_output_embeddings() if hasattr(model, "get_output_embeddings") else None
    for name, mod in model.named_modules():
        if isinstance(mod, kinds) and mod is not out_emb:
            leaf = name.rsplit(".", 1)[-1]
            out[leaf] = out.get(leaf, 0) + 1
    return out


def suggest(names: dict[str, int]) -> list[str]:
    attn = [n for n in names if n in _ATTN_HINTS]
    return sorted(attn) if attn else sorted(names)


def run_phase(phase: str, ctx: PhaseContext) -> PhaseOutput:
    from peft import LoraConfig, get_peft_model

    model = _meta_model(ctx)
    names = linear_names(model)
    print(f"{type(model).__name__}: linear modules (leaf name: count) {names}", flush=True)
    wanted = ctx.options.get("target_modules") or "q_proj,v_proj"
    wanted_list = [w.strip() for w in str(wanted).split(",") if w.strip()]
    suggestion = suggest(names)
    info = {
        "architecture": type(model).__name__,
        "linear_modules": names,
        "requested": wanted_list,
        "suggested_target_modules": suggestion,
        "alternative": "target_modules='all-linear'",
    }
    targets = wanted_list if phase == "baseline" else suggestion
    pm = get_peft_model(model, LoraConfig(r=8, target_modules=targets, task_type="CAUSAL_LM"))
    n = sum(1 for k, _ in pm.named_parameters() if "lora_A" in k)
    detail = f"target_modules={targets}: {n} LoRA A matrices created; suggested target_modules={suggestion}"
    print(detail, flush=True)
    return {"detail": detail, "info": info}


def decide(case_id: str, phases: dict, env: dict):
    from probes.verdicts import default_decide

    verdict, notes = default_decide(phases, "not reproduced: your target_modules exist in this architecture")
    info = phases["treatment"].info or phases["baseline"].info
    if info:
        notes.append(
            f"{info.get('architecture')}: linear layers {sorted(info.get('linear_modules', {}))}; "
            f"suggested target_modules={info.get('suggested_target_modules')} (or 'all-linear')"
        )
    return verdict, notes


PROBE = FunctionProbe(
    descriptions=DESCRIPTIONS, fallback_symptoms=FALLBACK_SYMPTOMS, run_phase=run_phase, decide=decide
)
