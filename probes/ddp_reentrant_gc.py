"""DDP + reentrant gradient checkpointing + find_unused_parameters → "Expected to mark a variable
ready only once". Two real processes through torchrun (gloo on CPU, NCCL on GPU).

baseline     LoRA, use_reentrant=True, DDP(find_unused_parameters=True), 2 steps.
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


def run_phase(phase: str, ctx: PhaseContext) -> PhaseOutput:
    if phase == "baseline":
        rc = _launch(ctx, ["--variant", "lora:reentrant:find1"])
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
    if verdict.value == "not-reproduced":
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
