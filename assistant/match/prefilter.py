"""Pre-filter for symptom patterns: the literals a match cannot do without.

A case-insensitive regex over a long log is the slow part of matching; an `in` test on the
lower-cased text is not. `required_literals` reads a pattern's syntax tree and returns groups of
lower-cased literals such that every match contains at least one literal of each group, so a text
missing a whole group cannot match and the regex never runs. Sound for the texts we search (logs,
tracebacks, prose): Python's few special Unicode case equivalences (the Kelvin sign, the long s)
are the only way a match could escape, and a test checks every KB pattern on every real text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from assistant.kb.model import Case

try:  # Python >= 3.11
    from re import _constants as _c  # type: ignore[attr-defined]
    from re import _parser as _p  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - Python 3.10
    import sre_constants as _c  # type: ignore[no-redef]
    import sre_parse as _p  # type: ignore[no-redef]

#: literals shorter than this are too common to be worth an `in` test
MIN_LITERAL = 3
#: at most this many groups are tested per pattern (the most selective first)
MAX_GROUPS = 2

Group = frozenset[str]
_REPEATS = tuple(op for op in (_c.MAX_REPEAT, _c.MIN_REPEAT, getattr(_c, "POSSESSIVE_REPEAT", None)) if op is not None)


def _groups(items) -> list[Group]:
    """Required literal groups of a sequence of syntax-tree items (each group: one of must occur)."""
    out: list[Group] = []
    run: list[str] = []

    def flush() -> None:
        if run:
            out.append(frozenset(["".join(run).lower()]))
            run.clear()

    for op, av in items:
        if op is _c.LITERAL:
            run.append(chr(av))
            continue
        flush()
        if op is _c.SUBPATTERN:
            out += _groups(av[-1])
        elif op is getattr(_c, "ATOMIC_GROUP", None):
            out += _groups(av)
        elif op is _c.BRANCH:
            alts = [_best(_groups(b)) for b in av[1]]
            if all(a is not None for a in alts):
                out.append(frozenset().union(*alts))  # type: ignore[arg-type]
        elif op in _REPEATS and av[0] >= 1:
            out += _groups(av[2])
        # classes, wildcards, anchors, look-arounds, back-references: no literal, the run ends
    flush()
    return [g for g in out if all(len(x) >= MIN_LITERAL for x in g)]


def _best(groups: list[Group]) -> Group | None:
    ranked = _ranked(groups)
    return ranked[0] if ranked else None


def _ranked(groups: list[Group]) -> list[Group]:
    """Most selective first: fewest alternatives, then the longest shortest literal."""
    return sorted(set(groups), key=lambda g: (len(g), -min(map(len, g)), sorted(g)))


Groups = tuple[tuple[str, ...], ...]
#: groups computed ahead of time (the KB's table, see `prime`), consulted before parsing
_KNOWN: dict[tuple[str, str], Groups] = {}


def prime(table: dict[tuple[str, str], Groups]) -> None:
    """Make *table* (pattern, kind) -> groups known, so those patterns are never parsed again."""
    _KNOWN.update(table)


def table_for(cases: Iterable[Case]) -> dict[tuple[str, str], Groups]:
    """The groups of every message and log pattern of *cases*, in the form searched strictly and
    in the backtick-free form the loose search uses (assistant.match.symptoms)."""
    from assistant.match.symptoms import without_backticks  # symptoms imports this module

    out: dict[tuple[str, str], Groups] = {}
    for case in cases:
        for p in (*case.symptoms.messages, *case.symptoms.log_patterns):
            kind = p.kind.value
            out[(p.pattern, kind)] = required_literals(p.pattern, kind)
            if kind == "regex" and "`" in p.pattern:
                loose = without_backticks(p.pattern)
                out[(loose, kind)] = required_literals(loose, kind)
    return out


def required_literals(pattern: str, kind: str) -> Groups:
    """Groups of lower-cased literals, each group needed by every match of *pattern* (one of its
    literals at least); () when nothing can be proven (the regex must run)."""
    known = _KNOWN.get((pattern, kind))
    return known if known is not None else _required(pattern, kind)


@lru_cache(maxsize=8192)
def _required(pattern: str, kind: str) -> Groups:
    if kind != "regex":
        return ((pattern.lower(),),)  # a literal pattern is its own requirement
    try:
        tree = _p.parse(pattern, re.IGNORECASE)
    except (re.error, RecursionError, ValueError):
        return ()
    return tuple(tuple(sorted(g)) for g in _ranked(_groups(list(tree)))[:MAX_GROUPS])


def may_match(pattern: str, kind: str, low: str) -> bool:
    """False when the lower-cased text *low* lacks one of *pattern*'s required literal groups."""
    return all(any(x in low for x in group) for group in required_literals(pattern, kind))
