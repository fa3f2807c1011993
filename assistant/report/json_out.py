"""JSON of a parsed Report (`trl-help parse --format json`)."""

from __future__ import annotations

from assistant.parse.model import Report


def report_json(report: Report) -> str:
    data = report.model_dump(mode="json")
    data["metric_series"] = report.metric_series()
    data["signature"]["text"] = report.signature.text()
    return __import__("json").dumps(data, indent=1, ensure_ascii=False)
