"""Version verdict: the user's versions against a case's `affected` ranges (PEP 440)."""

from __future__ import annotations

from packaging.version import InvalidVersion, Version

from assistant.kb.model import Case

#: ends the detail of an 'unknown' verdict whose versions were absent from the input
NOT_IN_INPUT = "not found in the input"


def _v(s: str) -> Version | None:
    try:
        return Version(s.split("+")[0])
    except InvalidVersion:
        return None


def verdict(case: Case, env: dict[str, str]) -> tuple[str, str]:
    """('affected' | 'fixed-in-your-version' | 'unknown', detail)."""
    if not case.affected:
        return "unknown", "no version ranges recorded for this case (versions do not decide it)"
    affected: list[str] = []
    fixed: list[str] = []
    unknown: list[str] = []
    for aff in case.affected:
        have = env.get(aff.package)
        hv = _v(have) if have else None
        if hv is None:
            unknown.append(aff.package)
            continue
        inside = False
        fixed_at = None
        for r in aff.ranges:
            lo = _v(r.introduced) if r.introduced != "0" else None
            if lo is not None and hv < lo:
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
        else:
            fixed.append(f"{aff.package} {have} is outside the affected ranges")
    if affected:
        return "affected", "your versions are in the affected range: " + ", ".join(affected)
    if fixed:
        return "fixed-in-your-version", "; ".join(fixed)
    return "unknown", "versions of " + ", ".join(unknown) + f" {NOT_IN_INPUT}"
