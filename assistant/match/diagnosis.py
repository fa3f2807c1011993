"""The output contract shared by `explain --format json`, `triage` and the TUI."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from assistant.parse.model import ExceptionInfo, Report

Confidence = Literal["high", "medium", "low"]


class VersionVerdict(BaseModel):
    verdict: Literal["affected", "fixed-in-your-version", "predates-affected", "unknown"]
    detail: str


class Fix(BaseModel):
    """One fix of a case, best first: what a user reads and copies."""

    title: str
    description: str = ""
    code: str | None = None
    language: str = "python"
    safety: str = Field(description="safe | tradeoff | behaviour-change | workaround")
    tradeoff: str | None = None


class Reference(BaseModel):
    type: str = Field(description="report | fix | docs | evidence")
    url: str


class FixedIn(BaseModel):
    """A release that fixes the case (the highest `fixed` bound of a package's ranges)."""

    package: str
    version: str
    fixed_by: str | None = None


class Match(BaseModel):
    """One candidate case with everything a renderer shows: no renderer reads the KB."""

    case_id: str
    title: str
    score: float = Field(description="Fused score mapped to 0..1 (calibrated probability-like).")
    confidence: Confidence
    evidence: list[str] = Field(default_factory=list)
    versions: VersionVerdict
    fix: str = Field(description="The first fix: its title and code (one string, for tables and clipboards).")
    probe: str | None = None
    labels: list[str] = Field(default_factory=list)
    signals: dict[str, float] = Field(default_factory=dict, description="Per-signal contributions.")
    summary: str = ""
    cause: str = ""
    fixes: list[Fix] = Field(default_factory=list)
    references: list[Reference] = Field(default_factory=list)
    fixed_in: list[FixedIn] = Field(default_factory=list)
    version_packages: list[str] = Field(
        default_factory=list, description="Packages whose versions decide the case (empty: versions don't)."
    )


#: version of the JSON document (`explain --format json`, triage): bump on incompatible changes
SCHEMA_VERSION = "3"


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
