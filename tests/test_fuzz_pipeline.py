"""A slice of the pipeline fuzz (`python -m tests.fuzz.run`, 100k inputs on demand) in CI: the same
generator and checks on 130 inputs of every kind, explain and triage paths."""

from __future__ import annotations

import itertools

from tests.conftest import oos_reports, shared_reports
from tests.fuzz.inputs import KINDS, generate
from tests.fuzz.run import check_explain, check_triage


def _inputs(n: int) -> list[tuple[str, str]]:
    reports = [t for _, t in shared_reports()] + oos_reports()
    return list(itertools.islice(generate(7, reports), n))


def test_generator_is_deterministic_and_covers_every_kind():
    a, b = _inputs(130), _inputs(130)
    assert a == b
    assert {k for k, _ in a} >= set(KINDS) - {"huge-line"}
    texts = "".join(t for _, t in a)
    assert "\ud83d" in texts and "\x1b]52;" in texts and "\x00" in texts


def test_hostile_inputs_through_explain_and_triage(matcher):
    inputs = _inputs(130) + [("huge-line", "RuntimeError: x\n" + "a_" * 200_000)]
    for _kind, text in inputs:
        check_explain(matcher, text)
    check_triage(matcher, [t for _, t in inputs[:64]], 1)
