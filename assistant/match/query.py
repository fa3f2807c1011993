"""What of a Report is embedded / searched: the query text and each case's documents."""

from __future__ import annotations

import re
from dataclasses import dataclass

from assistant.kb.load import KB
from assistant.parse.model import Report
from assistant.parse.signature import normalise

#: bump when query_text changes: the index embeds each fixture through it (part of the index key)
QUERY_VERSION = 15  # 15: exceptions a notice line only quotes are cut from the evidence text; 14: exception names are ASCII and one rank's copy of a name several ranks wrote at once; 12: a traceback cut before its message is searched with the text around it (query_text); 13: less its frame lines


def foreground(text: str, background: frozenset[str]) -> str:
    """*text* less progress bars, deprecation notices and the lines healthy runs print too (by
    shape)."""
    from assistant.kb.healthy import is_progress_bar, line_key

    keep = [
        ln
        for ln in text.splitlines()
        if ln.strip() and not is_progress_bar(ln) and not _deprecation(ln) and line_key(ln) not in background
    ]
    return "\n".join(keep)


#: a traceback's own lines: its header, `File "…", line N` frames, caret markers (with a `[rankN]:` prefix)
_FRAME_LINE = re.compile(
    r'\s*(?:\[rank\d+\]:\s*)?>?\s*(?:Traceback \(most recent call last\)|(?P<file>File "[^"]+", line \d+)|[~^]{3,}\s*$)'
)


def without_frames(text: str) -> str:
    """*text* less its traceback lines (each `File` line and the source line under it): what a user
    wrote around a traceback that was cut before its message, whose frames the signature has."""
    out: list[str] = []
    skip_code = False
    for ln in text.splitlines():
        m = _FRAME_LINE.match(ln)
        if m:
            skip_code = m.group("file") is not None
            continue
        if skip_code:
            skip_code = False
            continue
        out.append(ln)
    return "\n".join(out)


#: ratios whose value 1 means "every completion / every group": a silent failure's mark
_ALL_RATIOS = ("clipped_ratio", "frac_reward_zero_std")
#: metrics for which 0 is a mark (a ratio at 0, or kl at 0 with beta 0, is an ordinary value)
_ZERO_MARKS = ("loss", "grad_norm", "reward", "reward_std", "learning_rate", "completion_length")
#: warning categories that announce a future removal: import-time noise, not a failure
_DEPRECATION = ("FutureWarning", "DeprecationWarning", "is deprecated")


def _deprecation(line: str) -> bool:
    """A deprecation notice, or the bare `warnings.warn(` line Python prints under a warning."""
    return any(d in line for d in _DEPRECATION) or line.strip() == "warnings.warn("


def metric_anomalies(series: dict[str, list[float]]) -> str:
    """The logged metrics worth searching on: those whose last value is nan / inf, those at 0
    where 0 is a mark (`_ZERO_MARKS`), and the ratios that reached 1. A healthy run's metric
    lines (loss 1.2, grad_norm 0.8 …) are background: their names alone would pull every
    metric-based case towards any log."""
    out = []
    for k, v in list(series.items())[:16]:
        last = v[-1]
        if last != last or last in (float("inf"), float("-inf")):
            out.append(f"{k} nan")
        elif last == 0 and k in _ZERO_MARKS:
            out.append(f"{k} 0")
        elif k in _ALL_RATIOS and last >= 1:
            out.append(f"{k} 1")
    return " ".join(out[:8])


def query_text(report: Report, limit: int = 1500, background: frozenset[str] = frozenset()) -> str:
    """Signature, chain messages and observations; with no exception, the run's own warnings,
    metrics and text, less the lines healthy runs print (*background*)."""
    parts: list[str] = []
    if report.primary is not None:
        parts.append(report.signature.text())
        for exc in report.chain[1:4]:
            parts.append(f"{exc.short_type}: {normalise(exc.message)[:300]}")
    parts.extend(report.observations)
    cut = report.primary is not None and not report.has_message()
    if report.primary is None or cut:
        # no exception: what the run printed is the report (warnings, metrics, then the text);
        # with one, the warnings and metric lines of the rest of the run are background that
        # healthy runs print too, and the query stays on the failure. A traceback cut before its
        # message (and not named elsewhere in the paste) says only where it failed: the text
        # around it, where users state the error in prose, is what there is to search on.
        from assistant.kb.healthy import line_key

        own = [w for w in report.warnings if line_key(w) not in background and not _deprecation(w)]
        parts.extend(w[:200] for w in own[-3:])  # the last ones: closest to the failure
        anomalies = metric_anomalies(report.metric_series())
        if anomalies:
            parts.append(anomalies)
        text = report.text if len(report.text) <= 200_000 else report.text[:100_000] + "\n" + report.text[-100_000:]
        if cut:
            text = without_frames(text)
        parts.append(normalise(foreground(text, background)[:limit]))
    return "\n".join(p for p in parts if p)[:limit]


@dataclass(frozen=True)
class Doc:
    """One indexed text of a case; `fixture` is the positive fixture index it came from."""

    case_id: str
    kind: str  # title | symptom | fixture
    text: str
    fixture: int | None = None


def _pattern_text(p: str) -> str:
    """A regex made readable for embedding: drop escapes and classes."""
    p = re.sub(r"\\[wdsS]\+?|\[[^\]]*\][*+?]?|\(\?[:!=<][^)]*\)|[\^$]", " ", p)
    return re.sub(r"\\(.)", r"\1", p).replace(".*", " ").replace(".+", " ")


def case_documents(kb: KB) -> list[Doc]:
    """Several texts per case: title + summary, symptoms, and each positive fixture's query."""
    from assistant.parse import parse_text

    docs: list[Doc] = []
    for cid, case in kb.cases.items():
        docs.append(Doc(cid, "title", f"{case.title}\n{case.summary}"))
        sym = [_pattern_text(p.pattern) for p in case.symptoms.messages + case.symptoms.log_patterns]
        exc = " ".join(case.symptoms.exceptions)
        kw = " ".join(case.context.keywords)
        docs.append(Doc(cid, "symptom", f"{exc}: " + "\n".join(sym) + f"\n{kw}"))
        for i, text in enumerate(kb.positives.get(cid, [])):
            docs.append(Doc(cid, "fixture", query_text(parse_text(text), background=kb.background), fixture=i))
    return docs
