"""Bytes → text: gzip, UTF-8, UTF-16 (BOM), latin-1 fallback; binary input is refused."""

from __future__ import annotations

import codecs
import gzip
import io
from collections.abc import Iterator
from typing import BinaryIO

CHUNK = 8 << 20


class InputError(ValueError):
    """Input that cannot be treated as a log; the message is one line for the user."""


def _looks_binary(head: bytes) -> bool:
    if not head:
        return False
    if b"\x00" in head:
        return True
    control = sum(1 for b in head if b < 32 and b not in (9, 10, 12, 13, 27))
    return control / len(head) > 0.10


def _detect(head: bytes) -> str:
    if head.startswith(codecs.BOM_UTF8):
        return "utf-8-sig"
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return "utf-16"
    try:
        head.decode("utf-8")
        return "utf-8"
    except UnicodeDecodeError as exc:
        # a multibyte sequence cut at the end of the sample is still UTF-8
        if exc.start >= len(head) - 4:
            return "utf-8"
        return "latin-1"


def open_stream(raw: BinaryIO) -> BinaryIO:
    """Unwrap gzip transparently."""
    head = raw.peek(2)[:2] if hasattr(raw, "peek") else b""
    if head == b"\x1f\x8b":
        return gzip.GzipFile(fileobj=raw)  # type: ignore[return-value]
    return raw


def iter_utf8_chunks(raw: BinaryIO) -> Iterator[bytes]:
    """Yield the input as UTF-8 byte chunks (transcoding UTF-16 / latin-1 when needed).

    Raises InputError for empty or binary input.
    """
    stream = open_stream(io.BufferedReader(raw) if not hasattr(raw, "peek") else raw)  # type: ignore[type-var]
    try:
        first = stream.read(CHUNK)
    except (OSError, EOFError, gzip.BadGzipFile) as exc:
        raise InputError(f"cannot read input: {exc}") from None
    if not first or not first.strip():
        raise InputError("input is empty")
    enc = _detect(first[:65536])
    if enc != "utf-16" and _looks_binary(first[:8192]):
        raise InputError("input looks binary (not a text log)")
    if enc == "utf-8":
        yield first
        while chunk := stream.read(CHUNK):
            yield chunk
        return
    decoder = codecs.getincrementaldecoder(enc)(errors="replace")
    text = decoder.decode(first)
    if "\x00" in text:
        raise InputError("input looks binary (not a text log)")
    yield text.encode("utf-8")
    while True:
        try:
            chunk = stream.read(CHUNK)
        except (OSError, EOFError) as exc:
            raise InputError(f"cannot read input: {exc}") from None
        if not chunk:
            break
        yield decoder.decode(chunk).encode("utf-8")
    tail = decoder.decode(b"", final=True)
    if tail:
        yield tail.encode("utf-8")


def decode_bytes(data: bytes) -> str:
    """Decode a whole (small) input to text."""
    return b"".join(iter_utf8_chunks(io.BytesIO(data))).decode("utf-8", errors="replace")
