"""Noise removal: ANSI colours, tqdm carriage returns, rank prefixes, markdown, HTML escapes."""

from __future__ import annotations

import html
import re
from dataclasses import dataclass

#: every terminal control sequence: CSI (colours, cursor), OSC (window title, OSC 8 links,
#: OSC 52 clipboard writes) ended by BEL or ESC \\, DCS/SOS/PM/APC strings, two-byte escapes
#: (ESC c resets the terminal), 8-bit C1 controls, and C0 controls other than tab/newline/CR
ANSI_RE = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"
    r"|\x1b[PX^_][^\x1b]*(?:\x1b\\)?"
    r"|\x1b[ -/]*[0-~]"
    r"|\x9b[0-?]*[ -/]*[@-~]|\x9d[^\x07\x9c]*[\x07\x9c]?|[\x80-\x9f]"
    r"|[\x00-\x08\x0b\x0c\x0e-\x1a\x1c-\x1f\x7f]|\x1b"
)


_ANY_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def strip_controls(text: str) -> str:
    """*text* without terminal control sequences (what a log may carry and a terminal would obey)."""
    return ANSI_RE.sub("", text)


#: `[rank3]: `, `[default3]:` (torchrun --tee), `[1,3]<stderr>:` (mpirun), `rank3: `
RANK_RE = re.compile(r"^\s*(?:\[rank(\d+)\]:|\[default(\d+)\]:|\[\d+,(\d+)\]<std(?:out|err)>:|rank(\d+):)\s?")
FENCE_RE = re.compile(r"^\s*(```|~~~)")
#: what may follow an opening fence on its own line: a language tag (```python, ```bash)
FENCE_INFO_RE = re.compile(r"^[\w+.#-]*$")
#: a line wrapped in inline code: `ValueError: ...`
INLINE_CODE_RE = re.compile(r"^(\s*)`([^`].*?)`?\s*$")
QUOTE_RE = re.compile(r"^\s*>\s?")
_SURROGATE_RE = re.compile("[\ud800-\udfff]")
HTML_RE = re.compile(r"&(?:lt|gt|amp|quot|#39|#x27|#34);")
#: what chat apps, issue renderers and word processors put in place of the characters a traceback
#: prints: typographic quotes, non-breaking and zero-width spaces (matched as the ASCII originals)
_TYPOGRAPHIC = str.maketrans(
    {
        "\u2018": "'",
        "\u2019": "'",
        "\u201a": "'",
        "\u2032": "'",
        "\u201c": '"',
        "\u201d": '"',
        "\u201e": '"',
        "\u00a0": " ",
        "\u202f": " ",
        "\u2007": " ",
        "\u200b": None,
        "\ufeff": None,
    }
)
_TYPOGRAPHIC_RE = re.compile("[" + "".join(map(chr, _TYPOGRAPHIC)) + "]")


@dataclass(frozen=True, slots=True)
class Line:
    """One cleaned input line with the rank it came from (None when unprefixed)."""

    text: str
    rank: int | None
    no: int  # 1-based line number in the input


def valid_unicode(text: str) -> str:
    """*text* with lone surrogates (``"\\ud83d"`` from a JSON export or a paste) replaced by U+FFFD:
    they cannot be encoded, so tokenizers, JSON output and terminals would fail on them."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return _SURROGATE_RE.sub("\ufffd", text)


def ascii_punctuation(text: str) -> str:
    """*text* with typographic quotes and special spaces as the ASCII characters a traceback prints."""
    return text.translate(_TYPOGRAPHIC) if _TYPOGRAPHIC_RE.search(text) else text


def clean_text(text: str) -> list[Line]:
    """Split *text* into cleaned lines."""
    text = ascii_punctuation(valid_unicode(text))
    if HTML_RE.search(text):
        text = html.unescape(text)
    text = text.replace("\r\n", "\n")
    raw = text.split("\n")
    quoted = sum(1 for r in raw if r.startswith(">"))
    strip_quotes = quoted > 0 and quoted >= 0.5 * sum(1 for r in raw if r.strip())
    out: list[Line] = []
    for i, line in enumerate(raw, 1):
        if _ANY_CONTROL.search(line):
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
