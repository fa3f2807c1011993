"""Trainer / TRL metric lines: `{'loss': 0.0, 'grad_norm': nan, …}` dicts and tables."""

from __future__ import annotations

import math
import re

from assistant.limits import MAX_SCAN_LINE
from assistant.parse.clean import Line
from assistant.parse.model import MetricRow
from assistant.vocab import METRIC_SPELLINGS

#: transformers >= 5 logs the values as strings: {'loss': '0', 'grad_norm': '2.088', ...}
DICT_RE = re.compile(r"\{\s*['\"][\w/.\-]+['\"]\s*:\s*['\"]?[-+\w.]+.*\}")
PAIR_RE = re.compile(
    r"['\"](?P<k>[\w/.\-]+)['\"]\s*:\s*(?P<q>['\"]?)(?P<v>[-+]?(?:nan|inf|infinity|\d+(?:\.\d*)?(?:e[-+]?\d+)?|\.\d+(?:e[-+]?\d+)?))(?P=q)(?![\w.])",
    re.I,
)
_SPLIT_RE = re.compile(r"\s*\|\s*|\t|\s{2,}")

#: logged name (or its last path part) -> canonical metric name used by KB cases
_CANON = METRIC_SPELLINGS


def canonical_name(name: str) -> str | None:
    low = name.strip().lower()
    if low in _CANON:
        return _CANON[low]
    last = low.rsplit("/", 1)[-1]
    if low.startswith("completions/") and last in _CANON:
        return _CANON[last]
    if low in ("rewards/mean", "train/reward"):
        return "reward"
    if low.startswith("train/"):
        return _CANON.get(low[6:])
    return None


def _num(v: str) -> float | None:
    try:
        return float(v)
    except ValueError:
        return None


def parse_dict_line(text: str) -> dict[str, float] | None:
    if "{" not in text or ":" not in text or not DICT_RE.search(text):
        return None
    vals = {}
    for m in PAIR_RE.finditer(text):
        x = _num(m.group("v"))
        if x is not None:
            vals[m.group("k")] = x
    return vals or None


def _cells(text: str) -> list[str]:
    return [c for c in _SPLIT_RE.split(text.strip().strip("|")) if c != ""]


def parse_metrics(lines: list[Line], limit: int = 5000) -> list[MetricRow]:
    """Metric rows from dict lines and from markdown / TSV / space tables."""
    rows: list[MetricRow] = []
    header: list[str] | None = None
    for ln in lines:
        t = ln.text
        if len(t) > MAX_SCAN_LINE:  # no metric line is that long; a huge line would cost a regex split
            header = None
            continue
        d = parse_dict_line(t)
        if d:
            rows.append(MetricRow(values=d, line_no=ln.no))
            header = None
            continue
        cells = _cells(t)
        if len(cells) >= 2 and all(not _is_number(c) for c in cells) and any(canonical_name(c) for c in cells):
            header = cells
            continue
        if header and cells and set("".join(cells)) <= set("-:| "):
            continue  # markdown separator row
        if header and len(cells) == len(header) and all(_is_number(c) or c == "" for c in cells):
            vals = {h: float(c) for h, c in zip(header, cells) if _is_number(c)}
            rows.append(MetricRow(values=vals, line_no=ln.no))
            continue
        header = None if not cells else header
        if len(rows) >= limit:
            break
    return rows


def _is_number(c: str) -> bool:
    try:
        x = float(c)
        return not math.isnan(x) or c.lower() == "nan"
    except ValueError:
        return False
