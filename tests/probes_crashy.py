"""A probe that misbehaves on purpose (crash, hang, exception): the harness must survive."""

from __future__ import annotations

import os
import signal
import time
from dataclasses import dataclass
from typing import Any

from probes.contract import PhaseOutput, Probe


@dataclass(frozen=True)
class NoContext:
    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> NoContext:
        return cls()


class CrashyProbe(Probe):
    context_type = NoContext

    def run_phase(self, phase: str, ctx: Any) -> PhaseOutput:
        print(f"crashy phase {phase}", flush=True)
        if phase == "segfault":
            os.kill(os.getpid(), signal.SIGSEGV)
        if phase == "hang":
            time.sleep(600)
        if phase == "escape":  # a helper that leaves the process group and would run on
            child = os.fork()
            if child == 0:
                os.setsid()
                time.sleep(600)
                os._exit(0)
            print(f"escaped pid {child}", flush=True)
            return {"detected": False, "detail": str(child)}
        if phase == "raise":
            raise RuntimeError("element 0 of tensors does not require grad and does not have a grad_fn")
        return {"detected": False, "detail": "fine"}


PROBE = CrashyProbe()
