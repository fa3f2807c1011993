"""The healthy-log check of `kb validate`: no symptom pattern may fire on a log of a run that is fine.

`kb/logs/healthy/*.log` are real logs of healthy tiny training runs (SFT, DPO, GRPO, KTO, reward
modelling, plain Trainer, DDP over gloo; built by `scripts/make_logs.py`) plus published logs of healthy
runs (SOURCES.md there says which and where from): the matcher drops their line shapes and the
keywords they contain as background. `kb/logs/healthy-unseen/*.log` are published logs of healthy
runs that nothing is derived from. Their progress bars, INFO lines, warnings and metric lines are
what every user's log carries around the error, so a message or log pattern that matches there would
make a case the answer for a run that is fine; a line that healthy runs do print and that is still
evidence next to an error is marked `seen_in_healthy_runs` and counts only there.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

from assistant.kb.model import Case

HEALTHY_DIR = "logs/healthy"
#: published logs of healthy runs that nothing in the matcher is derived from (neither the background
#: line shapes nor the keyword filter): the no-false-alarm check on logs the matcher was not shaped by,
#: as a user's log is. `kb validate` runs the symptom patterns over them too.
UNSEEN_DIR = "logs/healthy-unseen"


@lru_cache(maxsize=4)
def healthy_logs(kb_root: Path) -> tuple[tuple[str, str], ...]:
    """(path under the KB, text) of every healthy log the matcher learns background from."""
    return _logs(Path(kb_root), HEALTHY_DIR)


@lru_cache(maxsize=4)
def unseen_healthy_logs(kb_root: Path) -> tuple[tuple[str, str], ...]:
    """(path under the KB, text) of the published healthy logs kept out of everything the matcher
    derives (see UNSEEN_DIR)."""
    return _logs(Path(kb_root), UNSEEN_DIR)


def all_healthy_logs(kb_root: Path) -> tuple[tuple[str, str], ...]:
    """Both corpora: what `kb validate` and the no-false-alarm tests run over."""
    return healthy_logs(kb_root) + unseen_healthy_logs(kb_root)


def _logs(kb_root: Path, sub: str) -> tuple[tuple[str, str], ...]:
    d = kb_root / sub
    return tuple((f"{sub}/{p.name}", p.read_text(encoding="utf-8", errors="replace")) for p in sorted(d.glob("*.log")))


def patterns_firing_on_healthy(case: Case, logs: tuple[tuple[str, str], ...]) -> list[tuple[str, str]]:
    """(field path, message) for every message/log pattern of *case* that matches a healthy log
    (patterns marked `seen_in_healthy_runs` are exempt: they count only next to an error)."""
    from assistant.match.symptoms import first_match

    problems = []
    for kind, patterns in (("messages", case.symptoms.messages), ("log_patterns", case.symptoms.log_patterns)):
        for i, pat in enumerate(patterns):
            if pat.seen_in_healthy_runs:
                continue
            for name, text in logs:
                line = first_match(pat, text)
                if line is not None:
                    problems.append(
                        (
                            f"symptoms.{kind}.{i}",
                            f"fires on the healthy log {name}: {line[:120]!r}; narrow it, or mark it seen_in_healthy_runs",
                        )
                    )
                    break
    return problems


def foreground_keywords(case: Case, logs: tuple[tuple[str, str], ...]) -> tuple[str, ...]:
    """*case*'s context keywords (lower-cased) less those a healthy log contains: an identifier
    every run prints (`generate`, `clipped_ratio`, `processing_class`) is background, not
    evidence for one case."""
    low = _joined_lower(logs)
    return tuple(k for k in (kw.lower() for kw in case.context.keywords) if k not in low)


@lru_cache(maxsize=4)
def _joined_lower(logs: tuple[tuple[str, str], ...]) -> str:
    return "\n\0\n".join(text.lower() for _, text in logs)


_DIGITS = re.compile(r"\d+(?:\.\d+)?(?:e[-+]?\d+)?")
_RANK = re.compile(r"^\s*(?:\[(?:rank|default)\d+\]:\s?)+")


def line_key(line: str) -> str:
    """A line's shape: rank prefix dropped, numbers replaced, lower-cased, blanks collapsed."""
    line = _RANK.sub("", line.rsplit("\r", 1)[-1])
    return " ".join(_DIGITS.sub("0", line.lower()).split())


def is_progress_bar(line: str) -> bool:
    """tqdm / datasets progress lines (`Map: 100%|██| 16/16 [00:00<00:00, …]`)."""
    return "it/s]" in line or "s/it]" in line or "examples/s]" in line or ("%|" in line and "/" in line)


def background_lines(logs: tuple[tuple[str, str], ...]) -> frozenset[str]:
    """Shapes of the lines healthy runs print (minus blank and trivially short ones)."""
    keys = set()
    for _, text in logs:
        for raw in text.splitlines():
            for part in raw.split("\r"):
                k = line_key(part)
                if len(k) >= 8:
                    keys.add(k)
    return frozenset(keys)
