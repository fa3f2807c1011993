"""Catastrophic-backtracking shapes in KB patterns: a repeat inside an unbounded repeat
(`(a+)+`, `(\\w*\\s?)*`, `(x{1,9})+`) can take exponential time on a short crafted line, and
patterns run over users' logs. `kb validate` rejects them (name the file and field)."""

from __future__ import annotations

try:  # Python >= 3.11
    from re import _constants as _c  # type: ignore[attr-defined]
    from re import _parser as _p  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - Python 3.10
    import sre_constants as _c  # type: ignore[no-redef]
    import sre_parse as _p  # type: ignore[no-redef]

_REPEATS = {_c.MAX_REPEAT, _c.MIN_REPEAT} | ({_c.POSSESSIVE_REPEAT} if hasattr(_c, "POSSESSIVE_REPEAT") else set())
_MAXREPEAT = _c.MAXREPEAT


def _children(op, av) -> list:
    """The sub-pattern lists under one parsed node (groups, alternatives, lookarounds, repeats)."""
    if op in _REPEATS:
        return [av[2]]
    if op is _c.SUBPATTERN:
        return [av[-1]]
    if op is _c.BRANCH:
        return list(av[1])
    if op in (_c.ASSERT, _c.ASSERT_NOT):
        return [av[1]]
    return []


def _has_repeat(items) -> bool:
    """Whether the parsed sub-pattern contains any repeat that can match more than once."""
    return any((op in _REPEATS and av[1] > 1) or any(_has_repeat(c) for c in _children(op, av)) for op, av in items)


def _nested(items) -> bool:
    """Whether an unbounded repeat somewhere in *items* contains another repeat."""
    for op, av in items:
        if op in _REPEATS and av[1] == _MAXREPEAT and _has_repeat(av[2]):
            return True
        if any(_nested(c) for c in _children(op, av)):
            return True
    return False


def nested_quantifier(pattern: str) -> bool:
    """True when *pattern* has a repeat (more than once) inside an unbounded repeat."""
    try:
        parsed = _p.parse(pattern)
    except Exception:  # noqa: BLE001 - the compile check reports bad regexes
        return False
    return _nested(parsed)
