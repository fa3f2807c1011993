"""Version matrix for the probes: install the affected stacks and assert the probes confirm there.

    pip install nox
    nox -s probes_old probes_mid probes_old14      # each stack ~2 min to install, < 2 min to run
    nox -s probes_current                          # the project venv's stack (what the test suite checks)

Stacks (measured in shared/research/probe_feasibility.md):
- probes_old    trl 0.15.2 / transformers 4.49.0 / peft 0.14.0 / accelerate 1.4.0:
                lora-gradient-checkpointing-no-grad → confirmed (GRPO + SFT defaults, plain Trainer)
- probes_mid    trl 0.24.0 / transformers 4.57.6 / peft 0.17.1 / accelerate 1.10.1:
                lora-gradient-checkpointing-no-grad → confirmed (plain Trainer path)
- probes_old14  trl 0.14.0 / transformers 4.48.3 / peft 0.14.0 / deepspeed 0.16.3:
                grpo-zero3-unwrapped-model-no-optimizer → confirmed, lora-gc → confirmed
torch is 2.13.0+cpu everywhere (it works with all of these transformers releases).
Results land in .nox/<session>/probe-matrix.json.
"""

from __future__ import annotations

import os

import nox

nox.options.reuse_existing_virtualenvs = True
nox.options.sessions = ["probes_old", "probes_mid", "probes_old14"]

HARNESS_DEPS = ["pydantic>=2.7", "pyyaml>=6", "packaging>=23", "rich>=13", "tokenizers", "numpy"]
TORCH = "torch==2.13.0"
ENV = {"HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false", "PYTHONPATH": os.path.dirname(__file__)}

STACKS = {
    "probes_old": (
        ["transformers==4.49.0", "trl==0.15.2", "peft==0.14.0", "accelerate==1.4.0", "datasets==3.3.2"],
        ["lora-gradient-checkpointing-no-grad=confirmed", "grpo-zero-advantage-identical-group-rewards=confirmed"],
    ),
    "probes_mid": (
        ["transformers==4.57.6", "trl==0.24.0", "peft==0.17.1", "accelerate==1.10.1", "datasets"],
        ["lora-gradient-checkpointing-no-grad=confirmed"],
    ),
    "probes_old14": (
        [
            "transformers==4.48.3",
            "trl==0.14.0",
            "peft==0.14.0",
            "accelerate==1.3.0",
            "datasets==3.2.0",
            "deepspeed==0.16.3",
        ],
        ["grpo-zero3-unwrapped-model-no-optimizer=confirmed", "lora-gradient-checkpointing-no-grad=confirmed"],
    ),
}


def _run_stack(session: nox.Session, name: str) -> None:
    pkgs, expect = STACKS[name]
    session.install(TORCH, *HARNESS_DEPS)
    session.install(*pkgs, env={"DS_BUILD_OPS": "0"})
    session.run("python", "-m", "pip", "list", "--format=freeze", silent=False)
    out = os.path.join(session.virtualenv.location, "probe-matrix.json")
    env = dict(ENV, TORCH_EXTENSIONS_DIR=os.path.join(session.virtualenv.location, "torch_extensions"))
    session.run("python", "-m", "probes.matrix", *expect, "--json", out, env=env)


@nox.session(name="probes_old")
def probes_old(session: nox.Session) -> None:
    _run_stack(session, "probes_old")


@nox.session(name="probes_mid")
def probes_mid(session: nox.Session) -> None:
    _run_stack(session, "probes_mid")


@nox.session(name="probes_old14")
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
