"""Shared fixtures: the bundled KB, the shared research reports, a loaded matcher."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "research"
os.environ.setdefault("HF_HUB_OFFLINE", "1")


def shared_reports() -> list[tuple[str, str]]:
    """(case_id, text) for every real report in shared/research/cases.jsonl."""
    out = []
    for line in (SHARED / "cases.jsonl").read_text().splitlines():
        row = json.loads(line)
        out += [(row["case_id"], r["text"]) for r in row.get("example_reports", [])]
    return out


def oos_reports() -> list[str]:
    return [json.loads(x)["text"] for x in (SHARED / "out_of_scope_reports.jsonl").read_text().splitlines() if x.strip()]


@pytest.fixture(scope="session")
def kb():
    from assistant.kb.load import load_kb

    return load_kb()


@pytest.fixture(scope="session")
def matcher():
    from assistant.match.engine import Matcher

    return Matcher.load(progress=False)
