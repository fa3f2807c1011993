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


def _has_repeat(items) -> bool:
    """Whether the parsed sub-pattern contains any repeat that can match more than once."""
    for op, av in items:
        if op in _REPEATS:
            lo, hi, sub = av
            if hi > 1 or _has_repeat(sub):
                return True
        elif op is _c.SUBPATTERN:
            if _has_repeat(av[-1]):
                return True
        elif op is _c.BRANCH:
            if any(_has_repeat(b) for b in av[1]):
                return True
        elif op in (_c.ASSERT, _c.ASSERT_NOT):
            if _has_repeat(av[1]):
                return True
    return False


def nested_quantifier(pattern: str) -> bool:
    """True when *pattern* has a repeat (more than once) inside an unbounded repeat."""
    try:
        parsed = _p.parse(pattern)
    except Exception:  # noqa: BLE001 - the compile check reports bad regexes
        return False

    def walk(items) -> bool:
        for op, av in items:
            if op in _REPEATS:
                lo, hi, sub = av
                if hi == _MAXREPEAT and _has_repeat(sub):
                    return True
                if walk(sub):
                    return True
            elif op is _c.SUBPATTERN:
                if walk(av[-1]):
                    return True
            elif op is _c.BRANCH:
                if any(walk(b) for b in av[1]):
                    return True
            elif op in (_c.ASSERT, _c.ASSERT_NOT):
                if walk(av[1]):
                    return True
        return False

    return walk(parsed)
