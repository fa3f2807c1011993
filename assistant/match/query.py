"""What of a Report is embedded / searched: the query text and each case's documents."""

from __future__ import annotations

import re
from dataclasses import dataclass

from assistant.kb.load import KB
from assistant.parse.model import Report
from assistant.parse.signature import normalise


def query_text(report: Report, limit: int = 1500) -> str:
    """Signature, chain messages, warnings and observations; the raw text when no error."""
    parts: list[str] = []
    if report.primary is not None:
        parts.append(report.signature.text())
        for exc in report.chain[1:4]:
            parts.append(f"{exc.short_type}: {normalise(exc.message)[:300]}")
    parts.extend(w[:200] for w in report.warnings[:3])
    parts.extend(report.observations)
    series = report.metric_series()
    if series:
        parts.append(" ".join(f"{k} {v[-1]:g}" for k, v in list(series.items())[:8]))
    if report.primary is None:
        parts.append(normalise(report.text[:limit]))
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
            docs.append(Doc(cid, "fixture", query_text(parse_text(text)), fixture=i))
    return docs
