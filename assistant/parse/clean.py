"""Noise removal: ANSI colours, tqdm carriage returns, rank prefixes, markdown, HTML escapes."""

from __future__ import annotations

import html
import re
from dataclasses import dataclass

ANSI_RE = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07]*\x07|\x1b[()][A-Z0-9]")
#: `[rank3]: `, `[default3]:` (torchrun --tee), `[1,3]<stderr>:` (mpirun), `rank3: `
RANK_RE = re.compile(
    r"^\s*(?:\[rank(\d+)\]:|\[default(\d+)\]:|\[\d+,(\d+)\]<std(?:out|err)>:|rank(\d+):)\s?"
)
FENCE_RE = re.compile(r"^\s*(```|~~~)")
#: what may follow an opening fence on its own line: a language tag (```python, ```bash)
FENCE_INFO_RE = re.compile(r"^[\w+.#-]*$")
#: a line wrapped in inline code: `ValueError: ...`
INLINE_CODE_RE = re.compile(r"^(\s*)`([^`].*?)`?\s*$")
QUOTE_RE = re.compile(r"^\s*>\s?")
HTML_RE = re.compile(r"&(?:lt|gt|amp|quot|#39|#x27|#34);")


@dataclass(frozen=True, slots=True)
class Line:
    """One cleaned input line with the rank it came from (None when unprefixed)."""

    text: str
    rank: int | None
    no: int  # 1-based line number in the input


def clean_text(text: str) -> list[Line]:
    """Split *text* into cleaned lines."""
    if HTML_RE.search(text):
        text = html.unescape(text)
    text = text.replace("\r\n", "\n")
    raw = text.split("\n")
    quoted = sum(1 for r in raw if r.startswith(">"))
    strip_quotes = quoted > 0 and quoted >= 0.5 * sum(1 for r in raw if r.strip())
    out: list[Line] = []
    for i, line in enumerate(raw, 1):
        if "\x1b" in line:
            line = ANSI_RE.sub("", line)
        if "\r" in line:
            # tqdm redraws with \r: the last non-empty segment is what was left on screen
            parts = [p for p in line.split("\r") if p.strip()]
            line = parts[-1] if parts else ""
        if strip_quotes:
            line = QUOTE_RE.sub("", line, count=1)
        if FENCE_RE.match(line):
            # "```ValueError: ...```" pasted on one line keeps its content; a bare fence or
            # "```python" is markup only
            line = line.strip()[3:].rstrip()
            if line.endswith(("```", "~~~")):
                line = line[:-3].rstrip()
            if FENCE_INFO_RE.match(line):
                continue
        elif line.lstrip().startswith("`"):
            line = INLINE_CODE_RE.sub(r"\1\2", line)
        rank = None
        while (m := RANK_RE.match(line)) is not None:  # launchers may nest prefixes
            rank = int(next(g for g in m.groups() if g is not None))
            line = line[m.end() :]
        out.append(Line(line.rstrip(), rank, i))
    return out
