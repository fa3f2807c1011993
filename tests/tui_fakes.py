"""Deterministic stand-ins for the engine and the probe runner (tests, snapshots, demos).

:class:`FakeEngine` answers from fixed rules on the report's text, with two small hand-made KB
cases; :class:`FakeProbeRunner` streams scripted lines and honours cancel. Neither imports
torch or the matcher.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from assistant.kb.model import Case
from assistant.match.case_content import case_content
from assistant.match.diagnosis import Diagnosis, Match, VersionVerdict
from assistant.parse.model import Report
from assistant.tui.engine import ProbeCancelled

_CASES = [
    {
        "id": "demo-zero3-unwrapped-model",
        "title": "ZeRO-3 generation on the unwrapped model: no attribute 'optimizer'",
        "summary": "GRPO generation under DeepSpeed ZeRO-3 gathers parameters through the "
        "DeepSpeed engine; a bare model has no optimizer attribute.",
        "labels": ["deepspeed", "grpo"],
        "symptoms": {"exceptions": ["AttributeError"], "messages": [{"pattern": "has no attribute 'optimizer'"}]},
        "cause": "unwrap_model_for_generation expects the DeepSpeed engine; passing the bare "
        "model makes the ZeRO-3 gather path look for engine.optimizer.",
        "fixes": [
            {
                "title": "Pass the accelerator-wrapped model",
                "description": "Call unwrap_model_for_generation with the prepared model.",
                "code": "with unwrap_model_for_generation(self.model_wrapped, self.accelerator) as m:\n"
                "    out = m.generate(**inputs)",
                "safety": "safe",
            },
            {
                "title": "Upgrade TRL",
                "description": "Fixed upstream.",
                "code": "pip install -U trl",
                "language": "bash",
                "safety": "safe",
            },
        ],
        "probe": "grpo-zero3-unwrapped-model",
        "references": [
            {"type": "report", "url": "https://github.com/huggingface/trl/issues/1"},
            {"type": "fix", "url": "https://github.com/huggingface/trl/pull/2"},
        ],
        "verification": {"status": "partial"},
        "fixtures": {"positive": [{"text": "AttributeError: has no attribute 'optimizer'"}]},
    },
    {
        "id": "demo-ddp-mark-ready-twice",
        "title": "DDP + reentrant gradient checkpointing: parameter marked ready twice",
        "summary": "Reentrant checkpointing re-runs the forward in backward, so DDP sees the "
        "same parameter become ready twice.",
        "labels": ["ddp", "gradient-checkpointing"],
        "symptoms": {"exceptions": ["RuntimeError"], "messages": [{"pattern": "marked as ready twice"}]},
        "cause": "With use_reentrant=True the checkpointed segment runs its forward again "
        "during backward and DDP's reducer hooks fire twice.",
        "fixes": [
            {
                "title": "Use non-reentrant checkpointing",
                "description": "Pass gradient_checkpointing_kwargs.",
                "code": "gradient_checkpointing_kwargs={'use_reentrant': False}",
                "safety": "safe",
            }
        ],
        "references": [{"type": "docs", "url": "https://pytorch.org/docs/stable/checkpoint.html"}],
        "verification": {"status": "partial"},
        "fixtures": {"positive": [{"text": "RuntimeError: marked as ready twice"}]},
    },
]

CASES: dict[str, Case] = {str(c["id"]): Case.model_validate(c) for c in _CASES}


def _match(case: Case, score: float, confidence: str, verdict: str, evidence: list[str]) -> Match:
    return Match(
        case_id=case.id,
        score=score,
        confidence=confidence,  # type: ignore[arg-type]
        evidence=evidence,
        versions=VersionVerdict(verdict=verdict, detail=f"demo detail for {case.id}"),  # type: ignore[arg-type]
        **case_content(case),
    )


class FakeEngine:
    """'optimizer' in the error → case 1 first; 'ready twice' → case 2 first; else no case."""

    def __init__(self, delay_s: float = 0.0) -> None:
        self.delay_s = delay_s
        self.calls = 0

    def diagnose(self, report: Report, top: int = 5) -> Diagnosis:
        self.calls += 1
        if self.delay_s:
            time.sleep(self.delay_s)
        a, b = CASES["demo-zero3-unwrapped-model"], CASES["demo-ddp-mark-ready-twice"]
        msg = report.primary.message if report.primary else ""
        line = f"{report.primary.exception}: {msg.splitlines()[0] if msg else ''}" if report.primary else ""
        if "optimizer" in msg:
            ms = [_match(a, 0.93, "high", "affected", [line]), _match(b, 0.08, "low", "unknown", [])]
            verdict = "match"
        elif "ready twice" in msg:
            ms = [_match(b, 0.71, "medium", "unknown", [line]), _match(a, 0.05, "low", "fixed-in-your-version", [])]
            verdict = "match"
        else:
            ms = [_match(b, 0.12, "low", "unknown", []), _match(a, 0.04, "low", "unknown", [])]
            verdict = "no-known-case"
        return Diagnosis.from_parts(report, ms[:top], verdict == "match", dict(report.environment))


def fake_result(case_id: str, verdict: str = "confirmed") -> Any:
    """A ProbeResult when ``probes.result`` exists, else a light stand-in."""
    try:
        from probes.result import PhaseResult, PhaseStatus, ProbeResult, Verdict

        return ProbeResult(
            case_id=case_id,
            probe="demo-probe",
            verdict=Verdict(verdict),
            baseline=PhaseResult(
                name="baseline",
                reproduced=True,
                status=PhaseStatus.raised,
                detail="AttributeError: has no attribute 'optimizer'",
                seconds=1.0,
            ),
            treatment=PhaseResult(
                name="treatment", reproduced=False, status=PhaseStatus.ok, detail="generation ran", seconds=1.0
            ),
            notes=["demo run"],
            seconds=2.0,
        )
    except ImportError:  # pragma: no cover - probes package absent
        from types import SimpleNamespace

        ph = SimpleNamespace(
            name="baseline", status="ok", reproduced=True, description="", detail="", evidence=[], seconds=1.0
        )
        return SimpleNamespace(
            case_id=case_id,
            probe="demo-probe",
            verdict=verdict,
            baseline=ph,
            treatment=ph,
            extra={},
            notes=["demo run"],
            seconds=2.0,
        )


class FakeProbeRunner:
    """Streams *lines* (one every *interval_s*), then returns a result with *verdict*.

    With ``block=True`` it keeps streaming until cancelled (for cancel tests).
    """

    def __init__(
        self, lines: int = 5, interval_s: float = 0.01, verdict: str = "confirmed", block: bool = False
    ) -> None:
        self.lines = lines
        self.interval_s = interval_s
        self.verdict = verdict
        self.block = block
        self._cancel = threading.Event()
        self.started = threading.Event()
        self.calls: list[dict] = []

    def has_probe(self, case_id: str) -> bool:
        return True

    def describe(self, case_id: str) -> str:
        return f"demo-probe — scripted probe for {case_id}"

    def phase_count(self, case_id: str) -> int:
        return 4

    def run(self, case_id: str, *, model, tiny_replica, device, timeout, on_output, on_status) -> Any:
        self._cancel.clear()
        self.calls.append(
            {"case_id": case_id, "model": model, "tiny_replica": tiny_replica, "device": device, "timeout": timeout}
        )
        self.started.set()
        for step in (
            "starting the probe worker",
            "preparing the model",
            "demo-probe: baseline",
            "demo-probe: treatment",
        ):
            on_status(step)
        i = 0
        while self.block or i < self.lines:
            if self._cancel.wait(self.interval_s):
                raise ProbeCancelled()
            on_output(f"output line {i}")
            i += 1
        return fake_result(case_id, self.verdict)

    def cancel(self) -> None:
        self._cancel.set()
