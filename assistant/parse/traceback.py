"""Traceback grammar: CPython (chained), IPython/Jupyter/Colab, rich boxes, pytest `E` lines."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from assistant.limits import cap_message
from assistant.parse.clean import Line
from assistant.parse.model import FRAME_PACKAGES, ExceptionInfo, Frame

#: ASCII identifiers only: prose glued to the name ("GRPO时会报错ImportError: …") is not part of it
_EXC_NAME = (
    r"(?:[A-Za-z_][A-Za-z0-9_]*\.)*"
    r"(?:[A-Z][A-Za-z0-9_]*(?:Error|Exception|Exit|Interrupt|Failure|Timeout)|Exception|StopIteration)"
)
#: the same name written several times over: ranks printing one error line at the same moment
#: ("RuntimeErrorRuntimeErrorRuntimeError: : : CUDA error: …")
_REPEATED_RE = re.compile(r"^(?P<t>[A-Za-z_.][A-Za-z0-9_.]*?(?:Error|Exception))(?P=t)+$")


def exception_name(name: str, message: str) -> tuple[str, str]:
    """The exception name and message as one rank printed them, from a line several ranks wrote at once."""
    m = _REPEATED_RE.match(name)
    if m is None:
        return name, message
    return m.group("t"), re.sub(r"^(?::\s*)+", "", message)


EXC_RE = re.compile(rf"^(?:E\s+)?(?P<type>{_EXC_NAME})(?::\s?(?P<msg>.*))?$")
#: an exception inside a line (bare pastes such as "qwen2 lora 报错：RuntimeError: …")
EXC_ANY_RE = re.compile(rf"(?<![A-Za-z0-9_.])(?P<type>{_EXC_NAME}):\s?(?P<msg>\S.*)$")
#: an exception name spelled as words in prose ("Runtime Error: Cuda error: out of memory",
#: "value error: ..."): the builtin error types users retype by hand
SPELLED_EXC_RE = re.compile(
    r"(?<![A-Za-z0-9_.])(?P<type>runtime|value|type|key|attribute|import|index|assertion|name|"
    r"module ?not ?found|not ?implemented|file ?not ?found|out ?of ?memory|cuda|os|permission|"
    r"connection|timeout|recursion|zero ?division) error\s*:\s*(?P<msg>\S.*)$",
    re.I,
)
#: the spelled words (spaces removed, lower-cased) -> the exception type they name
_SPELLED_TYPES = {
    "runtime": "RuntimeError",
    "value": "ValueError",
    "type": "TypeError",
    "key": "KeyError",
    "attribute": "AttributeError",
    "import": "ImportError",
    "index": "IndexError",
    "assertion": "AssertionError",
    "name": "NameError",
    "modulenotfound": "ModuleNotFoundError",
    "notimplemented": "NotImplementedError",
    "filenotfound": "FileNotFoundError",
    "outofmemory": "torch.OutOfMemoryError",
    "cuda": "RuntimeError",
    "os": "OSError",
    "permission": "PermissionError",
    "connection": "ConnectionError",
    "timeout": "TimeoutError",
    "recursion": "RecursionError",
    "zerodivision": "ZeroDivisionError",
}
WARN_RE = re.compile(r"(?<![A-Za-z0-9_.])(?P<type>(?:[A-Za-z_]\w*\.)*[A-Z]\w*Warning):\s?(?P<msg>\S.*)$")
#: a log level before a quoted exception name: "[INFO:swift] No vLLM installed, ... you will get
#: `ImportError: cannot import name ...`" tells what *would* fail, it is not the failure
NOTICE_LEVEL_RE = re.compile(r"\b(?:INFO|DEBUG|WARNING|WARN|NOTICE)\b")
#: spelled exception names are looked for in the first characters of a line only
MAX_SPELLED_LINE = 2000
TB_START_RE = re.compile(r"Traceback \(most recent call last\)")
#: a notebook cell's error copied as JSON (VS Code: name / message; .ipynb: ename / evalue)
NOTEBOOK_NAME_RE = re.compile(rf'^\s*"e?name"\s*:\s*"(?P<type>{_EXC_NAME})",?\s*$')
NOTEBOOK_MSG_RE = re.compile(r'^\s*"(?:message|evalue)"\s*:\s*"(?P<msg>(?:[^"\\]|\\.)*)",?\s*$')
IPY_HEADER_RE = re.compile(rf"^(?P<type>{_EXC_NAME})\s{{3,}}Traceback \(most recent call last\)")
#: exception name given to a traceback whose exception line is missing (a paste cut short)
TRUNC = "<truncated traceback>"
CONTEXT_MARK = "During handling of the above exception, another exception occurred"
CAUSE_MARK = "The above exception was the direct cause of the following exception"

FRAME_RES = (
    re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+)(?:, in (?P<func>.+))?'),
    # IPython 8: File ~/x/y.py:348, in Cls.fn(self, a)
    re.compile(r"^\s*File (?P<file>\S+?):(?P<line>\d+)(?:, in (?P<func>[^(\s]+))?"),
    re.compile(r"^\s*Cell (?P<file>In ?\[\d*\]), line (?P<line>\d+)"),
    # old IPython: /path/x.py in fn(a, b)  and  <ipython-input-3-abc> in <module>
    re.compile(r"^\s*(?P<file>(?:/|~|[A-Za-z]:\\)\S+\.py|<ipython-input-[^>]+>) in (?P<func>[\w<>]+)"),
    # rich: │ /path/x.py:123 in fn
    re.compile(r"^\s*[│|]?\s*(?P<file>\S+\.py):(?P<line>\d+) in (?P<func>[\w<>.]+)"),
)
CODE_ARROW_RE = re.compile(r"^\s*-+>\s*\d+\s+(?P<code>.*)$")
RICH_BORDER_RE = re.compile(r"^\s*[╭╰│┃]")
LOGLIKE_RE = re.compile(
    r"^(?:\s*\d{4}-\d\d-\d\d[ T]|\s*\[\d{4}-|\s*\d\d:\d\d:\d\d|\s*(?:INFO|WARNING|DEBUG|ERROR)\b|"
    r"\s*wandb:|\s*\d+%\||\s*\[(?:INFO|WARNING|ERROR)|\s*W\d{4} |\s*E\d{4} |\s*I\d{4} )"
)
_PKG_SEG_RE = re.compile(r"[/\\](?:site|dist)-packages[/\\]([^/\\]+)")
_SRC_SEG_RE = re.compile(
    r"[/\\](trl|peft|transformers|accelerate|deepspeed|vllm|bitsandbytes|unsloth|torch)[/\\][^/\\]+"
)


def attribute(path: str) -> str:
    """The package a frame's file belongs to."""
    m = None
    for m in _PKG_SEG_RE.finditer(path):  # noqa: B007 - keeps the last match
        pass
    if m:
        top = m.group(1).split(".")[0].lower()
        top = {"flash_attn": "flash-attn", "pytorch": "torch"}.get(top, top)
        return top if top in FRAME_PACKAGES else "other"
    for m in _SRC_SEG_RE.finditer(path):  # noqa: B007 - keeps the last match
        pass
    if m:
        return m.group(1)
    if re.search(r"[/\\]lib[/\\]python3\.\d+[/\\]", path) or path.startswith("<frozen"):
        return "python"
    return "user"


