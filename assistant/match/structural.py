"""Structural features of a (case, report) pair: symptom hits, exception type, frames, settings."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

from assistant.kb.model import Case, Effect
from assistant.match.symptoms import is_short_paste, log_hits, message_hits, metric_hits
from assistant.parse.model import Report, short_exception_name

#: a setting the case says makes it more likely: +SETTING_MORE when the report has that value, minus
#: it when the report has another; a setting that makes the case less likely costs SETTING_LESS
#: when present. The sum is clipped to [-1, 1], like the other structural features.
SETTING_MORE = 0.5
SETTING_LESS = 1.0
#: context keywords counted, at most (three distinctive identifiers saturate the feature)
KEYWORD_CAP = 3


@dataclass
class Structural:
    values: dict[str, float] = field(default_factory=dict)
    evidence: list[str] = field(default_factory=list)


def error_text(report: Report) -> str:
    """Exception lines of the primary chain (what message patterns should hit first)."""
    return "\n".join(f"{e.exception}: {e.message}" for e in report.chain)


@lru_cache(maxsize=1024)
def _short_types(exceptions: tuple[str, ...]) -> frozenset[str]:
    """A case's exception names as the parser gives them (`torch.OutOfMemoryError` -> `OutOfMemoryError`)."""
    return frozenset(map(short_exception_name, exceptions))


@lru_cache(maxsize=1024)
def _lower_keywords(keywords: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(k.lower() for k in keywords)


def message_lines(case: Case, err: str, err_low: str | None, text: str, low: str | None) -> tuple[list[str], list[str]]:
    """How message patterns read a report: the lines they match in the error chain *err*, and only
    when none does, those they match in the evidence *text* (lower-cased forms, if known)."""
    hits = message_hits(case, err, err_low) if err else []
    return hits, ([] if hits else message_hits(case, text, low))


def structural(
    case: Case,
    report: Report,
    series: dict[str, list[float]],
    packages: set[str],
    low: str | None = None,
    err: str | None = None,
    err_low: str | None = None,
    keywords: tuple[str, ...] | None = None,
    present: frozenset[str] | None = None,
    short_paste: bool | None = None,
) -> Structural:
    """Feature values and evidence lines for one (case, report) pair. *keywords*: the case's
    lower-cased context keywords to count (default: all; the matcher passes only those that no
    healthy log contains); *present*: the keywords already known to occur in *low* (the matcher
    tests each distinct keyword once per query); *short_paste*: `is_short_paste` of the report, when
    the caller has it (the matcher computes it once per query)."""
    s = Structural()
    mt = report.match_text or report.text
    low = mt.lower() if low is None else low
    err = error_text(report) if err is None else err
    err_low = err.lower() if err_low is None else err_low
    hits, text_hits = message_lines(case, err, err_low, mt, low)
    if text_hits and not report.has_message():
        # no exception message to search (a bare error line, prose, a traceback cut before its last
        # line): the line that matches the case's message pattern is the error itself
        hits, text_hits = text_hits, []
    s.values["msg"] = 1.0 if hits else 0.0
    s.values["text"] = 1.0 if text_hits else 0.0
    # a line healthy runs print too counts only next to an error (one parsed, or the case's message)
    with_error = bool(report.chain or hits or text_hits)
    if short_paste is None:
        short_paste = is_short_paste(mt, series)
    logs = log_hits(case, mt, low, with_error=with_error, short_paste=short_paste)
    s.values["log"] = 1.0 if logs else 0.0
    mets = metric_hits(case, series)
    s.values["metric"] = 1.0 if mets else 0.0
    s.evidence = hits + text_hits + logs + mets
    if report.primary is not None and case.symptoms.exceptions:
        types = {e.short_type for e in report.chain}
        s.values["exc"] = 1.0 if types & _short_types(tuple(case.symptoms.exceptions)) else -1.0
    else:
        s.values["exc"] = 0.0
    if case.context.frames and packages:
        s.values["frames"] = len(packages & set(case.context.frames)) / len(case.context.frames)
    else:
        s.values["frames"] = 0.0
    score = 0.0
    for sig in case.context.settings:
        if sig.name in report.settings:
            same = report.settings[sig.name] == sig.value
            if sig.effect is Effect.more:
                score += SETTING_MORE if same else -SETTING_MORE
            elif same:
                score -= SETTING_LESS
    s.values["settings"] = max(-1.0, min(1.0, score))
    if keywords is None:
        keywords = _lower_keywords(tuple(case.context.keywords))
    kws = [k for k in keywords if k in present] if present is not None else [k for k in keywords if k in low]
    s.values["keywords"] = min(KEYWORD_CAP, len(kws)) / KEYWORD_CAP
    return s
