"""The CLI's "(try --installed)" advice, added by renderers, never by the version verdict."""

from __future__ import annotations

from assistant.match.diagnosis import Match
from assistant.match.versions import NOT_IN_INPUT


def version_detail(m: Match, hint: bool = True) -> str:
    """The version detail, with the `--installed` hint when the versions were not in the input."""
    detail = m.versions.detail
    return f"{detail} (try --installed)" if hint and detail.endswith(NOT_IN_INPUT) else detail
