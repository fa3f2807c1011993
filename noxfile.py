"""Version matrix for the probes: a thin wrapper over `trl-help probe CASE --versions PINS`.

    pip install nox
    nox -s probes_old probes_mid probes_old14      # each stack built once in the user cache dir
    nox -s probes_current                          # the project venv's stack (what the test suite checks)

Each session asks `trl-help probe` (in the project venv) to build or reuse a cached environment
with the stack's pins (see probes/envs.py), run the probe there and on the installed stack, and
asserts the verdict on the pinned stack. Results land in .nox/probe-matrix-<session>.json.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import nox

nox.options.sessions = ["probes_old", "probes_mid", "probes_old14"]

ROOT = os.path.dirname(os.path.abspath(__file__))
ENV = {"HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}

STACKS: dict[str, tuple[str, list[str]]] = {
    "probes_old": (
        "trl==0.15.2,transformers==4.49.0,peft==0.14.0,accelerate==1.4.0,datasets==3.3.2",
        ["lora-gradient-checkpointing-no-grad=confirmed", "grpo-zero-advantage-identical-group-rewards=confirmed"],
    ),
    "probes_mid": (
        "trl==0.24.0,transformers==4.57.6,peft==0.17.1,accelerate==1.10.1",
        ["lora-gradient-checkpointing-no-grad=confirmed"],
    ),
    "probes_old14": (
        "trl==0.14.0,transformers==4.48.3,peft==0.14.0,accelerate==1.3.0,datasets==3.2.0,deepspeed==0.16.3",
        ["grpo-zero3-unwrapped-model-no-optimizer=confirmed", "lora-gradient-checkpointing-no-grad=confirmed"],
    ),
}


def _probe(case: str, pins: str) -> dict:
    cmd = [sys.executable, "-m", "assistant.cli.main", "probe", case, "--versions", pins, "--format", "json"]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, env=dict(os.environ, **ENV))
    try:
        return json.loads(proc.stdout)
    except json.JSONDecodeError:
        return {"case_id": case, "error": (proc.stderr.strip().splitlines() or ["no output"])[-1]}


def _run_stack(session: nox.Session, name: str) -> None:
    pins, expect = STACKS[name]
    docs, failed = [], []
    for item in expect:
        case, _, want = item.partition("=")
        doc = _probe(case, pins)
        docs.append(doc)
        got = ((doc.get("yours") or {}).get("result") or {}).get("verdict") or "error"
        session.log(f"{case}: {got} on {pins} (installed: {doc.get('conclusion', doc.get('error'))})")
        if got != want:
            failed.append(f"{case}: expected {want}, got {got}")
    out = os.path.join(ROOT, ".nox", f"probe-matrix-{name}.json")
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out, "w") as fh:
        json.dump(docs, fh, indent=2)
    if failed:
        session.error("; ".join(failed))


@nox.session(python=False, name="probes_old")
def probes_old(session: nox.Session) -> None:
    _run_stack(session, "probes_old")


@nox.session(python=False, name="probes_mid")
def probes_mid(session: nox.Session) -> None:
    _run_stack(session, "probes_mid")


@nox.session(python=False, name="probes_old14")
def probes_old14(session: nox.Session) -> None:
    _run_stack(session, "probes_old14")


@nox.session(python=False, name="probes_current")
def probes_current(session: nox.Session) -> None:
    """The already-installed stack (the project venv): the verdicts the test suite asserts."""
    session.run(
        "python",
        "-m",
        "probes.matrix",
        "lora-gradient-checkpointing-no-grad=not-reproduced",
        "grpo-zero3-unwrapped-model-no-optimizer=not-reproduced",
        "ddp-reentrant-gc-mark-ready-twice=confirmed",
        env=ENV,
    )
