"""Structural evidence: which of a case's symptom patterns occur in a text (no ML imports)."""

from __future__ import annotations

import math
import re
from functools import lru_cache

from assistant.kb.model import Case, MetricCondition, MetricOp, Pattern
from assistant.limits import cap_lines
from assistant.match.prefilter import may_match

_MAX_LINE = 300


def _search(p: Pattern, text: str, low: str | None):
    if not may_match(p.pattern, p.kind.value, low if low is not None else text.lower()):
        return None
    return p.compiled().search(text)


# -- loose matching: the same message as a user pastes it ------------------------------------------
#: quoting that a paste loses or changes: GitHub renders `name` as code and drops the backticks,
#: and another release (or a translation) may quote a name with ' or " or not at all
_BACKTICK = "`"
_QUOTES = str.maketrans("", "", "`'\"")
#: a literal pattern cut short in the paste (the message went on with a path, or the paste stops at
#: the line's end) still counts when at least this share of it, and this many characters, is there
TRUNCATED_SHARE = 0.75
TRUNCATED_MIN = 24


@lru_cache(maxsize=16)
def _loose_text(text: str) -> tuple[str, str, str]:
    """*text* without backticks (for regexes), and lower-cased without any quote character (for
    literals), plus that text's lower-cased form; newlines are kept, so line numbers still agree."""
    no_bt = text.replace(_BACKTICK, "")
    return no_bt, text.translate(_QUOTES).lower(), no_bt.lower()


def without_backticks(pattern: str) -> str:
    """The regex *pattern* as the loose search runs it: backticks (escaped or not) dropped."""
    return pattern.replace("\\`", "").replace(_BACKTICK, "")


@lru_cache(maxsize=4096)
def _loose_regex(pattern: str) -> re.Pattern[str] | None:
    """*pattern* with its backticks dropped (None when it has none: the strict search decided)."""
    if _BACKTICK not in pattern:
        return None
    try:
        return re.compile(without_backticks(pattern), re.IGNORECASE)
    except re.error:
        return None


@lru_cache(maxsize=4096)
def _loose_literal(pattern: str) -> tuple[str, tuple[re.Pattern[str], ...]]:
    """A literal pattern without quotes, lower-cased, and the end-of-line searches for its
    truncations (longest first, cut at word boundaries, `TRUNCATED_SHARE` of it at least)."""
    loose = pattern.translate(_QUOTES).lower().strip()
    cuts: list[re.Pattern[str]] = []
    if len(loose) >= TRUNCATED_MIN:
        floor = max(TRUNCATED_MIN, int(len(loose) * TRUNCATED_SHARE))
        for m in reversed(list(re.finditer(r"\s+", loose))):
            head = loose[: m.start()].rstrip(" ,:;")
            if len(head) < floor:
                break
            cuts.append(re.compile(re.escape(head) + r"[ \t.:,;]*$", re.MULTILINE))
    return loose, tuple(cuts)


#: one token of a "near-literal" regex: a placeholder class (\\d+, \\w+, \\s+, \\S+), an escaped
#: character, or a plain character; a pattern made only of these reads like a message with holes
_NEAR_LITERAL_TOKEN = re.compile(r"\\[dwsS]\+|\\.|[^\\()\[\]{}|*+?.^$]")
_PLACEHOLDER = re.compile(r"\\[dwsS]\+")


@lru_cache(maxsize=4096)
def _regex_cuts(pattern: str) -> tuple[re.Pattern[str], ...]:
    """End-of-line searches for the truncations of a near-literal regex *pattern* (a message with
    `\\d+`-style holes, nothing else: no groups, alternations or wildcards), cut before a space,
    longest first, keeping `TRUNCATED_SHARE` of its literal characters and `TRUNCATED_MIN` at
    least: the same rule as for literal patterns. Empty for any other regex."""
    tokens: list[str] = []
    pos = 0
    while pos < len(pattern):
        m = _NEAR_LITERAL_TOKEN.match(pattern, pos)
        if m is None:
            return ()
        tokens.append(m.group())
        pos = m.end()
    literal = [0 if _PLACEHOLDER.fullmatch(t) else 1 for t in tokens]
    total = sum(literal)
    if total < TRUNCATED_MIN:
        return ()
    floor = max(TRUNCATED_MIN, int(total * TRUNCATED_SHARE))
    cuts: list[re.Pattern[str]] = []
    for i in range(len(tokens) - 1, 0, -1):
        if tokens[i] not in (" ", "\\ ", "\\s+"):
            continue
        if sum(literal[:i]) < floor:
            break
        head = "".join(tokens[:i])
        try:
            cuts.append(re.compile(head + r"[ \t.:,;]*$", re.IGNORECASE | re.MULTILINE))
        except re.error:
            return ()
    return tuple(cuts)


