"""Text → Report: clean, split by rank, parse tracebacks, pick the primary error."""

from __future__ import annotations

import re
from collections.abc import Callable

from assistant.limits import MAX_SCAN_LINE, cap_lines
from assistant.parse.clean import Line, clean_text
from assistant.parse.environment import find_settings, find_versions
from assistant.parse.metrics import parse_metrics
from assistant.parse.model import ExceptionInfo, Failure, Report
from assistant.parse.signature import build_signature
from assistant.parse.traceback import TRUNC, find_warnings, loose_exceptions, parse_group, without_quoted_notice

#: errors that are usually the consequence of a failure elsewhere (another rank, the launcher)
KNOCK_ON_RE = re.compile(
    r"ChildFailedError|CalledProcessError|DistBackendError|DistNetworkError|DistStoreError|"
    r"KeyboardInterrupt|SignalException|BrokenPipeError|ConnectionResetError|"
    r"Watchdog caught collective operation timeout|NCCL communicator was aborted|"
    r"Connection reset by peer|Socket Timeout|exitcode|died with|SIGTERM|RendezvousClosedError|"
    r"ProcessExitedException|process \d+ terminated with",
    re.I,
)
SEVERE_RE = re.compile(r"out of memory|OutOfMemoryError", re.I)
ROOT_CAUSE_RE = re.compile(r"Root Cause \(first observed failure\)")
RANK_FIELD_RE = re.compile(r"^\s*rank\s*:\s*(\d+)")
EXITCODE_RE = re.compile(r"exit\s*code\s*[:=]?\s*(-?\d+)|exits? with return code\s*=\s*(-?\d+)", re.I)
SIGNAL_RE = re.compile(r"Signal (\d+) \((SIG\w+)\)|<Signals\.(SIG\w+): \d+>")
HANG_RE = re.compile(r"\b(?:hangs?|hanging|stuck|freez(?:es|ing)|no progress)\b", re.I)
NCCL_TIMEOUT_RE = re.compile(r"Watchdog caught collective operation timeout|NCCL.*timeout|Timeout\(ms\)=\d+", re.I)


def _is_knock_on(exc: ExceptionInfo) -> bool:
    return bool(KNOCK_ON_RE.search(exc.exception) or KNOCK_ON_RE.search(exc.message[:500]))


def _chain_key(chain: list[ExceptionInfo]) -> tuple:
    return tuple((e.exception, e.message[:200]) for e in chain)


def _groups(lines: list[Line]) -> list[list[Line]]:
    """Split interleaved multi-rank output into one stream per rank (unprefixed lines apart)."""
    by_rank: dict[int | None, list[Line]] = {}
    for ln in lines:
        by_rank.setdefault(ln.rank, []).append(ln)
    return list(by_rank.values())


def _failure(lines: list[Line]) -> Failure | None:
    start = next((k for k, ln in enumerate(lines) if ROOT_CAUSE_RE.search(ln.text[:MAX_SCAN_LINE])), None)
    window = lines[start : start + 15] if start is not None else []
    rank = exitcode = signal = None
    for ln in window:
        if rank is None and (m := RANK_FIELD_RE.match(ln.text)):
            rank = int(m.group(1))
        if exitcode is None and (m := EXITCODE_RE.search(ln.text[:MAX_SCAN_LINE])):
            exitcode = int(m.group(1) or m.group(2))
        if signal is None and (m := SIGNAL_RE.search(ln.text[:MAX_SCAN_LINE])):
            signal = m.group(2) or m.group(3)
    if start is None:
        for ln in lines:
            if (m := EXITCODE_RE.search(ln.text[:MAX_SCAN_LINE])) and (m.group(1) or m.group(2)).startswith("-"):
                exitcode = int(m.group(1) or m.group(2))
                break
            if (m := SIGNAL_RE.search(ln.text[:MAX_SCAN_LINE])) and (m.group(2) or m.group(3)) == "SIGKILL":
                signal = "SIGKILL"
                break
    if rank is None and exitcode is None and signal is None:
        return None
    if signal is None and exitcode is not None and exitcode < 0:
        signal = {-9: "SIGKILL", -6: "SIGABRT", -11: "SIGSEGV", -15: "SIGTERM", -7: "SIGBUS"}.get(exitcode)
    return Failure(rank=rank, exitcode=exitcode, signal=signal)


