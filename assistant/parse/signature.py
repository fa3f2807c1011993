"""Normalised signature: the error with user-specific details replaced by placeholders."""

from __future__ import annotations

import re

from assistant.parse.model import ExceptionInfo, Signature

_SUBS: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"(?:[A-Za-z]:\\|~?/)(?:[^\s'\"():,\]]+[/\\])*[^\s'\"():,\]]*"), "<path>"),
    (re.compile(r"\b0x[0-9a-fA-F]+\b"), "<hex>"),
    (re.compile(r"\b[\w.-]+/[\w.-]*\d[\w.-]*\b"), "<model>"),  # org/Model-7B style hub ids
    (
        re.compile(
            r"\b[A-Z][A-Za-z0-9]*?(For(?:CausalLM|ConditionalGeneration|SequenceClassification|TokenClassification))\b"
        ),
        r"<Model>\1",
    ),
    (re.compile(r"\b\d+\.\d+(?:e[-+]?\d+)?\b"), "<f>"),
    (re.compile(r"\b\d{2,}\b"), "<n>"),
    (re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f-]{20,}\b"), "<uuid>"),
]
_SPACE = re.compile(r"\s+")
_BORING_FUNCS = {"_call_impl", "_wrapped_call_impl", "forward", "inner", "wrapper", "decorate_context", "<module>"}


def normalise(message: str) -> str:
    text = message[:2000]
    for rx, repl in _SUBS:
        text = rx.sub(repl, text)
    return _SPACE.sub(" ", text).strip()


def build_signature(chain: list[ExceptionInfo]) -> Signature:
    """Signature of a chain (outermost first): the outermost exception plus distinctive frames."""
    if not chain:
        return Signature()
    top = chain[0]
    frames: list[str] = []
    for exc in chain:
        for f in exc.frames:
            if f.package in ("user", "python", "other") or not f.function:
                continue
            if f.function in _BORING_FUNCS:
                continue
            base = re.split(r"[/\\]", f.file)[-1]
            key = f"{f.package}:{base}:{f.function}"
            if key not in frames:
                frames.append(key)
    return Signature(
        exception=top.short_type,
        message=normalise(top.message),
        frames=frames[-8:],
    )
