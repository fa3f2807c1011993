"""The Case model: one curated failure cause, stored as ``kb/cases/<id>.yaml``.

Shaped after OSV advisories (typed references, per-package version ranges with
``introduced`` / ``fixed`` / ``last_affected``) and ruff's rule pages (what happens, why,
example, fix with its safety / trade-off).
"""

from __future__ import annotations

import re
from enum import Enum
from functools import lru_cache
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from assistant import vocab
from assistant.kb.regex_safety import nested_quantifier

CASE_ID_RE = re.compile(r"^[a-z0-9][a-z0-9.-]*[a-z0-9]$")

#: Packages whose versions a case may constrain: the ones the parser attributes frames to.
PACKAGES = vocab.PACKAGES

#: Settings a case's ``context.settings`` and metric names its ``symptoms.metrics`` may refer to
#: (the ones the parser reads): kept in the shared vocabulary.
SETTINGS = vocab.SETTINGS
METRICS = vocab.METRICS


class Strict(BaseModel):
    """Base for KB models: unknown keys are errors, so typos surface in `kb validate`."""

    model_config = ConfigDict(extra="forbid", frozen=True)


#: a backslash before a regex metacharacter: in a literal pattern, a regex escape written by mistake
_REGEX_ESCAPE = re.compile(r"\\[\[\]().*+?{}|^$]")


class PatternKind(str, Enum):
    literal = "literal"
    regex = "regex"


class Pattern(Strict):
    """A message or log-line pattern; regexes are searched case-insensitively."""

    pattern: str = Field(min_length=3)
    kind: PatternKind = PatternKind.literal
    seen_in_healthy_runs: bool = Field(
        default=False,
        description=(
            "The line is also printed by runs that are fine (a load-time warning, a deprecation): it counts "
            "as evidence only in a report that carries an error, or, for a case with no message patterns "
            "(the notice is what the case explains), in a short paste about it with no metric values; kb "
            "validate does not fail it on the healthy logs."
        ),
    )

    @model_validator(mode="after")
    def _compiles(self) -> Pattern:
        if self.kind is PatternKind.literal and (esc := _REGEX_ESCAPE.search(self.pattern)):
            # a literal is searched as written, so an escape meant for a regex can never match
            raise ValueError(
                f"literal pattern has the regex escape {esc.group()!r}: drop the backslash or set kind: regex"
            )
        if self.kind is PatternKind.regex:
            try:
                re.compile(self.pattern)
            except re.error as exc:
                raise ValueError(f"regex does not compile: {exc}") from None
            if nested_quantifier(self.pattern):
                raise ValueError(f"regex has a nested quantifier (catastrophic backtracking): {self.pattern!r}")
        return self

    def compiled(self) -> re.Pattern[str]:
        return compile_pattern(self.pattern, self.kind.value)


@lru_cache(maxsize=4096)
def compile_pattern(pattern: str, kind: str) -> re.Pattern[str]:
    """A symptom pattern as searched everywhere: regex or literal, case-insensitive (cached)."""
    return re.compile(pattern if kind == PatternKind.regex.value else re.escape(pattern), re.IGNORECASE)


class MetricOp(str, Enum):
    eq = "eq"  # |value - x| < 1e-6
    ne = "ne"
    lt = "lt"
    le = "le"
    gt = "gt"
    ge = "ge"
    nan = "nan"  # value is NaN / inf


class MetricCondition(Strict):
    """A condition on logged metrics, for failures that raise nothing."""

    name: str
    op: MetricOp
    value: float | None = None
    every_step: bool = Field(default=False, description="True: must hold on every logged step, not just one.")

    @field_validator("name")
    @classmethod
    def _known_metric(cls, v: str) -> str:
        if v not in METRICS:
            raise ValueError(f"unknown metric {v!r}; known: {', '.join(METRICS)}")
        return v

    @model_validator(mode="after")
    def _value_needed(self) -> MetricCondition:
        if self.op is not MetricOp.nan and self.value is None:
            raise ValueError(f"op {self.op.value!r} needs a value")
        return self


class Symptoms(Strict):
    """What the user sees."""

    exceptions: list[str] = Field(default_factory=list, description="Exception class names, e.g. RuntimeError.")
    messages: list[Pattern] = Field(default_factory=list, description="Patterns of the exception message.")
    log_patterns: list[Pattern] = Field(default_factory=list, description="Warnings or log lines that are evidence.")
    metrics: list[MetricCondition] = Field(default_factory=list, description="All must hold (silent failures).")

    @model_validator(mode="after")
    def _something(self) -> Symptoms:
        if not (self.messages or self.log_patterns or self.metrics):
            raise ValueError("needs at least one of messages, log_patterns, metrics")
        return self


class Effect(str, Enum):
    more = "more"
    less = "less"


class SettingSignal(Strict):
    """A setting visible in the log that makes the case more or less likely."""

    name: str
    value: bool | int | str
    effect: Effect = Effect.more

    @field_validator("name")
    @classmethod
    def _known_setting(cls, v: str) -> str:
        if v not in SETTINGS:
            raise ValueError(f"unknown setting {v!r}; known: {', '.join(SETTINGS)}")
        return v


