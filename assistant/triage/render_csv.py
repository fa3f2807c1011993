"""`--format csv`: one row per issue (spreadsheet-friendly; replies are left out)."""

from __future__ import annotations

import csv
import io

from assistant.triage.run import TriageResult

COLUMNS = (
    "number",
    "title",
    "url",
    "verdict",
    "case_id",
    "score",
    "confidence",
    "version_verdict",
    "labels",
    "duplicates",
    "error",
)


#: a cell starting with one of these is a formula to a spreadsheet (=HYPERLINK(...), +cmd, @SUM)
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def cell(value: object) -> str:
    """A CSV cell a spreadsheet shows as text: user text that would start a formula gets a
    leading apostrophe (the OWASP advice for CSV injection)."""
    text = str(value)
    return "'" + text if text.startswith(_FORMULA_START) else text


def render_csv(result: TriageResult) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(COLUMNS)
    for r in result.issues:
        top = r.matches[0] if r.matches else None
        w.writerow(
            [
                cell(v)
                for v in [
                    r.number,
                    r.title,
                    r.url or "",
                    r.verdict,
                    top.case_id if top and r.verdict == "match" else "",
                    f"{top.score:.4f}" if top else "",
                    top.confidence if top and r.verdict == "match" else "",
                    r.versions.verdict if r.versions and r.verdict == "match" else "",
                    " ".join(r.labels),
                    " ".join(str(n) for n in r.duplicates),
                    r.error or "",
                ]
            ]
        )
    return buf.getvalue()