def _pick_primary(chains: list[list[ExceptionInfo]]) -> list[ExceptionInfo] | None:
    """The root failure: severe (OOM) first, then the earliest chain that is not a knock-on."""
    if not chains:
        return None
    # a traceback cut before its exception line (a paste that ends mid-trace, another rank's
    # unfinished trace) names no error: a complete chain anywhere in the text comes first
    complete = [c for c in chains if c[-1].exception != TRUNC]
    with_frames = [c for c in chains if any(e.frames for e in c)]
    complete_with_frames = [c for c in complete if any(e.frames for e in c)]

    def first(pred) -> list[ExceptionInfo] | None:
        for pool in (complete_with_frames, complete, with_frames, chains):
            for c in pool:
                if pred(c):
                    return c
        return None

    return (
        first(
            lambda c: (
                any(SEVERE_RE.search(e.exception + " " + e.message) for e in c) and not all(_is_knock_on(e) for e in c)
            )
        )
        or first(lambda c: not _is_knock_on(c[-1]))
        or first(lambda c: not all(_is_knock_on(e) for e in c))
        or chains[0]
    )


def _repair_truncated(chain: list[ExceptionInfo], chains: list[list[ExceptionInfo]]) -> list[ExceptionInfo]:
    """A paste cut mid-traceback: name the error from the chain, or from an exception line the
    user pasted separately (often just above the traceback), and keep the frames."""
    cut = chain[-1]
    real = [e for e in chain if e.exception != TRUNC]
    if real:
        return real
    lone = [
        c[-1]
        for c in chains
        if c is not chain
        and c[-1].exception != TRUNC
        and not c[-1].frames
        and not _is_knock_on(c[-1])
        and c[-1].rank == cut.rank
    ]
    return _named_by_nearest(chain, lone)


def _named_by_nearest(chain: list[ExceptionInfo], named: list[ExceptionInfo]) -> list[ExceptionInfo]:
    """*chain* (cut before its exception line) named by the nearest of *named*, keeping its frames;
    *chain* itself when there is none."""
    if not named:
        return chain
    cut = chain[-1]
    best = min(named, key=lambda e: abs((e.line_no or 0) - (cut.line_no or 0)))
    return [best.model_copy(update={"frames": cut.frames})]


def _stated_elsewhere(
    chain: list[ExceptionInfo], lines: list[Line], fits: Callable[[ExceptionInfo], bool]
) -> list[ExceptionInfo]:
    """*chain* (cut before its exception line) named by the nearest exception the paste states
    elsewhere on the same rank (a title, a sentence, a notebook's JSON error) that *fits*."""
    cut = chain[-1]
    said = [e for e in loose_exceptions(lines) if fits(e) and (cut.rank is None or e.rank in (None, cut.rank))]
    return _named_by_nearest(chain, said)


def _name_from_prose(chain: list[ExceptionInfo], lines: list[Line]) -> list[ExceptionInfo]:
    """A traceback cut before its exception line whose error the user stated in words elsewhere:
    in the issue's title ("Train gemma3 1b error: IndexError: index 0 is out of bounds ...") or in
    a sentence above the paste ("... 出现这个问题：NotImplementedError: Using RTX 4000 series ...").
    The nearest such mention on the same rank names the error; the frames stay the traceback's."""
    return _stated_elsewhere(chain, lines, lambda e: e.exception != TRUNC and not _is_knock_on(e))


def _typed_but_cut(exc: ExceptionInfo) -> bool:
    """An IPython traceback cut before its exception line: the type is known from the header
    ("TypeError    Traceback (most recent call last)"), the message is not."""
    return exc.line_no is None and not exc.message and exc.exception != TRUNC


def _message_from_elsewhere(chain: list[ExceptionInfo], lines: list[Line]) -> list[ExceptionInfo]:
    """The message of a typed-but-cut traceback, from a mention of the same type elsewhere in the
    paste: the notebook's JSON `"message"` field, the issue title, or a line the user pasted apart."""
    typ = chain[-1].exception
    return _stated_elsewhere(chain, lines, lambda e: e.exception == typ and bool(e.message))


