"""`kb validate --matcher`: fixtures judged by the real matcher."""

from __future__ import annotations

from assistant.kb.check_fixtures import check_fixtures


def test_a_negative_that_is_its_cases_own_report_is_flagged(matcher, monkeypatch):
    cid = "tokenizer-missing-pad-token"
    own_report = matcher.kb.positives[cid][0]
    monkeypatch.setitem(matcher.kb.negatives, cid, [(own_report, None)])
    problems = [p for p in check_fixtures(matcher, matcher.kb.root, cases=[cid]) if p.file.endswith(f"{cid}.yaml")]
    assert [p.field for p in problems] == ["fixtures.negative.0"]


def test_a_positive_of_another_case_is_flagged(matcher, monkeypatch):
    cid = "tokenizer-missing-pad-token"
    foreign = matcher.kb.positives["lora-gradient-checkpointing-no-grad"][0]
    monkeypatch.setitem(matcher.kb.positives, cid, [foreign])
    problems = [p for p in check_fixtures(matcher, matcher.kb.root, cases=[cid]) if p.file.endswith(f"{cid}.yaml")]
    assert problems and problems[0].field == "fixtures.positive.0"
    assert "lora-gradient-checkpointing-no-grad" in problems[0].message


def test_only_the_named_cases_are_checked(matcher, monkeypatch):
    broken = "tokenizer-missing-pad-token"
    monkeypatch.setitem(matcher.kb.negatives, broken, [(matcher.kb.positives[broken][0], None)])
    other = "lora-gradient-checkpointing-no-grad"
    assert [p for p in check_fixtures(matcher, matcher.kb.root, cases=[other]) if broken in p.file] == []
    assert [p for p in check_fixtures(matcher, matcher.kb.root, cases=[broken]) if broken in p.file]
