"""Which runners-up a renderer lists as "Other candidates"."""

from __future__ import annotations

from assistant.match.diagnosis import Diagnosis, Match

#: a runner-up scoring below this (shown as 0.00-0.04) says nothing to a reader and is not listed
CANDIDATE_FLOOR = 0.05


def other_candidates(d: Diagnosis) -> list[Match]:
    """Matches after the first whose score reaches the floor."""
    return [m for m in d.matches[1:] if m.score >= CANDIDATE_FLOOR]
