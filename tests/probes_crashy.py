"""A phase module that misbehaves on purpose (crash, hang, exception): the harness must survive."""

from __future__ import annotations

import os
import signal
import time


def run_phase(phase: str, ctx: dict) -> dict:
    print(f"crashy phase {phase}", flush=True)
    if phase == "segfault":
        os.kill(os.getpid(), signal.SIGSEGV)
    if phase == "hang":
        time.sleep(600)
    if phase == "raise":
        raise RuntimeError("element 0 of tensors does not require grad and does not have a grad_fn")
    return {"detected": False, "detail": "fine"}
