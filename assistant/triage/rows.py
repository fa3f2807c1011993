"""Triage rows kept packed: one zlib-compressed JSON blob per issue, unpacked when read.

A full row (three candidate matches with evidence, a draft reply) is ~20 KB of Python objects;
packed it is ~2 KB, so 10,000 issues fit in ~20 MB. The blob is the same one the triage cache
stores, so a cached issue is never unpacked unless something reads it. What clustering needs
on every issue (verdict, top case, error key …) is kept unpacked in a small `Head`.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, NamedTuple, overload

if TYPE_CHECKING:
    from assistant.triage.run import IssueResult

#: fields a packed blob leaves out: set per run (`cached`) or after clustering (`duplicates`)
PER_RUN = {"cached", "duplicates"}


def pack(res: IssueResult) -> bytes:
    """*res* as compressed JSON (without the per-run fields)."""
    return zlib.compress(res.model_dump_json(exclude=PER_RUN).encode(), 6)


def unpack(blob: bytes) -> IssueResult:
    """The row *blob* holds; raises ValueError (zlib.error or a validation error) if damaged."""
    from assistant.triage.run import IssueResult

    return IssueResult.model_validate_json(zlib.decompress(blob))


class Head(NamedTuple):
    """What clustering and summaries read on every row."""

    number: int
    title: str
    verdict: str
    case_id: str | None
    case_title: str
    error: str | None
    error_key: str
    has_traceback: bool
    packages: tuple[str, ...]

    @classmethod
    def of(cls, res: IssueResult) -> Head:
        top = res.matches[0] if res.matches else None
        return cls(
            res.number,
            res.title,
            res.verdict,
            top.case_id if top else None,
            top.title if top else "",
            res.error,
            res.error_key,
            res.has_traceback,
            tuple(res.packages),
        )


class IssueRows(Sequence["IssueResult"]):
    """The rows of a triage run, in input order; indexing or iterating unpacks one at a time."""

    def __init__(self) -> None:
        self._blobs: list[bytes] = []
        self._cached: list[bool] = []
        self.heads: list[Head] = []
        self._dups: dict[int, list[int]] = {}

    @classmethod
    def of(cls, results: Sequence[IssueResult]) -> IssueRows:
        rows = cls()
        for r in results:
            rows.append(pack(r), Head.of(r), cached=r.cached)
            if r.duplicates:
                rows.set_duplicates(len(rows) - 1, r.duplicates)
        return rows

    def append(self, blob: bytes, head: Head, cached: bool = False) -> None:
        self._blobs.append(blob)
        self.heads.append(head)
        self._cached.append(cached)

    def set_duplicates(self, i: int, numbers: list[int]) -> None:
        self._dups[i] = numbers

    def __len__(self) -> int:
        return len(self._blobs)

    def _row(self, i: int) -> IssueResult:
        res = unpack(self._blobs[i])
        res.cached = self._cached[i]
        res.duplicates = list(self._dups.get(i, []))
        return res

    @overload
    def __getitem__(self, i: int) -> IssueResult: ...
    @overload
    def __getitem__(self, i: slice) -> list[IssueResult]: ...
    def __getitem__(self, i: int | slice) -> IssueResult | list[IssueResult]:
        if isinstance(i, slice):
            return [self._row(k) for k in range(*i.indices(len(self)))]
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError(i)
        return self._row(i)

    def __iter__(self) -> Iterator[IssueResult]:
        for i in range(len(self)):
            yield self._row(i)
