"""Messages exchanged between the TUI's widgets, screens and workers."""

from __future__ import annotations

from typing import Any

from textual.message import Message

from assistant.match.diagnosis import Diagnosis
from assistant.parse.model import Report


class Pasted(Message):
    """The paste area received a paste (or a large insertion); the app debounces it."""


class EngineReady(Message):
    """The diagnosis engine finished loading (in a worker)."""

    def __init__(self, engine: Any) -> None:
        super().__init__()
        self.engine = engine


class EngineFailed(Message):
    def __init__(self, error: str) -> None:
        super().__init__()
        self.error = error


class DiagnosisReady(Message):
    """A diagnosis finished (in a worker)."""

    def __init__(self, report: Report, diagnosis: Diagnosis, generation: int) -> None:
        super().__init__()
        self.report = report
        self.diagnosis = diagnosis
        self.generation = generation


class DiagnosisFailed(Message):
    def __init__(self, error: str, generation: int) -> None:
        super().__init__()
        self.error = error
        self.generation = generation


class CaseSelected(Message):
    """The candidate list highlighted a case."""

    def __init__(self, index: int) -> None:
        super().__init__()
        self.index = index


class ProbeOutput(Message):
    """One line of a probe's output (posted from the probe's thread)."""

    def __init__(self, line: str) -> None:
        super().__init__()
        self.line = line


class ProbeStatus(Message):
    """A probe started a new step (posted from the probe's thread)."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text


class ProbeFinished(Message):
    """A probe ended: ``result`` (a ProbeResult), or ``error``, or ``cancelled``."""

    def __init__(self, result: Any = None, error: str | None = None, cancelled: bool = False) -> None:
        super().__init__()
        self.result = result
        self.error = error
        self.cancelled = cancelled