@dataclass
class _Block:
    frames: list[Frame] = field(default_factory=list)
    header_type: str | None = None


def _match_frame(text: str) -> Frame | None:
    for rx in FRAME_RES:
        m = rx.match(text)
        if m:
            d = m.groupdict()
            f = d["file"]
            line = d.get("line")
            func = d.get("func")
            if func:
                func = func.split("(")[0].strip().rstrip(",")
            return Frame(file=f, line=int(line) if line else None, function=func, package=attribute(f))
    return None


def _strip_box(text: str) -> str:
    if RICH_BORDER_RE.match(text):
        return text.strip().strip("│┃").strip()
    return text


def parse_group(lines: list[Line]) -> list[list[ExceptionInfo]]:
    """Parse lines of one stream into exception chains (each in printed order, innermost first)."""
    chains: list[list[ExceptionInfo]] = []
    current: list[ExceptionInfo] = []  # chain being built
    pending_relation: str | None = None
    block: _Block | None = None
    i = 0
    n = len(lines)
    while i < n:
        ln = lines[i]
        text = _strip_box(ln.text)
        stripped = text.strip()
        if not stripped:
            i += 1
            continue
        if CONTEXT_MARK in stripped or CAUSE_MARK in stripped:
            pending_relation = "context" if CONTEXT_MARK in stripped else "cause"
            i += 1
            continue
        if TB_START_RE.search(stripped):
            hdr = IPY_HEADER_RE.match(stripped)
            block = _Block(header_type=hdr.group("type") if hdr else None)
            if pending_relation is None and current:
                chains.append(current)
                current = []
            i += 1
            continue
        if block is not None:
            frame = _match_frame(text)
            if frame is not None:
                block.frames.append(frame)
                i += 1
                continue
            arrow = CODE_ARROW_RE.match(text)
            if arrow and block.frames:
                block.frames[-1].code = arrow.group("code").strip()
                i += 1
                continue
        m = EXC_RE.match(stripped)
        if m and (block is not None or m.group("msg") is not None):
            exc, i = _take_exception(lines, i, m, ln)
            if block is not None:
                exc.frames = block.frames
            exc.relation = pending_relation
            if pending_relation is None and current:
                chains.append(current)
                current = []
            current.append(exc)
            pending_relation = None
            block = None
            continue
        if block is not None:
            if block.frames and text.startswith((" ", "\t")) and block.frames[-1].code is None:
                block.frames[-1].code = stripped[:300]
            elif block.frames and not text.startswith((" ", "\t")) and LOGLIKE_RE.match(text):
                # truncated traceback: a log line resumed; keep what we have
                _flush_truncated(block, current, pending_relation)
                pending_relation = None
                block = None
        i += 1
    if block is not None and (block.frames or block.header_type):
        _flush_truncated(block, current, pending_relation)
    if current:
        chains.append(current)
    return chains


