"""The probe contract: what a probe module provides and what each phase receives and returns.

A probe module defines one subclass of :class:`Probe` and exposes an instance as ``PROBE``.
The harness (CLI process) reads its descriptions, phases, fallback symptoms, skip reason and
verdict rule; the worker (a subprocess, possibly another interpreter with other library
versions) calls :meth:`Probe.run_phase` with a :class:`PhaseContext` built from the harness's
JSON. Standard library only: the worker's interpreter may have nothing but the ML libraries.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, TypedDict

if TYPE_CHECKING:  # the CLI side only
    from probes.result import PhaseResult, Verdict


@dataclass(frozen=True)
class PhaseContext:
    """What one phase runs on; written by the harness (`ProbeSession.run`), read by the probe."""

    case_id: str
    probe: str
    phase: str
    workdir: str
    model_path: str
    model_source: str | None = None  # "builtin-tiny" | "tiny-replica" | "user"
    model_type: str | None = None
    config_dtype: str | None = None
    device: str = "cpu"
    trust_remote_code: bool = False
    timeout: float = 180.0
    #: the user's settings (`--set`, `--from-log`, `--config`), e.g. per_device_train_batch_size
    options: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> PhaseContext:
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(d) - names)
        if unknown:
            raise TypeError(f"unknown phase context keys: {unknown}")
        return cls(**d)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def replace(self, **changes: Any) -> PhaseContext:
        return dataclasses.replace(self, **changes)


@dataclass(frozen=True)
class SetupContext:
    """What the model-preparation step (`probes._setup`) runs on."""

    workdir: str
    user_model: str | None = None
    tiny_replica: bool = False
    trust_remote_code: bool = False
    arch: str = "qwen2"

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> SetupContext:
        return cls(**d)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


class PhaseOutput(TypedDict, total=False):
    """What `run_phase` returns (every key optional). An exception raised by the phase is data too:
    the worker prints its traceback into the phase's output, where the case's symptoms are looked for."""

    detected: bool  # the probe's own view of the symptom; None/absent: decided by the case's patterns
    check_matcher: bool  # False: don't note a disagreement between `detected` and the patterns
    detail: str
    metrics: dict[str, list[float]]
    info: dict[str, Any]


class Probe:
    """Base class of every probe. Subclasses set the class attributes and implement `run_phase`."""

    #: phase name -> one line shown while it runs and in the result
    descriptions: ClassVar[dict[str, str]] = {}
    #: case id -> `assistant.kb.model.Symptoms` fields, used when the KB case is absent
    fallback_symptoms: ClassVar[dict[str, dict[str, Any]]] = {}
    #: said when the baseline does not show the symptom (what the installed versions already fix)
    not_reproduced_note: ClassVar[str] = ""
    #: the context type `run_phase` receives
    context_type: ClassVar[type] = PhaseContext

    def phases(self, case_id: str, extra: tuple[str, ...] = ()) -> list[str]:
        """Phases to run, in order (default: baseline, treatment, then the spec's extra phases)."""
        return ["baseline", "treatment", *extra]

    def skip_reason(self, env: dict[str, Any]) -> str | None:
        """Why the probe cannot run in *env* (the worker's environment), or None."""
        return None

    def run_phase(self, phase: str, ctx: Any) -> PhaseOutput:
        """Run *phase* (in the worker's forked child). Raise to report the failure as data."""
        raise NotImplementedError

    def decide(
        self, case_id: str, phases: dict[str, PhaseResult], env: dict[str, Any]
    ) -> tuple[Verdict, list[str]] | None:
        """The verdict and notes, or None for the default rule (`probes.verdicts.default_decide`)."""
        return None


class FunctionProbe(Probe):
    """A probe wired from a module's functions, named explicitly (no discovery by attribute name):
    ``PROBE = FunctionProbe(descriptions=..., run_phase=run_phase, decide=decide, ...)``."""

    def __init__(
        self,
        *,
        descriptions: dict[str, str],
        run_phase: Callable[[str, Any], PhaseOutput],
        fallback_symptoms: dict[str, dict[str, Any]] | None = None,
        not_reproduced_note: str = "",
        phases: Callable[[str], list[str]] | None = None,
        skip_reason: Callable[[dict[str, Any]], str | None] | None = None,
        decide: Callable[[str, dict[str, Any], dict[str, Any]], Any] | None = None,
        context_type: type = PhaseContext,
    ) -> None:
        self.descriptions = descriptions  # type: ignore[misc]
        self.fallback_symptoms = fallback_symptoms or {}  # type: ignore[misc]
        self.not_reproduced_note = not_reproduced_note  # type: ignore[misc]
        self.context_type = context_type  # type: ignore[misc]
        self._run_phase = run_phase
        self._phases = phases
        self._skip_reason = skip_reason
        self._decide = decide

    def phases(self, case_id: str, extra: tuple[str, ...] = ()) -> list[str]:
        return list(self._phases(case_id)) if self._phases else super().phases(case_id, extra)

    def skip_reason(self, env: dict[str, Any]) -> str | None:
        return self._skip_reason(env) if self._skip_reason else None

    def run_phase(self, phase: str, ctx: Any) -> PhaseOutput:
        return self._run_phase(phase, ctx)

    def decide(self, case_id: str, phases: dict[str, PhaseResult], env: dict[str, Any]) -> Any:
        return self._decide(case_id, phases, env) if self._decide else None
