"""`kb validate --matcher`: the fixtures judged by the real matcher, not only by the schema.

Each positive fixture is matched with itself held out of the index (as an unseen report would
be) and must put its case in the top `POSITIVE_TOP`; each negative (a near miss that belongs to
another case, or to none) must not be answered as a match of its own case. Loads the matcher (index build on a
cold cache), so it is opt-in, unlike the schema checks.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from assistant.kb.load import Problem

#: a held-out positive must rank its own case within this many candidates
POSITIVE_TOP = 3


def check_fixtures(matcher, kb_root: Path, cases: Iterable[str] | None = None) -> list[Problem]:
    """Problems naming the case file and fixture for every fixture the matcher gets wrong
    (only `cases`' fixtures when given)."""
    from assistant.parse import parse_text

    kb = matcher.kb
    problems: list[Problem] = []
    wanted = None if cases is None else set(cases)
    for cid in kb.cases if wanted is None else [c for c in kb.cases if c in wanted]:
        name = str(Path(kb_root) / "cases" / f"{cid}.yaml")
        for i, text in enumerate(kb.positives.get(cid, [])):
            ranked = [c.case_id for c in matcher.rank(parse_text(text), exclude=(cid, i))]
            if cid not in ranked[:POSITIVE_TOP]:
                pos = ranked.index(cid) + 1
                problems.append(
                    Problem(
                        name,
                        f"fixtures.positive.{i}",
                        f"held out, the matcher ranks this case #{pos} (top: {ranked[0]})",
                    )
                )
        for i, (text, _confused_with) in enumerate(kb.negatives.get(cid, [])):
            d = matcher.diagnose(parse_text(text), top=1)
            if d.verdict == "match" and d.matches[0].case_id == cid:
                problems.append(
                    Problem(name, f"fixtures.negative.{i}", "this near miss is answered as a match of its own case")
                )
    return problems
