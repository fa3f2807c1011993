"""The Report: everything the parser understood from a paste or a log (pydantic, JSON-able)."""

from __future__ import annotations

from pydantic import BaseModel, Field

from assistant.vocab import PACKAGES

#: Packages frames are attributed to; anything else is "other" (site-packages) or "user".
FRAME_PACKAGES = PACKAGES


def short_exception_name(name: str) -> str:
    """An exception's class name without its module (`torch.OutOfMemoryError` -> `OutOfMemoryError`)."""
    return name.rsplit(".", 1)[-1]


class Frame(BaseModel):
    """One traceback frame."""

    file: str
    line: int | None = None
    function: str | None = None
    code: str | None = None
    package: str = Field(description="trl / peft / … / torch, 'other' (site-packages) or 'user'")


class ExceptionInfo(BaseModel):
    """One exception of a chain."""

    exception: str = Field(description="Exception type, as printed (may be dotted).")
    message: str = ""
    frames: list[Frame] = Field(default_factory=list)
    rank: int | None = None
    line_no: int | None = Field(default=None, description="Line of the exception in the input.")
    relation: str | None = Field(
        default=None,
        description="How it links to the previous one: 'context' (during handling) or 'cause'.",
    )

    @property
    def short_type(self) -> str:
        return short_exception_name(self.exception)


class MetricRow(BaseModel):
    """One logged step: metric name -> value (names as logged, e.g. 'rewards/x/mean')."""

    values: dict[str, float]
    line_no: int | None = None


class Failure(BaseModel):
    """A torch.distributed.elastic failure summary (ChildFailedError 'Root Cause')."""

    rank: int | None = None
    exitcode: int | None = None
    signal: str | None = None


class Signature(BaseModel):
    """Normalised error for matching: placeholders instead of paths, numbers, names."""

    exception: str | None = None
    message: str = ""
    frames: list[str] = Field(default_factory=list)

    def text(self) -> str:
        head = f"{self.exception}: {self.message}" if self.exception else self.message
        return "\n".join([head, *self.frames]).strip()


class Report(BaseModel):
    """What the parser understood. `primary` is None when the text holds no error at all."""

    primary: ExceptionInfo | None = None
    chain: list[ExceptionInfo] = Field(default_factory=list, description="The primary chain, outermost first.")
    other_errors: list[ExceptionInfo] = Field(
        default_factory=list, description="Errors outside the primary chain (other ranks, knock-ons)."
    )
    warnings: list[str] = Field(default_factory=list)
    metrics: list[MetricRow] = Field(default_factory=list)
    environment: dict[str, str] = Field(default_factory=dict)
    settings: dict[str, bool | int | str] = Field(default_factory=dict)
    ranks: list[int] = Field(default_factory=list)
    failure: Failure | None = None
    observations: list[str] = Field(
        default_factory=list, description="Non-exception findings: SIGKILL, hang, NCCL timeout…"
    )
    signature: Signature = Field(default_factory=Signature)
    text: str = Field(default="", description="The cleaned text kept for matching (windows).", exclude=True)
    match_text: str = Field(
        default="",
        exclude=True,
        description="`text` without knock-on lines (other ranks' NCCL timeouts …) when the primary is a root failure.",
    )
    truncated: bool = Field(default=False, description="True when only windows of a big log were kept.")

    def metric_series(self) -> dict[str, list[float]]:
        """Canonical metric name -> values in logged order (see `assistant.parse.metrics`)."""
        from assistant.parse.metrics import canonical_name

        out: dict[str, list[float]] = {}
        for row in self.metrics:
            for name, value in row.values.items():
                canon = canonical_name(name)
                if canon:
                    out.setdefault(canon, []).append(value)
        return out

    def has_message(self) -> bool:
        """Whether the error chain carries any message text (False for prose, a bare error line with
        nothing after the colon, or a traceback cut before its last line)."""
        return any(e.message.strip() for e in self.chain)

    def packages_in_frames(self) -> list[str]:
        seen: dict[str, None] = {}
        for exc in self.chain:
            for f in exc.frames:
                seen.setdefault(f.package, None)
        return list(seen)