def _flush_truncated(block: _Block, current: list[ExceptionInfo], relation: str | None) -> None:
    """A traceback whose exception line is missing (paste cut short)."""
    current.append(
        ExceptionInfo(
            exception=block.header_type or TRUNC,
            message="",
            frames=block.frames,
            relation=relation,
        )
    )


def _take_exception(lines: list[Line], i: int, m: re.Match[str], ln: Line) -> tuple[ExceptionInfo, int]:
    msg_lines = [m.group("msg") or ""]
    j = i + 1
    while j < len(lines) and len(msg_lines) < 30:
        t = _strip_box(lines[j].text)
        s = t.strip()
        if (
            not s
            or TB_START_RE.search(s)
            or CONTEXT_MARK in s
            or CAUSE_MARK in s
            or EXC_RE.match(s)
            or _match_frame(t)
            or LOGLIKE_RE.match(t)
            or s.startswith(("[rank", "W1", "E1", "I1"))
            or (lines[j].rank is not None and lines[j].rank != ln.rank)
        ):
            break
        msg_lines.append(s)
        j += 1
    name, message = exception_name(m.group("type"), "\n".join(x for x in msg_lines).strip())
    exc = ExceptionInfo(exception=name, message=cap_message(message), rank=ln.rank, line_no=ln.no)
    return exc, j


def _notebook_error(lines: list[Line], i: int) -> ExceptionInfo | None:
    """The error of a notebook cell copied as JSON: VS Code's `"name": "TypeError",` then
    `"message": "..."`, or an .ipynb output's `"ename"` then `"evalue"` (consecutive lines)."""
    m = NOTEBOOK_NAME_RE.match(lines[i].text)
    if m is None or i + 1 >= len(lines):
        return None
    v = NOTEBOOK_MSG_RE.match(lines[i + 1].text)
    if v is None:
        return None
    try:
        msg = json.loads(f'"{v.group("msg")}"')
    except ValueError:
        msg = v.group("msg")
    ln = lines[i]
    return ExceptionInfo(exception=m.group("type"), message=cap_message(msg), rank=ln.rank, line_no=ln.no)


def _quoted_in_notice(text: str, start: int) -> bool:
    """True when the exception at *start* is quoted inside an INFO / WARNING log line (a library
    telling what would fail, e.g. ms-swift 2.x's "No vLLM installed ... you will get `ImportError:
    ...`"), not raised."""
    return start > 0 and text[start - 1] in "`'\"" and NOTICE_LEVEL_RE.search(text, 0, start) is not None


def without_quoted_notice(text: str) -> str:
    """*text* cut before an exception it quotes inside an INFO / WARNING notice (`_quoted_in_notice`),
    so no symptom pattern reads it as raised; any other line is returned unchanged."""
    if ":" not in text or NOTICE_LEVEL_RE.search(text) is None:
        return text
    m = EXC_ANY_RE.search(text)
    return text[: m.start()].rstrip() if m and _quoted_in_notice(text, m.start()) else text


def loose_exceptions(lines: list[Line]) -> list[ExceptionInfo]:
    """Exceptions embedded mid-line, in a notebook's JSON error, or spelled as words in prose
    (used only when nothing anchored was found)."""
    out = []
    for i, ln in enumerate(lines):
        if '"' in ln.text and (nb := _notebook_error(lines, i)) is not None:
            out.append(nb)
            continue
        m = EXC_ANY_RE.search(ln.text)
        if m and _quoted_in_notice(ln.text, m.start()):
            continue
        if m:
            exc, msg = exception_name(m.group("type"), m.group("msg").strip())
        elif (m := SPELLED_EXC_RE.search(ln.text[:MAX_SPELLED_LINE])) is not None:
            exc = _SPELLED_TYPES[m.group("type").replace(" ", "").lower()]
            msg = m.group("msg").strip()
            if m.group("type").lower() == "cuda":
                msg = f"CUDA error: {msg}"  # torch's own wording: "RuntimeError: CUDA error: ..."
        else:
            continue
        out.append(ExceptionInfo(exception=exc, message=cap_message(msg), rank=ln.rank, line_no=ln.no))
    return out


def find_warnings(lines: list[Line], limit: int = 50) -> list[str]:
    seen: dict[str, None] = {}
    for ln in lines:
        if "Warning" not in ln.text:
            continue
        m = WARN_RE.search(ln.text)
        if m:
            seen.setdefault(f"{m.group('type').rsplit('.', 1)[-1]}: {m.group('msg').strip()[:300]}", None)
            if len(seen) >= limit:
                break
    return list(seen)
