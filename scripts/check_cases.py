"""Validate the given case files (schema, fixtures, related ids of the KB's own cases), for drafting.

.venv/bin/python scripts/check_cases.py kb/cases/a.yaml kb/cases/b.yaml
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from assistant.kb.load import load_case_file  # noqa: E402
from assistant.match.symptoms import first_match  # noqa: E402
from probes.registry import probe_ids  # noqa: E402

#: the case ids of the repository's KB (one file per case), plus those of the files being checked
ALL_IDS = {p.stem for p in (ROOT / "kb/cases").glob("*.yaml")} | {Path(a).stem for a in sys.argv[1:]}

bad = 0
for arg in sys.argv[1:]:
    path = Path(arg)
    case, problems = load_case_file(path)
    msgs = [str(p) for p in problems]
    if case:
        for r in case.related:
            if r not in ALL_IDS:
                msgs.append(f"{path}: related: unknown case id {r!r}")
        for fx in case.fixtures.negative:
            if fx.confused_with and fx.confused_with not in ALL_IDS:
                msgs.append(f"{path}: confused_with: unknown case id {fx.confused_with!r}")
        if case.probe and case.probe not in probe_ids():
            msgs.append(f"{path}: probe: unknown probe {case.probe!r}")
        for fx in case.fixtures.positive + case.fixtures.negative:
            if fx.file and not (ROOT / "kb/fixtures" / case.id / fx.file).is_file():
                msgs.append(f"{path}: fixtures: missing file {fx.file}")
        # every positive fixture should hit at least one symptom pattern or be explained
        pats = case.symptoms.messages + case.symptoms.log_patterns
        for fx in case.fixtures.positive:
            text = fx.text or (ROOT / "kb/fixtures" / case.id / fx.file).read_text()
            if pats and not any(first_match(p, text) for p in pats):
                msgs.append(
                    f"{path}: note: positive {fx.file or 'inline'} hits no symptom pattern (ok only if it is a bare title / metrics table)"
                )
        for fx in case.fixtures.negative:
            text = fx.text or ""
            if any(first_match(p, text) for p in case.symptoms.messages):
                msgs.append(f"{path}: negative fixture matches this case's own message pattern")
    for m in msgs:
        print(m)
    bad += bool(msgs)
    if not msgs:
        print(f"{path}: ok")
sys.exit(1 if bad else 0)