class Context(Strict):
    """Signals that make the case more or less likely."""

    frames: list[str] = Field(default_factory=list, description="Packages expected in the traceback frames.")
    settings: list[SettingSignal] = Field(default_factory=list)
    keywords: list[str] = Field(
        default_factory=list,
        description="Distinctive identifiers (API names, config keys) that point at this case.",
    )

    @field_validator("frames")
    @classmethod
    def _known_packages(cls, v: list[str]) -> list[str]:
        for p in v:
            if p not in PACKAGES:
                raise ValueError(f"unknown package {p!r}; known: {', '.join(PACKAGES)}")
        return v


class Range(Strict):
    """One OSV-style range: affected from ``introduced`` up to ``fixed`` (exclusive) or
    ``last_affected`` (inclusive). ``introduced: "0"`` means "since the beginning"."""

    introduced: str = "0"
    fixed: str | None = None
    last_affected: str | None = None

    @model_validator(mode="after")
    def _versions(self) -> Range:
        from packaging.version import InvalidVersion, Version

        if self.fixed and self.last_affected:
            raise ValueError("give fixed or last_affected, not both")
        for name in ("introduced", "fixed", "last_affected"):
            v = getattr(self, name)
            if v is None or (name == "introduced" and v == "0"):
                continue
            try:
                Version(v)
            except InvalidVersion:
                raise ValueError(f"{name}: {v!r} is not a PEP 440 version") from None
        return self


class Affected(Strict):
    """Version ranges of one package in which the failure happens."""

    package: str
    ranges: list[Range] = Field(min_length=1)
    fixed_by: str | None = Field(default=None, description="URL of the PR/release that fixed it.")
    note: str | None = None

    @field_validator("package")
    @classmethod
    def _known_package(cls, v: str) -> str:
        if v not in PACKAGES:
            raise ValueError(f"unknown package {v!r}; known: {', '.join(PACKAGES)}")
        return v


class Safety(str, Enum):
    """Like ruff's fix safety: can the fix change behaviour beyond removing the failure?"""

    safe = "safe"  # removes the failure, same training semantics
    tradeoff = "tradeoff"  # works, at a cost (memory, speed, precision) stated in `tradeoff`
    behaviour_change = "behaviour-change"  # changes what is trained / generated
    workaround = "workaround"  # sidesteps the failure until an upgrade


class Fix(Strict):
    """One concrete change; fixes are listed best first."""

    title: str
    description: str
    code: str | None = None
    language: Literal["python", "yaml", "json", "bash", "text"] = "python"
    safety: Safety = Safety.safe
    tradeoff: str | None = None


class RefType(str, Enum):
    report = "report"
    fix = "fix"
    docs = "docs"
    evidence = "evidence"


class Reference(Strict):
    type: RefType
    url: str

    @field_validator("url")
    @classmethod
    def _url(cls, v: str) -> str:
        if not re.match(r"^https?://[^\s/$.?#][^\s]*$", v):
            raise ValueError(f"not a well-formed URL: {v!r}")
        return v


class Fixture(Strict):
    """Text that must (positive) or must not (negative) match the case.

    Either inline ``text`` or a ``file`` relative to ``kb/fixtures/<case-id>/``.
    """

    text: str | None = None
    file: str | None = None
    source: str | None = Field(default=None, description="Where the text comes from (URL).")
    note: str | None = None
    confused_with: str | None = Field(default=None, description="For negatives: the case this text really belongs to.")

    @model_validator(mode="after")
    def _one(self) -> Fixture:
        if bool(self.text) == bool(self.file):
            raise ValueError("give exactly one of text or file")
        return self


class Fixtures(Strict):
    positive: list[Fixture] = Field(min_length=1)
    negative: list[Fixture] = Field(default_factory=list)


class Verification(Strict):
    """How the claims were checked; what could not be confirmed is said, not guessed."""

    status: Literal["confirmed", "partial", "unconfirmed"]
    checked: list[str] = Field(default_factory=list, description="What was checked, against which source.")
    unconfirmed: list[str] = Field(default_factory=list, description="Claims that could not be confirmed.")


class Case(Strict):
    """One known failure cause."""

    id: str
    title: str = Field(min_length=8)
    summary: str = Field(min_length=20, description="What happens, in two or three sentences.")
    labels: list[str] = Field(min_length=1)
    related: list[str] = Field(default_factory=list)
    symptoms: Symptoms
    context: Context = Field(default_factory=Context)
    affected: list[Affected] = Field(default_factory=list)
    cause: str = Field(min_length=40, description="Why it happens, precisely.")
    example: str | None = Field(default=None, description="Minimal code that triggers it.")
    fixes: list[Fix] = Field(min_length=1)
    probe: str | None = None
    references: list[Reference] = Field(min_length=1)
    verification: Verification
    fixtures: Fixtures

    @property
    def is_notice(self) -> bool:
        """The case explains a notice that runs which are fine print too (every symptom is a log
        pattern marked `seen_in_healthy_runs`): it answers a paste about that notice, never a run's log."""
        sy = self.symptoms
        return (
            bool(sy.log_patterns)
            and not sy.messages
            and not sy.metrics
            and all(p.seen_in_healthy_runs for p in sy.log_patterns)
        )

    @field_validator("id")
    @classmethod
    def _id(cls, v: str) -> str:
        if not CASE_ID_RE.match(v):
            raise ValueError(f"id {v!r} must be lowercase letters, digits, '-' or '.'")
        return v

    @field_validator("labels")
    @classmethod
    def _labels(cls, v: list[str]) -> list[str]:
        for label in v:
            if not re.match(r"^[a-z0-9][a-z0-9-]*$", label):
                raise ValueError(f"label {label!r} must be lowercase kebab-case")
        return v
