"""The outcome of a probe: verdict, per-phase outcomes with evidence and timings, environment.

Import-light (pydantic only): the CLI, ``explain --probe`` and the TUI render it without torch.
"""

from __future__ import annotations

from enum import Enum
from typing import Any

from pydantic import BaseModel, Field


class Verdict(str, Enum):
    confirmed = "confirmed"  # baseline shows the symptom, treatment does not
    #: as confirmed, but the library that raises the symptom did not run here: the probe fed the real
    #: objects (e.g. a PeftModel's weights) to an emulation of its check, so only part is reproduced
    reproduced_in_part = "reproduced-in-part"
    not_reproduced = "not-reproduced"  # baseline clean with these versions
    fix_ineffective = "fix-ineffective"  # treatment still shows the symptom
    skipped = "skipped"  # cannot run here (reason in notes)
    error = "error"  # the probe itself failed (crash, timeout, unrelated exception)


class PhaseStatus(str, Enum):
    ok = "ok"  # ran to the end without an exception
    raised = "raised"  # the phase raised (the traceback is in ``output_tail``)
    timeout = "timeout"
    crashed = "crashed"  # killed by a signal (OOM killer, segfault) or exited non-zero
    not_run = "not-run"


class PhaseResult(BaseModel):
    """One phase (baseline, treatment, or an extra phase such as ``mechanism``)."""

    name: str
    description: str = ""
    reproduced: bool | None = Field(default=None, description="The case's symptom was found in this phase's output.")
    evidence: list[str] = Field(default_factory=list, description="Symptom lines matched (same matcher as `explain`).")
    seconds: float = 0.0
    status: PhaseStatus = PhaseStatus.not_run
    exception: str | None = Field(default=None, description="'Type: message' of the top error.")
    exception_chain: list[str] = Field(
        default_factory=list, description="'Type: message' of every exception in the chain."
    )
    detail: str = Field(default="", description="What the phase observed, in one or two lines.")
    metrics: dict[str, list[float]] = Field(default_factory=dict)
    info: dict[str, Any] = Field(default_factory=dict)
    output_tail: str = Field(default="", description="Last lines of the phase's output.")


class ProbeResult(BaseModel):
    case_id: str
    probe: str
    verdict: Verdict
    baseline: PhaseResult
    treatment: PhaseResult
    extra: dict[str, PhaseResult] = Field(
        default_factory=dict, description="Further phases, e.g. the mechanism with a hook bypassed."
    )
    environment: dict[str, Any] = Field(default_factory=dict)
    notes: list[str] = Field(default_factory=list)
    seconds: float = 0.0

    def to_json(self, **kw: Any) -> str:
        return self.model_dump_json(indent=2, **kw)
