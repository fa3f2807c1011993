"""The output contract shared by `explain --format json`, `triage` and the TUI."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from assistant.parse.model import ExceptionInfo, Report

Confidence = Literal["high", "medium", "low"]


class VersionVerdict(BaseModel):
    verdict: Literal["affected", "fixed-in-your-version", "unknown"]
    detail: str


class Match(BaseModel):
    case_id: str
    title: str
    score: float = Field(description="Fused score mapped to 0..1 (calibrated probability-like).")
    confidence: Confidence
    evidence: list[str] = Field(default_factory=list)
    versions: VersionVerdict
    fix: str
    probe: str | None = None
    labels: list[str] = Field(default_factory=list)
    signals: dict[str, float] = Field(default_factory=dict, description="Per-signal contributions.")


#: version of the JSON document (`explain --format json`, triage): bump on incompatible changes
SCHEMA_VERSION = "2"


class Diagnosis(BaseModel):
    schema_version: str = SCHEMA_VERSION
    verdict: Literal["match", "no-known-case"]
    matches: list[Match]
    error: ExceptionInfo | None
    environment: dict[str, str]
    settings: dict[str, bool | int | str] = Field(default_factory=dict)
    observations: list[str] = Field(default_factory=list)

    @classmethod
    def from_parts(cls, report: Report, matches: list[Match], matched: bool, env: dict[str, str]) -> Diagnosis:
        return cls(
            verdict="match" if matched else "no-known-case",
            matches=matches,
            error=report.primary,
            environment=env,
            settings=report.settings,
            observations=report.observations,
        )
