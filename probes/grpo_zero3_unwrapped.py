"""GRPO under DeepSpeed ZeRO-3: unwrap_model_for_generation on the bare model → no attribute
'optimizer' (trl 0.14 / 0.15.0.dev0, trl#2782, open-r1#145). Runs on CPU through torchrun
(1 process, gloo) with DeepSpeed's shm-op compile skipped.

baseline   one GRPOTrainer ZeRO-3 step, then ``unwrap_model_for_generation(trainer.model, …)``
           (what GRPO's evaluation did with the plain model) + generate. Affected versions raise a
           chained AssertionError from GatheredParameters.__exit__ whose context is
           ``AttributeError: '<Arch>' object has no attribute 'optimizer'``.
treatment  the same with ``trainer.model_wrapped`` (the DeepSpeedEngine), which has .optimizer.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from probes.contract import FunctionProbe, PhaseContext, PhaseOutput

DESCRIPTIONS = {
    "baseline": "torchrun ×1, ZeRO-3 GRPO step, unwrap_model_for_generation(trainer.model) + generate",
    "treatment": "the same with trainer.model_wrapped (the DeepSpeedEngine)",
}

FALLBACK_SYMPTOMS = {
    "grpo-zero3-unwrapped-model-no-optimizer": {
        "exceptions": ["AttributeError", "AssertionError"],
        "messages": [{"pattern": r"'\w+' object has no attribute 'optimizer'", "kind": "regex"}],
    }
}

NOT_REPRODUCED_NOTE = (
    "not reproduced: trl >= 0.15 guards remove_hooks with `if not hasattr(model, 'optimizer'): return` "
    "and GRPO passes the wrapped engine (trl PR #2776)"
)

SCRIPT = str(Path(__file__).with_name("_zero3_script.py"))


def run_phase(phase: str, ctx: PhaseContext) -> PhaseOutput:
    target = "model" if phase == "baseline" else "model_wrapped"
    env = dict(os.environ)
    env["PROBE_DEVICE"] = ctx.device
    env.setdefault("OMP_NUM_THREADS", "1")
    if ctx.device == "cpu":
        env["DS_ACCELERATOR"] = "cpu"
        env.setdefault("TORCH_EXTENSIONS_DIR", str(Path(ctx.workdir) / "torch_extensions"))
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    cmd = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--nproc_per_node",
        "1",
        "--master_port",
        str(port),
        SCRIPT,
        ctx.model_path,
        "--target",
        target,
        "--workdir",
        ctx.workdir,
    ]
    print("$ " + " ".join(cmd[2:]), flush=True)
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    assert proc.stdout is not None
    saw = False
    for line in proc.stdout:
        sys.stdout.write(line)
        if "has no attribute 'optimizer'" in line:
            saw = True
    rc = proc.wait()
    sys.stdout.flush()
    return {
        "detected": saw,
        "detail": f"torchrun exited with {rc}"
        + ("; AttributeError ... 'optimizer' in the exception chain" if saw else ""),
        "info": {"torchrun_rc": rc},
    }


def decide(case_id: str, phases: dict, env: dict):
    from probes.result import Verdict
    from probes.verdicts import default_decide

    verdict, notes = default_decide(phases, NOT_REPRODUCED_NOTE)
    b, t = phases["baseline"], phases["treatment"]
    if t.info.get("torchrun_rc"):
        return Verdict.error, ["the treatment launch failed (see its output)"]
    if not b.reproduced and b.info.get("torchrun_rc"):
        return Verdict.error, ["the baseline launch failed without the 'optimizer' AttributeError (see its output)"]
    if verdict is Verdict.confirmed:
        notes.append(
            "the visible error is the chained AssertionError from deepspeed's GatheredParameters.__exit__; "
            "its context is the AttributeError. Fix: upgrade trl (>= 0.15) or pass "
            "trainer.model_wrapped (the DeepSpeedEngine) to unwrap_model_for_generation"
        )
    return verdict, notes


PROBE = FunctionProbe(
    descriptions=DESCRIPTIONS,
    fallback_symptoms=FALLBACK_SYMPTOMS,
    not_reproduced_note=NOT_REPRODUCED_NOTE,
    run_phase=run_phase,
    decide=decide,
)
