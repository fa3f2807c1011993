"""Reading a batch of issues: a `gh issue list --json ...` array, JSON Lines, or a directory.

Policy for malformed exports (documented in docs/triage.md):

* a bad *issue* (missing number, body of the wrong type, a JSON Lines line that does not parse,
  a duplicated number) is reported as one line naming it and skipped; the other issues are kept;
* a truncated / corrupt JSON array keeps every issue decoded before the damage and reports where
  it stopped;
* only an input from which no issue at all can be read (missing, empty, not JSON, a JSON value
  that is not a list of issues) raises `ExportError` -> the CLI prints one line and exits 2.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from assistant.parse.clean import strip_controls, valid_unicode

#: fields `gh issue list --json` is asked for (docs/triage.md)
GH_FIELDS = "number,title,body,labels,url,createdAt"
_TEXT_SUFFIXES = (".md", ".txt", ".markdown")


class ExportError(ValueError):
    """The whole input is unusable (the message is one line)."""


def _skip_ws(text: str, pos: int) -> int:
    """The first position at or after *pos* that is not white space."""
    while pos < len(text) and text[pos].isspace():
        pos += 1
    return pos


@dataclass(frozen=True)
class Issue:
    number: int
    title: str
    body: str
    labels: tuple[str, ...] = ()
    url: str | None = None
    created_at: str | None = None

    @property
    def text(self) -> str:
        """What is parsed and matched: title and body both count."""
        return f"{self.title}\n\n{self.body}" if self.title else self.body

    @property
    def content_hash(self) -> str:
        """Hash of what the result depends on (title + body), for the incremental cache."""
        return hashlib.sha256(f"{self.title}\x00{self.body}".encode("utf-8", "replace")).hexdigest()[:20]


@dataclass
class Batch:
    issues: list[Issue] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    source: str = ""
    #: the rest of a large export, decoded issue by issue as it is consumed (once); its problems
    #: (a truncated array, a bad item) are appended to `problems` as they are met
    stream: Iterator[Issue] | None = None

    def all(self) -> Iterator[Issue]:
        """Every issue: the loaded ones, then the streamed rest."""
        yield from self.issues
        if self.stream is not None:
            yield from self.stream


def _one_line(s: str, n: int = 160) -> str:
    s = " ".join(str(s).split())
    return s if len(s) <= n else s[: n - 1] + "…"


def issue_from_obj(obj: object, where: str) -> Issue:
    """One gh issue object -> Issue; ValueError (one line, naming the issue) when unusable."""
    if not isinstance(obj, dict):
        raise ValueError(f"{where}: expected an issue object, got {type(obj).__name__}")
    num = obj.get("number")
    if isinstance(num, str) and num.strip().lstrip("#").isdigit():
        num = int(num.strip().lstrip("#"))
    if isinstance(num, bool) or not isinstance(num, int):
        title = obj.get("title")
        named = f" ({_one_line(title, 60)!r})" if isinstance(title, str) else ""
        raise ValueError(f"{where}{named}: missing or non-integer 'number'")
    label = f"issue #{num}"
    title = obj.get("title", "")
    body = obj.get("body", "")
    if title is None:
        title = ""
    if body is None:
        body = ""
    if not isinstance(title, str):
        raise ValueError(f"{label}: 'title' is {type(title).__name__}, expected a string")
    if not isinstance(body, str):
        raise ValueError(f"{label}: 'body' is {type(body).__name__}, expected a string")
    if not title.strip() and not body.strip():
        raise ValueError(f"{label}: empty title and body")
    labels_raw = obj.get("labels") or []
    labels: list[str] = []
    if isinstance(labels_raw, list):
        for lb in labels_raw:
            if isinstance(lb, dict) and isinstance(lb.get("name"), str):
                labels.append(lb["name"])
            elif isinstance(lb, str):
                labels.append(lb)
    url = obj.get("url") if isinstance(obj.get("url"), str) else None
    created = obj.get("createdAt") if isinstance(obj.get("createdAt"), str) else None
    return Issue(num, strip_controls(valid_unicode(title.strip())), valid_unicode(body), tuple(labels), url, created)


def _line_col(text: str, pos: int) -> str:
    line = text.count("\n", 0, pos) + 1
    col = pos - (text.rfind("\n", 0, pos) + 1) + 1
    return f"line {line} column {col}"


def _decode_array(text: str, batch: Batch, src: str) -> None:
    """Decode a JSON array item by item, so damage late in the file keeps the earlier issues."""
    dec = json.JSONDecoder()
    pos = text.index("[") + 1
    n = 0
    last = None
    while True:
        pos = _skip_ws(text, pos)
        if pos >= len(text):
            after = f" after issue #{last}" if last is not None else ""
            batch.problems.append(f"{src}: JSON array is truncated{after}; kept {len(batch.issues)} issue(s)")
            return
        if text[pos] == "]":
            return
        try:
            obj, end = dec.raw_decode(text, pos)
        except json.JSONDecodeError as exc:
            after = f" after issue #{last}" if last is not None else ""
            if n == 0 and not batch.issues:
                raise ExportError(f"{src}: not valid JSON ({exc.msg} at {_line_col(text, exc.pos)})") from None
            batch.problems.append(
                f"{src}: invalid JSON at {_line_col(text, exc.pos)}{after} ({exc.msg}); "
                f"kept {len(batch.issues)} issue(s) before it"
            )
            return
        n += 1
        try:
            issue = issue_from_obj(obj, f"item {n}")
            batch.issues.append(issue)
            last = issue.number
        except ValueError as exc:
            batch.problems.append(f"{src}: {exc}; skipped")
        pos = _skip_ws(text, end)
        if pos < len(text) and text[pos] == ",":
            pos += 1
        elif pos < len(text) and text[pos] == "]":
            return
        elif pos < len(text):
            batch.problems.append(
                f"{src}: invalid JSON at {_line_col(text, pos)} after issue #{last} (expected ',' or ']'); "
                f"kept {len(batch.issues)} issue(s) before it"
            )
            return


def _decode_lines(text: str, batch: Batch, src: str) -> None:
    good = 0
    bad_json = 0
    for i, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            bad_json += 1
            m = re.search(r'"number"\s*:\s*(\d+)', line)
            who = f" (issue #{m.group(1)})" if m else ""
            batch.problems.append(f"{src}: line {i}{who}: not valid JSON ({exc.msg}); skipped")
            continue
        try:
            batch.issues.append(issue_from_obj(obj, f"line {i}"))
            good += 1
        except ValueError as exc:
            batch.problems.append(f"{src}: {exc}; skipped")
    if good == 0 and bad_json and not batch.issues:
        raise ExportError(f"{src}: neither a JSON array nor JSON Lines of issues")


_NUM_RE = re.compile(r"(\d+)")


def _read_dir(root: Path, batch: Batch) -> None:
    files = sorted(p for p in root.iterdir() if p.is_file() and p.suffix.lower() in _TEXT_SUFFIXES)
    if not files:
        raise ExportError(f"{root}: directory holds no .md or .txt files")
    taken: set[int] = set()
    pending: list[tuple[Path, str, str]] = []
    for p in files:
        try:
            raw = p.read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            batch.problems.append(f"{p}: cannot read ({exc.strerror}); skipped")
            continue
        lines = raw.lstrip("\ufeff").splitlines()
        while lines and not lines[0].strip():
            lines.pop(0)
        if not lines:
            batch.problems.append(f"{p}: empty file; skipped")
            continue
        first = lines[0].strip()
        if first.startswith("#"):
            title, body = first.lstrip("#").strip(), "\n".join(lines[1:]).strip("\n")
        else:
            title, body = "", "\n".join(lines)
        m = _NUM_RE.search(p.stem)
        if m and int(m.group(1)) not in taken:
            num = int(m.group(1))
            taken.add(num)
            batch.issues.append(Issue(num, strip_controls(valid_unicode(title)), valid_unicode(body), url=None))
        else:
            pending.append((p, title, body))
    nxt = max(taken, default=0) + 1
    for p, title, body in pending:  # files without a (unique) number get the next free ones
        batch.issues.append(Issue(nxt, strip_controls(valid_unicode(title or p.stem)), valid_unicode(body)))
        batch.problems.append(f"{p}: no issue number in the file name; numbered #{nxt}")
        nxt += 1


def _dedupe(batch: Batch) -> None:
    seen: dict[int, int] = {}
    out: list[Issue] = []
    for issue in batch.issues:
        if issue.number in seen:
            batch.problems.append(f"issue #{issue.number} appears more than once; keeping the last copy")
            out[seen[issue.number]] = issue
        else:
            seen[issue.number] = len(out)
            out.append(issue)
    batch.issues = out


def parse_export(text: str, src: str = "<input>") -> Batch:
    """Decode a gh export (JSON array, JSON Lines, or a single issue object)."""
    batch = Batch(source=src)
    stripped = text.lstrip("\ufeff \t\r\n")
    if not stripped:
        raise ExportError(f"{src}: empty input")
    if stripped[0] == "[":
        _decode_array(stripped, batch, src)
    elif stripped[0] == "{":
        try:
            obj = json.loads(stripped)
        except json.JSONDecodeError:
            _decode_lines(stripped, batch, src)
        else:
            if isinstance(obj, dict) and isinstance(obj.get("issues"), list):
                obj = obj["issues"]  # a previous `triage --format json` or a wrapped export
                for i, item in enumerate(obj, 1):
                    try:
                        batch.issues.append(issue_from_obj(item, f"item {i}"))
                    except ValueError as exc:
                        batch.problems.append(f"{src}: {exc}; skipped")
            else:
                try:
                    batch.issues.append(issue_from_obj(obj, "the object"))
                except ValueError as exc:
                    raise ExportError(f"{src}: {exc}") from None
    else:
        raise ExportError(
            f"{src}: not a JSON array or JSON Lines of issues "
            f"(starts with {_one_line(stripped[:20], 24)!r}); "
            f"export with `gh issue list --json {GH_FIELDS}`"
        )
    if not batch.issues:
        why = batch.problems[0] if batch.problems else f"{src}: no issues in the export"
        raise ExportError(why if len(batch.problems) <= 1 else f"{why} (and {len(batch.problems) - 1} more problem(s))")
    _dedupe(batch)
    return batch


#: JSON array exports larger than this are decoded issue by issue while triage runs (bounded memory)
STREAM_OVER = 32 << 20
#: an item larger than this is not waited for (a broken file would otherwise be buffered whole)
MAX_ITEM_CHARS = 64 << 20


@dataclass
class _Window:
    """The part of a streamed export not decoded yet."""

    buf: str = ""
    pos: int = 0
    eof: bool = False


def _stream_array(p: Path, batch: Batch, first: list[Issue]) -> Iterator[Issue]:
    """Issues of the JSON array file *p*, decoded one at a time from a sliding buffer. The first
    issue is decoded before this returns (into *first*), so an unusable file fails up front."""
    src = str(p)
    dec = json.JSONDecoder()
    fh = p.open("r", encoding="utf-8")
    state = _Window()

    def fill() -> None:
        chunk = fh.read(1 << 20)
        state.eof = not chunk
        state.buf = state.buf[state.pos :] + chunk
        state.pos = 0

    def skip_ws() -> bool:
        """Advance past white space; False at the end of the file."""
        while True:
            state.pos = _skip_ws(state.buf, state.pos)
            if state.pos < len(state.buf):
                return True
            if state.eof:
                return False
            fill()

    def items() -> Iterator[Issue | str]:
        """Issues, or a problem string that ends the stream."""
        try:
            fill()
            if not skip_ws() or state.buf[state.pos] != "[":
                raise ExportError(f"{src}: not a JSON array of issues")
            state.pos += 1
            n, last = 0, None
            while True:
                if not skip_ws():
                    after = f" after issue #{last}" if last is not None else ""
                    yield f"{src}: JSON array is truncated{after}"
                    return
                if state.buf[state.pos] == "]":
                    return
                try:
                    obj, end = dec.raw_decode(state.buf, state.pos)
                except json.JSONDecodeError as exc:
                    if not state.eof and len(state.buf) - state.pos < MAX_ITEM_CHARS:
                        fill()  # the item may continue in the next block
                        continue
                    after = f" after issue #{last}" if last is not None else ""
                    if n == 0:
                        raise ExportError(f"{src}: not valid JSON ({exc.msg})") from None
                    yield f"{src}: invalid JSON{after} ({exc.msg}); kept the issues before it"
                    return
                n += 1
                state.pos = end
                try:
                    issue = issue_from_obj(obj, f"item {n}")
                    last = issue.number
                    yield issue
                except ValueError as exc:
                    yield f"{src}: {exc}; skipped"
                if not skip_ws():
                    continue  # reported as truncated above
                c = state.buf[state.pos]
                if c == ",":
                    state.pos += 1
                elif c != "]":
                    yield f"{src}: invalid JSON after issue #{last} (expected ',' or ']')"
                    return
        except UnicodeDecodeError:
            yield f"{src}: not UTF-8 text past some point; kept the issues before it"
        finally:
            fh.close()

    gen = items()

    def issues() -> Iterator[Issue]:
        for it in gen:
            if isinstance(it, str):
                if it.endswith("; skipped"):
                    batch.problems.append(it)
                    continue
                batch.problems.append(it)
                return
            yield it

    out = issues()
    try:
        first.append(next(out))
    except StopIteration:
        raise ExportError(batch.problems[0] if batch.problems else f"{src}: no issues in the export") from None
    return out


def load_issues(path: str | Path) -> Batch:
    """Read FILE (JSON array / JSON Lines), a directory of .md/.txt files, or '-' (stdin)."""
    import sys

    if str(path) == "-":
        if sys.stdin is None or sys.stdin.isatty():
            raise ExportError("reading from stdin: pipe a `gh issue list --json ...` export in or pass a FILE")
        return parse_export(sys.stdin.read(), "stdin")
    p = Path(path)
    if p.is_dir():
        batch = Batch(source=str(p))
        _read_dir(p, batch)
        _dedupe(batch)
        return batch
    if not p.exists():
        raise ExportError(f"{p}: no such file or directory")
    try:
        big = p.is_file() and p.stat().st_size > STREAM_OVER
        with p.open("rb") as fh:
            head = fh.read(4096)
    except OSError as exc:
        raise ExportError(f"{p}: cannot read ({exc.strerror})") from None
    if big and head[:2] != b"\x1f\x8b" and head.lstrip(b"\xef\xbb\xbf \t\r\n")[:1] == b"[":
        batch = Batch(source=str(p))
        first: list[Issue] = []
        batch.stream = _stream_array(p, batch, first)
        batch.issues = first
        return batch
    try:
        raw = p.read_bytes()
    except OSError as exc:
        raise ExportError(f"{p}: cannot read ({exc.strerror})") from None
    if raw[:2] == b"\x1f\x8b":
        import gzip

        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError) as exc:
            raise ExportError(f"{p}: corrupt gzip ({exc})") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ExportError(f"{p}: not UTF-8 text (binary file?)") from None
    return parse_export(text, str(p))
