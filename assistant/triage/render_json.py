"""`--format json`: one object {"issues": [...], "clusters": [...], "new_categories": [...], ...}.

Each issue carries `number, title, verdict, matches, labels, reply, duplicates` (the contract;
`matches` are the objects of `explain --format json`) plus extra keys (url, versions, error, …).
`problems` lists the issues (or parts of the export) that could not be used; `stats` the counts.
"""

from __future__ import annotations

import json

from assistant.triage.run import TriageResult


def render_json(result: TriageResult) -> str:
    data = result.model_dump(mode="json")
    return json.dumps(data, indent=1, ensure_ascii=False)
