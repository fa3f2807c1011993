"""Setup phase: build the built-in tiny model or the tiny replica; read the user's config."""

from __future__ import annotations

import json
from pathlib import Path

from probes.contract import FunctionProbe, PhaseOutput, SetupContext

DESCRIPTIONS = {"setup": "prepare the model directory"}


def _config_info(path: str, trust_remote_code: bool) -> dict:
    info: dict = {}
    cfg_file = Path(path) / "config.json"
    if cfg_file.is_file():
        raw = json.loads(cfg_file.read_text())
        info["config_dtype"] = raw.get("dtype") or raw.get("torch_dtype")
        info["model_type"] = raw.get("model_type")
        info["architectures"] = raw.get("architectures")
        info["quantization"] = (raw.get("quantization_config") or {}).get("quant_method")
    return info


def run_phase(phase: str, ctx: SetupContext) -> PhaseOutput:
    from probes.tiny import build_replica, build_tiny

    src = ctx.user_model
    out = Path(ctx.workdir) / "model"
    trust = ctx.trust_remote_code
    if src and ctx.tiny_replica:
        build_replica(src, out, trust_remote_code=trust)
        info = _config_info(str(out), trust)
        info.update(source="tiny-replica", model_path=str(out), of=src)
        info["config_dtype"] = "float32"
    elif src:
        info = _config_info(src, trust)
        info.update(source="user", model_path=src)
    else:
        build_tiny(out, ctx.arch)
        info = _config_info(str(out), trust)
        info.update(source="builtin-tiny", model_path=str(out))
    print(f"model: {info['source']} at {info['model_path']}", flush=True)
    return {"detail": f"{info['source']}: {info['model_path']}", "info": info}


PROBE = FunctionProbe(descriptions=DESCRIPTIONS, context_type=SetupContext, run_phase=run_phase)
