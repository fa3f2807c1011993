"""Both outcomes of the two probes whose failure the installed stack no longer has: run on the
reporter's versions (`--versions`, an isolated environment built from the package registry, torch
taken from this one) they confirm the failure; on the installed stack they do not. Cold, each
builds its environment (about 1.5-2 min on 2 CPU cores); later runs reuse it from the user cache."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

pytestmark = pytest.mark.slow


def _side_by_side(case: str, pins: str) -> dict:
    proc = subprocess.run(
        [sys.executable, "-m", "assistant.cli.main", "probe", case, "--versions", pins, "--format", "json"],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)


def _verdict(stack: dict) -> str:
    return (stack.get("result") or {}).get("verdict") or f"error: {stack.get('error')}"


def test_lora_gc_confirmed_on_the_reporters_stack_not_on_the_installed_one():
    out = _side_by_side("lora-gradient-checkpointing-no-grad", "trl==0.15.2,transformers==4.49.0,peft==0.14.0")
    assert _verdict(out["yours"]) == "confirmed", out["yours"]
    assert _verdict(out["installed"]) == "not-reproduced", out["installed"]
    assert out["yours"]["versions"]["trl"] == "0.15.2"


def test_zero3_unwrap_confirmed_on_the_reporters_stack():
    out = _side_by_side("grpo-zero3-unwrapped-model-no-optimizer", "trl==0.14.0,transformers==4.48.3,deepspeed==0.16.3")
    assert _verdict(out["yours"]) == "confirmed", out["yours"]
    # the installed stack: not-reproduced where deepspeed is installed here, skipped where it is not
    assert _verdict(out["installed"]) in ("not-reproduced", "skipped"), out["installed"]


# API checks whose failure the installed releases fixed: on a stack from before the fix each one
# confirms (the real call fails with the case's symptom, the documented fix clears it), on the
# installed one it does not. Two stacks cover them: the lora-gc one above (reused from the cache)
# and one from mid-2025 with an old peft.
OLD_PEFT_014 = "trl==0.15.2,transformers==4.49.0,peft==0.14.0"
OLD_PEFT_07 = "trl==0.19.1,transformers==4.53.3,peft==0.7.1"


@pytest.mark.parametrize(
    ("case", "pins"),
    [
        ("dpo-ref-model-with-peft-config", OLD_PEFT_014),
        ("state-dict-override-empty-adapter-443-bytes", OLD_PEFT_014),
        ("trainer-label-names-peftmodel-warning", OLD_PEFT_014),
        ("use-cache-with-gradient-checkpointing-warning", OLD_PEFT_07),
        ("prefix-tuning-legacy-tuple-past-key-values", OLD_PEFT_07),
        ("adapter-config-newer-peft-keys", OLD_PEFT_07),
        ("adapter-config-removed-legacy-peft-keys", OLD_PEFT_07),
        ("peftmodel-generate-positional-args", OLD_PEFT_07),
        ("all-linear-unsupported-old-peft", OLD_PEFT_07),
    ],
)
def test_fixed_api_failure_confirmed_on_an_affected_stack(case: str, pins: str):
    out = _side_by_side(case, pins)
    assert _verdict(out["yours"]) == "confirmed", out["yours"]
    assert _verdict(out["installed"]) == "not-reproduced", out["installed"]
    assert out["conclusion"].startswith("upgrading fixes it"), out["conclusion"]