def _truncated_regex_line(pattern: str, text: str, low: str) -> int | None:
    """Line number where a near-literal regex *pattern* appears cut off at a line's end, or None."""
    cuts = _regex_cuts(pattern)
    if not cuts or not may_match(cuts[-1].pattern, "regex", low):  # every cut starts with the last
        return None
    return _first_cut_line(cuts, text)


def _first_cut_line(cuts: tuple[re.Pattern[str], ...], text: str) -> int | None:
    """Line number of the first of *cuts* (longest first) found in *text*, or None."""
    for rx in cuts:
        m = rx.search(text)
        if m:
            return text.count("\n", 0, m.start())
    return None


def _loose_search(p: Pattern, text: str) -> int | None:
    """Line number of *p*'s first loose match in *text*: backticks and quotes ignored, and a literal
    pattern, or a regex that is a message with `\\d+`-style holes, cut off at a line's end accepted
    (`TRUNCATED_SHARE`). None when there is none."""
    if p.kind.value == "regex":
        no_bt, _, no_bt_low = _loose_text(text)
        rx = _loose_regex(p.pattern)
        if rx is not None and may_match(rx.pattern, "regex", no_bt_low):
            m = rx.search(no_bt)
            if m is not None:
                return no_bt.count("\n", 0, m.start())
        return _truncated_regex_line(without_backticks(p.pattern), no_bt, no_bt_low)
    _, bare, _ = _loose_text(text)
    loose, cuts = _loose_literal(p.pattern)
    at = bare.find(loose)
    if at == -1:
        if not cuts or loose[:TRUNCATED_MIN] not in bare:  # every cut starts with this head
            return None
        return _first_cut_line(cuts, bare)
    return bare.count("\n", 0, at)


def _shown(line: str) -> str:
    line = line.strip()
    return line if len(line) <= _MAX_LINE else line[:_MAX_LINE] + "…"


def _line_around(text: str, start: int, end: int) -> str:
    a = text.rfind("\n", 0, start) + 1
    b = text.find("\n", end)
    return _shown(text[a : b if b != -1 else len(text)])


def _line_of(p: Pattern, text: str, low: str | None) -> str | None:
    """The line of *text* where *p* matches: strictly, else loosely (`_loose_search`: line numbers
    of the loose text are those of *text*). None when it does not match."""
    m = _search(p, text, low)
    if m:
        return _line_around(text, m.start(), m.end())
    n = _loose_search(p, text)
    return None if n is None else _shown(text.split("\n", n + 1)[n])


def first_match(p: Pattern, text: str) -> str | None:
    """The line around *p*'s first match in *text*, or None."""
    return _line_of(p, cap_lines(text), None)


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
        line = _line_of(p, text, low)
        if line is not None:
            out.append(line)
    return out


def message_hits(case: Case, text: str, low: str | None = None) -> list[str]:
    """Lines of *text* matching the case's exception-message patterns."""
    return _hits(case.symptoms.messages, text, low)


#: a report of at most this many lines, with no error and no metric values, is a paste about a
#: notice, not a log of a run: only there does a notice healthy runs print too count on its own
NOTICE_MAX_LINES = 20


#: lines a program prints when a run has failed, with or without the traceback after them: Hydra's
#: job-failure header (verl, NeMo), torchrun's child-failure summary, a non-zero exit, a fatal signal
_FAILED_RUN = re.compile(
    r"Error executing job with overrides:|HYDRA_FULL_ERROR=1|ChildFailedError|"
    r"(?:returned non-zero exit status|exited with (?:return )?code|exit code:?) [1-9]\d*|"
    r"Segmentation fault|core dumped|^\s*Killed\s*$",
    re.M,
)


def names_a_failure(text: str) -> bool:
    """Whether *text* carries a line a program prints when a run failed (`_FAILED_RUN`), even where
    its traceback was cut off: a paste with one is about that failure, not about a notice."""
    return _FAILED_RUN.search(cap_lines(text)) is not None


def is_short_paste(text: str, series: dict[str, list[float]]) -> bool:
    """Whether a report is short and carries no metric values (a paste, not a run's log); with no
    error in it, such a report is a paste about a notice. Computed once per report."""
    return not series and text.count("\n") < NOTICE_MAX_LINES


def log_hits(
    case: Case, text: str, low: str | None = None, with_error: bool = True, short_paste: bool = True
) -> list[str]:
    """Lines of *text* matching the case's log-line patterns (warnings etc.). Without an error in the
    report (*with_error* False), a pattern healthy runs print too (`seen_in_healthy_runs`) counts only
    when it is what the case explains (the case has no message patterns) and the report is a paste
    about it (*short_paste*: see `is_short_paste`), not the log of a run that may well be fine."""
    patterns = case.symptoms.log_patterns
    if not with_error and any(p.seen_in_healthy_runs for p in patterns):
        if case.symptoms.messages or not short_paste:
            patterns = [p for p in patterns if not p.seen_in_healthy_runs]
    return _hits(patterns, text, low)


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
