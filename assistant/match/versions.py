"""Version verdict: the user's versions against a case's `affected` ranges (PEP 440)."""

from __future__ import annotations

from functools import lru_cache

from packaging.version import InvalidVersion, Version

from assistant.kb.model import Case

#: ends the detail of an 'unknown' verdict whose versions were absent from the input
NOT_IN_INPUT = "not found in the input"

#: verdicts by which the user's versions rule a case out (past its fix, or older than its range)
RULED_OUT = frozenset({"fixed-in-your-version", "predates-affected"})


@lru_cache(maxsize=4096)
def _v(s: str) -> Version | None:
    """*s* parsed (its local '+build' part dropped); None when it is no PEP 440 version. Cached:
    every query compares the same few versions with every case's bounds."""
    try:
        return Version(s.split("+")[0])
    except InvalidVersion:
        return None


def _cannot_rule_out(hv: Version, bound: Version) -> bool:
    """A dev / pre-release build of the bound's own release (4.52.0.dev0 for 4.52.0): it may or may
    not hold the change, so it neither predates an `introduced` bound nor is past a `fixed` one."""
    return hv.is_prerelease and hv.release == bound.release


def verdict(case: Case, env: dict[str, str]) -> tuple[str, str]:
    """('affected' | 'fixed-in-your-version' | 'predates-affected' | 'unknown', detail)."""
    if not case.affected:
        return "unknown", "no version ranges recorded for this case (versions do not decide it)"
    affected: list[str] = []
    fixed: list[str] = []
    before: list[str] = []
    unknown: list[str] = []
    for aff in case.affected:
        have = env.get(aff.package)
        hv = _v(have) if have else None
        if hv is None:
            unknown.append(aff.package)
            continue
        inside = False
        fixed_at = None
        earliest: Version | None = None
        for r in aff.ranges:
            lo = _v(r.introduced) if r.introduced != "0" else None
            if lo is not None and hv < lo and not _cannot_rule_out(hv, lo):
                earliest = lo if earliest is None else min(earliest, lo)
                continue
            if r.fixed and hv >= Version(r.fixed):
                fixed_at = r.fixed
                continue
            if r.last_affected and hv > Version(r.last_affected):
                fixed_at = f"after {r.last_affected}"
                continue
            inside = True
        if inside:
            affected.append(f"{aff.package} {have}")
        elif fixed_at:
            by = f" ({aff.fixed_by})" if aff.fixed_by else ""
            fixed.append(f"{aff.package} {have} is past the fix ({fixed_at}){by}")
        elif earliest is not None:
            before.append(f"{aff.package} {have} predates the affected range (from {earliest})")
        else:
            fixed.append(f"{aff.package} {have} is outside the affected ranges")
    if affected:
        return "affected", "your versions are in the affected range: " + ", ".join(affected)
    if fixed:
        return "fixed-in-your-version", "; ".join(fixed + before)
    if before:
        return "predates-affected", "; ".join(before)
    return "unknown", "versions of " + ", ".join(unknown) + f" {NOT_IN_INPUT}"
