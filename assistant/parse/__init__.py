"""parse stage: text or a (huge) log file → a typed Report. No ML imports here."""

from assistant.parse.decode import InputError
from assistant.parse.model import ExceptionInfo, Frame, MetricRow, Report, Signature
from assistant.parse.parser import parse_text
from assistant.parse.stream import parse_bytes, parse_file, parse_stream

__all__ = [
    "ExceptionInfo",
    "Frame",
    "InputError",
    "MetricRow",
    "Report",
    "Signature",
    "parse_bytes",
    "parse_file",
    "parse_stream",
    "parse_text",
]
