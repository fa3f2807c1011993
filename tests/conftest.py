"""Shared fixtures: the bundled KB, its real reports (positive fixtures, out-of-scope), a loaded matcher."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
KB_ROOT = ROOT / "kb"
os.environ.setdefault("HF_HUB_OFFLINE", "1")


def shared_reports() -> list[tuple[str, str]]:
    """(case_id, text) for every real report kept as a positive fixture in the repository's KB
    (the research reports were vendored there; nothing is read from outside the repository)."""
    from assistant.kb.load import load_kb

    kb = load_kb(KB_ROOT)
    return [(cid, text) for cid in sorted(kb.positives) for text in kb.positives[cid]]


def report_for(case_id: str) -> str:
    """The first real report of *case_id*."""
    return next(t for c, t in shared_reports() if c == case_id)


def oos_reports() -> list[str]:
    """Real reports whose cause is in no case (kb/eval/out_of_scope.jsonl)."""
    path = KB_ROOT / "eval" / "out_of_scope.jsonl"
    return [json.loads(x)["text"] for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


@pytest.fixture(scope="session")
def kb():
    from assistant.kb.load import load_kb

    return load_kb()


@pytest.fixture(scope="session")
def matcher():
    from assistant.match.engine import Matcher

    return Matcher.load(progress=False)
