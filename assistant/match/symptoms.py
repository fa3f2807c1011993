"""Structural evidence: which of a case's symptom patterns occur in a text (no ML imports)."""

from __future__ import annotations

import math
from functools import lru_cache

from assistant.kb.model import Case, MetricCondition, MetricOp, Pattern
from assistant.limits import cap_lines

_MAX_LINE = 300


@lru_cache(maxsize=4096)
def required_literal(pattern: str, kind: str) -> str:
    """A lower-cased substring every match must contain ('' when none can be proven).

    Used as a cheap `in` pre-filter: case-insensitive regexes with leading `\\w*` are slow on
    long logs."""
    if kind != "regex":
        return pattern.lower()
    if "(?" in pattern and "(?:" not in pattern and "(?s)" not in pattern and "(?m)" not in pattern:
        return ""
    runs: list[str] = []
    cur: list[str] = []
    depth = 0
    i = 0
    n = len(pattern)
    while i < n:
        c = pattern[i]
        if depth:
            if c == "\\":
                i += 2
                continue
            if c in "([":
                depth += 1
            elif c in ")]":
                depth -= 1
            i += 1
            continue
        if c == "|":
            return ""  # top-level alternation: nothing is required
        if c == "\\" and i + 1 < n:
            nxt = pattern[i + 1]
            if nxt.isalnum():
                runs.append("".join(cur))
                cur = []
            else:
                cur.append(nxt)
            i += 2
            continue
        if c in "([":
            runs.append("".join(cur))
            cur = []
            depth = 1
            i += 1
            continue
        if c in "?*{":
            if cur:
                cur.pop()
            runs.append("".join(cur))
            cur = []
            if c == "{":
                i = pattern.find("}", i) + 1 or n
                continue
        elif c == "+":
            runs.append("".join(cur))
            cur = []
        elif c in ".^$":
            runs.append("".join(cur))
            cur = []
        else:
            cur.append(c)
        i += 1
    runs.append("".join(cur))
    best = max(runs, key=len)
    return best.lower() if len(best) >= 5 else ""


def _search(p: Pattern, text: str, low: str | None):
    lit = required_literal(p.pattern, p.kind.value)
    if lit and lit not in (low if low is not None else text.lower()):
        return None
    return p.compiled().search(text)


def _line_around(text: str, start: int, end: int) -> str:
    a = text.rfind("\n", 0, start) + 1
    b = text.find("\n", end)
    line = text[a : b if b != -1 else len(text)].strip()
    return line if len(line) <= _MAX_LINE else line[:_MAX_LINE] + "…"


def first_match(p: Pattern, text: str) -> str | None:
    """The line around *p*'s first match in *text*, or None."""
    text = cap_lines(text)
    m = _search(p, text, None)
    return _line_around(text, m.start(), m.end()) if m else None


@lru_cache(maxsize=16)
def _lower(text: str) -> str:
    """*text* lower-cased, memoised like `cap_lines`: every case and pattern searches the same
    capped report text in a row (it was lower-cased again for each of them)."""
    return text.lower()


def _hits(patterns: list[Pattern], text: str, low: str | None) -> list[str]:
    """The line around each pattern's first match in *text* (*low*: text.lower(), if known)."""
    out: list[str] = []
    if not patterns:
        return out
    capped = cap_lines(text)
    if capped is not text:
        text, low = capped, _lower(capped)
    for p in patterns:
        m = _search(p, text, low)
        if m:
            out.append(_line_around(text, m.start(), m.end()))
    return out


def message_hits(case: Case, text: str, low: str | None = None) -> list[str]:
    """Lines of *text* matching the case's exception-message patterns."""
    return _hits(case.symptoms.messages, text, low)


def log_hits(case: Case, text: str, low: str | None = None) -> list[str]:
    """Lines of *text* matching the case's log-line patterns (warnings etc.)."""
    return _hits(case.symptoms.log_patterns, text, low)


def metric_holds(cond: MetricCondition, values: list[float]) -> bool:
    """Whether *cond* holds on the logged *values* of its metric (any step, or every step)."""
    if not values:
        return False

    def ok(x: float) -> bool:
        if cond.op is MetricOp.nan:
            return math.isnan(x) or math.isinf(x)
        if math.isnan(x):
            return False
        v = cond.value if cond.value is not None else 0.0
        return {
            MetricOp.eq: abs(x - v) < 1e-6,
            MetricOp.ne: abs(x - v) >= 1e-6,
            MetricOp.lt: x < v,
            MetricOp.le: x <= v,
            MetricOp.gt: x > v,
            MetricOp.ge: x >= v,
        }[cond.op]

    return all(ok(x) for x in values) if cond.every_step else any(ok(x) for x in values)


def metric_hits(case: Case, metrics: dict[str, list[float]]) -> list[str]:
    """Descriptions of the case's metric conditions, if *all* of them hold."""
    conds = case.symptoms.metrics
    if not conds or not all(metric_holds(c, metrics.get(c.name, [])) for c in conds):
        return []
    out = []
    for c in conds:
        vals = metrics.get(c.name, [])
        shown = ", ".join(f"{v:g}" for v in vals[:6]) + (" …" if len(vals) > 6 else "")
        rule = c.op.value if c.value is None else f"{c.op.value} {c.value:g}"
        out.append(f"{c.name} {rule} ({'every step' if c.every_step else 'seen'}: {shown})")
    return out


def find_evidence(case: Case, text: str, metrics: dict[str, list[float]] | None = None) -> list[str]:
    """All evidence lines for *case* in *text* (message, log and metric hits)."""
    return message_hits(case, text) + log_hits(case, text) + metric_hits(case, metrics or {})
