"""Streaming front of the parser: a 1 GB log is scanned in chunks and only windows around
errors, plus metric / environment / settings lines, are kept and parsed."""

from __future__ import annotations

import io
from collections import deque
from pathlib import Path
from typing import BinaryIO

from assistant.parse.decode import InputError, iter_utf8_chunks
from assistant.parse.model import Report
from assistant.parse.parser import parse_text

#: inputs up to this size are parsed whole
WHOLE_LIMIT = 8 << 20
BEFORE = 4096
AFTER = 48 * 1024
FIRST_WINDOWS = 8
LAST_WINDOWS = 64
#: a window that keeps merging (every line an error) is closed at this size, so error-dense logs
#: keep at most (FIRST_WINDOWS + LAST_WINDOWS) x MAX_WINDOW bytes
MAX_WINDOW = 64 * 1024
#: literals that open an error window (bytes.find is ~50x faster than a regex alternation)
ERR_LITERALS = (
    b"Traceback (most recent",
    b"Error",
    b"Exception",
    b"exitcode",
    b"Killed",
    b"SIGKILL",
    b"Root Cause",
    b"imeout",
    b"During handling",
    b"direct cause",
)
#: metric lines, kept over the whole log (first few hundred, last few thousand)
METRIC_LITERALS = (b"'loss'", b'"loss"', b"Training Loss", b"'reward", b"grad_norm")
#: environment / settings lines: config dumps and `trl env` blocks sit at the top of a log
HEAD_LITERALS = (
    b"version",
    b"==",
    b"gradient_checkpointing",
    b"use_reentrant",
    b"use_vllm",
    b"load_in_",
    b"num_generations",
    b"per_device_train_batch_size",
    b"zero_stage",
    b'"stage"',
    b"bf16",
    b"fp16",
    b"Warning:",
    b"world_size",
    b"nproc_per_node",
    b"master_port",
    b"MASTER_PORT",
    b"stuck",
    b"hang",
)
HEAD_BYTES = 16 << 20


def _positions(buf: bytes, literals: tuple[bytes, ...], start: int = 0) -> list[int]:
    out: list[int] = []
    for lit in literals:
        i = buf.find(lit, start)
        while i != -1:
            out.append(i)
            i = buf.find(lit, i + len(lit))
    out.sort()
    return out


def _line_positions(buf: bytes, literals: tuple[bytes, ...]) -> list[int]:
    """One position per line containing any literal (skips the rest of a line once hit)."""
    out: list[int] = []
    for lit in literals:
        i = buf.find(lit)
        while i != -1:
            out.append(i)
            nl = buf.find(b"\n", i)
            if nl == -1:
                break
            i = buf.find(lit, nl)
    return sorted(set(out))


class _Keeper:
    """Keeps (offset, bytes) spans: the first few and the last many."""

    def __init__(self, first: int, last: int) -> None:
        self.first: list[tuple[int, bytes]] = []
        self.last: deque[tuple[int, bytes]] = deque(maxlen=last)
        self.nfirst = first

    def add(self, off: int, data: bytes) -> None:
        if len(self.first) < self.nfirst:
            self.first.append((off, data))
        else:
            self.last.append((off, data))

    def items(self) -> list[tuple[int, bytes]]:
        return self.first + list(self.last)


def _line_span(buf: bytes, pos: int) -> tuple[int, int]:
    a = buf.rfind(b"\n", 0, pos) + 1
    b = buf.find(b"\n", pos)
    return a, (len(buf) if b == -1 else b)


def parse_stream(raw: BinaryIO) -> Report:
    """Parse a binary stream of any size. Raises InputError for empty / binary input."""
    chunks = iter_utf8_chunks(raw)
    first = next(chunks)
    pieces: list[bytes] = [first]
    size = len(first)
    for chunk in chunks:
        pieces.append(chunk)
        size += len(chunk)
        if size > WHOLE_LIMIT:
            return _parse_windows(pieces, chunks)
    text = b"".join(pieces).decode("utf-8", errors="replace")
    return parse_text(text)