def parse_lines(lines: list[Line], text: str, truncated: bool = False) -> Report:
    """Build a Report from cleaned lines (and the cleaned text they came from)."""
    ranks = sorted({ln.rank for ln in lines if ln.rank is not None})
    chains: list[list[ExceptionInfo]] = []
    seen: set[tuple] = set()
    for group in _groups(lines):
        for chain in parse_group(group):
            key = _chain_key(chain)
            if key not in seen:
                seen.add(key)
                chains.append(chain)
    if not chains:
        loose = loose_exceptions(lines)
        chains = [[e] for e in loose[:20]]
    # in text order; a chain without a line number (a truncated trace) sorts last, not first
    chains.sort(key=lambda c: c[0].line_no if c[0].line_no is not None else 1 << 62)
    primary_chain = _pick_primary(chains)
    report = Report(text=text, truncated=truncated, ranks=ranks)
    if primary_chain and primary_chain[-1].exception == TRUNC:
        primary_chain = _repair_truncated(primary_chain, chains)
        if primary_chain[-1].exception == TRUNC:
            primary_chain = _name_from_prose(primary_chain, lines)
    elif primary_chain and _typed_but_cut(primary_chain[-1]):
        primary_chain = _message_from_elsewhere(primary_chain, lines)
    if primary_chain:
        outer_first = list(reversed(primary_chain))
        report.chain = outer_first
        report.primary = outer_first[0]
        report.signature = build_signature(outer_first)
        report.other_errors = [e for c in chains if c is not primary_chain for e in reversed(c)][:20]
    report.warnings = find_warnings(lines)
    report.metrics = parse_metrics(lines)
    scan = cap_lines(text)  # whole-text searches see every line cut to MAX_SCAN_LINE (linear time)
    report.environment = find_versions(scan)
    report.settings = find_settings(scan, ranks)
    report.failure = _failure(lines)
    obs = []
    if report.failure and report.failure.signal:
        obs.append(
            f"process killed by {report.failure.signal}"
            + (f" (exitcode {report.failure.exitcode})" if report.failure.exitcode is not None else "")
            + (f" on rank {report.failure.rank}" if report.failure.rank is not None else "")
        )
    if NCCL_TIMEOUT_RE.search(scan) and (report.primary is None or _is_knock_on(report.primary)):
        obs.append("NCCL collective timeout")
    if report.primary is None and HANG_RE.search(scan):
        obs.append("training appears to hang / make no progress")
    if report.primary is not None and report.primary.rank is None and ranks:
        report.primary.rank = next((e.rank for e in primary_chain or [] if e.rank is not None), None)
    report.observations = obs
    report.match_text = _evidence_text(lines, report)
    return report


_KNOCK_HINTS = ("rror", "imeout", "xit", "SIG", "died", "terminated", "reset", "Interrupt")
EVIDENCE_LIMIT = 256 * 1024


def _evidence_text(lines: list[Line], report: Report) -> str:
    """The part of the text symptom patterns are searched in: windows around the errors,
    warnings, the head (config dumps) and the tail — bounded, so big logs stay fast — without
    knock-on lines when the primary error is a root failure, and without the exceptions a notice
    line only quotes (`without_quoted_notice`): what a library says *would* fail is no symptom."""
    drop_knock = report.primary is not None and not any(_is_knock_on(e) for e in report.chain)
    n = len(lines)
    keep: list[int] | range
    if len(report.text) < EVIDENCE_LIMIT:  # report.text is the lines joined
        keep = range(n)
    else:
        pos = {ln.no: k for k, ln in enumerate(lines)}
        marks = {pos[e.line_no] for e in (report.chain + report.other_errors) if e.line_no in pos}
        idx: set[int] = set(range(min(n, 200))) | set(range(max(0, n - 300), n))
        for k in marks:
            idx.update(range(max(0, k - 80), min(n, k + 40)))
        idx.update(k for k, ln in enumerate(lines) if "Warning" in ln.text)
        keep = sorted(idx)
    out: list[str] = []
    size = 0
    for k in keep:
        t = without_quoted_notice(lines[k].text[:MAX_SCAN_LINE])  # patterns never scan more of a line than this
        if drop_knock and any(h in t for h in _KNOCK_HINTS) and KNOCK_ON_RE.search(t):
            continue
        out.append(t)
        size += len(t) + 1
        if size > EVIDENCE_LIMIT:
            break
    return "\n".join(out)


def parse_text(text: str) -> Report:
    """Parse a pasted traceback or a whole (in-memory) log."""
    lines = clean_text(text)
    cleaned = "\n".join(ln.text for ln in lines)
    return parse_lines(lines, cleaned)
