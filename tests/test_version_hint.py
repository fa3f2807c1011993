"""The "(try --installed)" advice belongs to the CLI renderers, not to the version verdict or replies."""

from __future__ import annotations

import io

from rich.console import Console

from assistant.match.case_content import case_content
from assistant.match.diagnosis import Diagnosis, Match, VersionVerdict
from assistant.match.versions import verdict
from assistant.report.markdown import render_markdown
from assistant.report.text import render_text
from assistant.triage.reply import draft_reply


def _diagnosis(kb) -> tuple[Diagnosis, str]:
    case = next(c for c in kb.cases.values() if c.affected)
    v, detail = verdict(case, {})
    m = Match(
        case_id=case.id,
        score=0.9,
        confidence="high",
        versions=VersionVerdict(verdict=v, detail=detail),  # type: ignore[arg-type]
        **case_content(case),
    )
    return Diagnosis(verdict="match", matches=[m], error=None, environment={}), detail


def test_verdict_is_a_domain_string_without_cli_advice(kb) -> None:
    d, detail = _diagnosis(kb)
    assert d.matches[0].versions.verdict == "unknown"
    assert "not found in the input" in detail
    assert "--installed" not in detail


def test_cli_renderers_add_the_hint_and_the_reply_does_not(kb) -> None:
    d, _ = _diagnosis(kb)
    assert "(try --installed)" in render_markdown(d)
    buf = io.StringIO()
    assert "(try --installed)" in render_text(d, console=Console(file=buf, width=200, color_system=None))
    assert "--installed" not in draft_reply(d)


def test_no_hint_when_the_case_records_no_ranges(kb) -> None:
    case = next(c for c in kb.cases.values() if not c.affected)
    v, detail = verdict(case, {})
    m = Match(
        case_id=case.id,
        score=0.9,
        confidence="high",
        versions=VersionVerdict(verdict=v, detail=detail),  # type: ignore[arg-type]
        **case_content(case),
    )
    d = Diagnosis(verdict="match", matches=[m], error=None, environment={})
    assert "--installed" not in render_markdown(d)


def test_runners_up_below_the_floor_are_not_listed(kb) -> None:
    from assistant.report.candidates import CANDIDATE_FLOOR

    d, _ = _diagnosis(kb)
    cases = [c for c in kb.cases.values() if c.id != d.matches[0].case_id][:2]
    low, kept = (
        d.matches[0].model_copy(update={"case_id": c.id, "title": c.title, "score": s})
        for c, s in zip(cases, (CANDIDATE_FLOOR / 2, CANDIDATE_FLOOR * 4))
    )
    d = d.model_copy(update={"matches": [d.matches[0], low, kept]})
    md = render_markdown(d)
    text = render_text(d, console=Console(file=io.StringIO(), width=200, color_system=None))
    for out in (md, text):
        assert kept.case_id in out and low.case_id not in out
