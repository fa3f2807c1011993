"""DDP + reentrant gradient checkpointing + find_unused_parameters → "Expected to mark a variable
ready only once". Two real processes through torchrun (gloo on CPU, NCCL on GPU).

baseline     LoRA + the user's run: gradient checkpointing (default on), use_reentrant (default
             True), ddp_find_unused_parameters (default True), from --set / --config / the log;
             DDP, 2 steps. A run that already has one of the fixes comes out not-reproduced.
treatment    the fixes, each in the same launch: use_reentrant=False; find_unused_parameters=False;
             static_graph=True.
sft-default  trl SFTTrainer(peft_config=LoraConfig, gradient_checkpointing reentrant) with the
             default ddp_find_unused_parameters — does the trainer path hit it with defaults?
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from probes._base import version_of
from probes.contract import FunctionProbe, PhaseContext, PhaseOutput

DESCRIPTIONS = {
    "baseline": "torchrun ×2: LoRA + reentrant checkpointing + DDP(find_unused_parameters=True)",
    "treatment": "torchrun ×2: use_reentrant=False | find_unused_parameters=False | static_graph=True",
    "sft-default": "torchrun ×2: SFTTrainer + peft_config + reentrant checkpointing, default ddp_find_unused_parameters",
}

FALLBACK_SYMPTOMS = {
    "ddp-reentrant-gc-mark-ready-twice": {
        "exceptions": ["RuntimeError"],
        "messages": [{"pattern": "Expected to mark a variable ready only once"}],
    }
}

SCRIPT = str(Path(__file__).with_name("_ddp_script.py"))


def phases(case_id: str) -> list[str]:
    out = ["baseline", "treatment"]
    if version_of("trl"):
        out.append("sft-default")
    return out


def _launch(ctx, args: list[str]) -> int:
    env = dict(os.environ)
    env["PROBE_DEVICE"] = ctx.device
    env["PROBE_WORKDIR"] = ctx.workdir
    env.setdefault("OMP_NUM_THREADS", "1")
    cmd = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--nproc_per_node",
        "2",
        "--master_port",
        str(_free_port()),
        SCRIPT,
        ctx.model_path,
        *args,
    ]
    print("$ " + " ".join(cmd[2:]), flush=True)
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    assert proc.stdout is not None
    for line in proc.stdout:
        sys.stdout.write(line)
        sys.stdout.flush()
    return proc.wait()


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def skip_reason(env: dict) -> str | None:
    if env.get("device") == "cuda" and env.get("cuda_devices", 0) < 2:
        return "needs 2 processes: on CUDA that means 2 GPUs (run with --device cpu to use gloo instead)"
    return None


#: the user's settings this probe reads, and the defaults it falls back to (the failing setup)
DEFAULTS = {"gradient_checkpointing": True, "use_reentrant": True, "ddp_find_unused_parameters": True}


def _flag(value: object) -> bool:
    return str(value).strip().lower() in ("1", "true", "yes", "on")


def settings(ctx: PhaseContext) -> dict[str, bool]:
    """The user's values (where given) over the defaults."""
    return {k: _flag(ctx.options[k]) if k in ctx.options else v for k, v in DEFAULTS.items()}


def baseline_variant(s: dict[str, bool]) -> str:
    parts = [
        "lora",
        "reentrant" if s["use_reentrant"] else "nonreentrant",
        "find1" if s["ddp_find_unused_parameters"] else "find0",
    ]
    if not s["gradient_checkpointing"]:
        parts.append("nogc")
    return ":".join(parts)


def run_phase(phase: str, ctx: PhaseContext) -> PhaseOutput:
    if phase == "baseline":
        s = settings(ctx)
        variant = baseline_variant(s)
        rc = _launch(ctx, ["--variant", variant])
        given = sorted(k for k in DEFAULTS if k in ctx.options)
        return {
            "detail": f"torchrun exited with {rc} ({variant})",
            "info": {"torchrun_rc": rc, "settings": s, "from_user": given},
        }
    elif phase == "treatment":
        rc = _launch(
            ctx,
            [
                "--variant",
                "lora:nonreentrant:find1",
                "--variant",
                "lora:reentrant:find0",
                "--variant",
                "lora:reentrant:find1:static",
            ],
        )
    elif phase == "sft-default":
        rc = _launch(ctx, ["--sft-default"])
    else:
        raise ValueError(f"unknown phase {phase!r}")
    return {"detail": f"torchrun exited with {rc}", "info": {"torchrun_rc": rc}}


def decide(case_id: str, phases: dict, env: dict):
    from probes.verdicts import default_decide

    verdict, notes = default_decide(phases)
    b = phases["baseline"].info
    if b.get("settings"):
        used = ", ".join(
            f"{k}={v}" + ("" if k in b.get("from_user", []) else " (default)") for k, v in b["settings"].items()
        )
        notes.insert(0, f"baseline run with: {used}")
    if verdict.value == "not-reproduced":
        if b.get("from_user"):
            notes.append("your settings already avoid it (one of the fixes is in place)")
        return verdict, notes
    if phases["baseline"].reproduced is False and phases["baseline"].info.get("torchrun_rc"):
        from probes.result import Verdict

        return Verdict.error, ["the baseline launch failed without the DDP error (see its output)"]
    t = phases["treatment"]
    if t.info.get("torchrun_rc") and not t.reproduced:
        from probes.result import Verdict

        return Verdict.error, ["a treatment launch failed differently (see its output)"]
    s = phases.get("sft-default")
    if s is not None:
        if s.reproduced:
            notes.append(
                "SFTTrainer + peft_config + reentrant checkpointing hits it with the DEFAULT "
                "ddp_find_unused_parameters (a PeftModel is not a PreTrainedModel, so the trainer "
                "falls back to find_unused_parameters=True): set ddp_find_unused_parameters=False "
                "or use_reentrant=False"
            )
        elif s.info.get("torchrun_rc") == 0:
            notes.append("SFTTrainer with default ddp_find_unused_parameters ran clean on these versions")
    notes.append("fixes verified: use_reentrant=False, find_unused_parameters=False, static_graph=True")
    return verdict, notes


PROBE = FunctionProbe(
    descriptions=DESCRIPTIONS,
    fallback_symptoms=FALLBACK_SYMPTOMS,
    phases=phases,
    skip_reason=skip_reason,
    run_phase=run_phase,
    decide=decide,
)