def _parse_windows(pieces: list[bytes], rest) -> Report:
    windows = _Keeper(FIRST_WINDOWS, LAST_WINDOWS)
    lines = _Keeper(500, 3000)
    base = 0  # absolute offset of buf[0]
    carry = b""
    spill_until = -1  # absolute offset up to which an open window continues

    def feed(chunk: bytes, final: bool) -> None:
        nonlocal base, carry, spill_until
        buf = carry + chunk
        if not final:
            cut = buf.rfind(b"\n")
            if cut == -1 and len(buf) < (32 << 20):
                carry = buf
                return
            if cut == -1:  # one endless line (no newline for 32 MiB): cut it anyway
                cut = len(buf) - 1
            body, carry = buf[: cut + 1], buf[cut + 1 :]
        else:
            body, carry = buf, b""
        # continue a window opened in the previous chunk
        start_scan = 0
        if spill_until > base:
            end = min(len(body), spill_until - base)
            windows.add(base, body[:end])
            start_scan = end
        win_start = win_end = -1
        for p in _positions(body, ERR_LITERALS, start_scan):
            if p < win_end:
                continue
            a = max(start_scan, p - BEFORE)
            if a > 0:  # start at the line's start, unless that is far back (one endless line)
                ls = body.rfind(b"\n", 0, a) + 1
                a = ls if a - ls <= BEFORE else a
            a = max(a, start_scan)
            b = p + AFTER
            if win_end >= a and win_end - win_start < MAX_WINDOW:  # merge with the open window
                win_end = b
                continue
            if win_start >= 0:
                windows.add(base + win_start, body[win_start : min(win_end, len(body))])
            win_start, win_end = a, b
        if win_start >= 0:
            windows.add(base + win_start, body[win_start : min(win_end, len(body))])
            spill_until = base + win_end if win_end > len(body) else -1
        lits = METRIC_LITERALS + HEAD_LITERALS if base < HEAD_BYTES else METRIC_LITERALS
        last_a = -1
        for p in _line_positions(body, lits):
            a, b = _line_span(body, p)
            if a == last_a:
                continue
            last_a = a
            lines.add(base + a, body[a:b])
        base += len(body)

    for piece in pieces:
        feed(piece, False)
    for chunk in rest:
        feed(chunk, False)
    feed(b"", True)

    spans = sorted(set(windows.items()) | set(lines.items()))
    merged: list[bytes] = []
    covered = -1
    for off, data in spans:
        if off + len(data) <= covered:
            continue
        if off < covered:
            data = data[covered - off :]
            off = covered
        merged.append(data if data.endswith(b"\n") else data + b"\n")
        covered = off + len(data)
    text = b"".join(merged).decode("utf-8", errors="replace")
    report = parse_text(text)
    report.truncated = True
    return report


def parse_bytes(data: bytes) -> Report:
    return parse_stream(io.BytesIO(data))


def _open_input(p: Path):
    """Open *p* for reading. A FIFO (named pipe) is opened as `cat` would (waiting for a writer), but
    for at most `FIFO_WRITER_WAIT_S` seconds: with no writer it is a one-line error, not a hang."""
    import stat
    import threading

    from assistant.limits import FIFO_WRITER_WAIT_S

    try:
        is_fifo = stat.S_ISFIFO(p.stat().st_mode)
    except OSError:
        is_fifo = False
    if not is_fifo:
        return p.open("rb")
    opened: list = []
    failed: list[BaseException] = []

    def do_open() -> None:
        try:
            opened.append(p.open("rb"))  # blocks until a writer opens the other end
        except BaseException as exc:  # noqa: BLE001 - reported below
            failed.append(exc)

    t = threading.Thread(target=do_open, daemon=True)
    t.start()
    t.join(FIFO_WRITER_WAIT_S)
    if failed:
        raise failed[0]
    if not opened:
        raise InputError(f"a named pipe with no writer after {FIFO_WRITER_WAIT_S:.0f} s")
    return opened[0]


def parse_file(path: str | Path) -> Report:
    """Parse a file (plain, gzip'd, UTF-16 …); '-' is not handled here (see the CLI)."""
    p = Path(path)
    if p.is_dir():
        raise InputError(f"{p}: is a directory")
    try:
        with _open_input(p) as fh:
            return parse_stream(fh)
    except FileNotFoundError:
        raise InputError(f"{p}: no such file") from None
    except PermissionError:
        raise InputError(f"{p}: permission denied") from None
    except InputError as exc:
        raise InputError(f"{p}: {exc}") from None
