"""`--format json`: one object {"issues": [...], "clusters": [...], "new_categories": [...], ...}.

Each issue carries `number, title, verdict, matches, labels, reply, duplicates` (the contract;
`matches` are the objects of `explain --format json`) plus extra keys (url, versions, error, …).
`problems` lists the issues (or parts of the export) that could not be used; `stats` the counts.

Written issue by issue (`write_json`): the document for 10,000 issues is ~90 MB, and building it
as one object first took more memory than the whole run. The bytes are those of
``json.dumps(result.model_dump(mode="json"), indent=1, ensure_ascii=False)``.
"""

from __future__ import annotations

import io
import json
from typing import TextIO

from assistant.triage.run import TriageResult


def _dumps(value: object, level: int) -> str:
    """*value* as `json.dumps(indent=1)` writes it *level* levels deep (JSON strings hold no raw newline)."""
    return json.dumps(value, indent=1, ensure_ascii=False).replace("\n", "\n" + " " * level)


def write_json(result: TriageResult, out: TextIO) -> None:
    """Write the document to *out*, one issue at a time."""
    out.write('{\n "issues": [')
    for k, issue in enumerate(result.issues):
        out.write(("," if k else "") + "\n  " + _dumps(issue.model_dump(mode="json"), 2))
    out.write("\n ]" if len(result.issues) else "]")
    rest = result.model_dump(mode="json", exclude={"issues"})
    for key, value in rest.items():
        out.write(f",\n {json.dumps(key)}: " + _dumps(value, 1))
    out.write("\n}")


def render_json(result: TriageResult) -> str:
    buf = io.StringIO()
    write_json(result, buf)
    return buf.getvalue()
