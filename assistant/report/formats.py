"""Output formats of a `Diagnosis`: one table, each renderer takes the diagnosis and returns a string
(pip-audit style), so every front end prints the same answer for the same format."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from assistant.match.diagnosis import Diagnosis

Renderer = Callable[[Diagnosis], str]


def render_json(d: Diagnosis, probe_result: dict[str, Any] | None = None) -> str:
    """One JSON document (`schema_version`); a probe's result is nested in the match it confirms."""
    doc = d.model_dump(mode="json")
    if probe_result is not None and doc["matches"]:
        doc["matches"][0]["probe_result"] = probe_result
    return json.dumps(doc, indent=1) + "\n"


def _text(d: Diagnosis) -> str:
    from assistant.report.text import render_text

    return render_text(d)


def _markdown(d: Diagnosis) -> str:
    from assistant.report.markdown import render_markdown

    return render_markdown(d)


FORMATS: dict[str, Renderer] = {"text": _text, "json": render_json, "markdown": _markdown}


def render(d: Diagnosis, fmt: str) -> str:
    """*d* in format *fmt* (a key of `FORMATS`)."""
    return FORMATS[fmt](d)
