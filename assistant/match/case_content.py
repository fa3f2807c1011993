"""What a `Match` carries from its KB case: the text renderers show (cause, fixes, references)
and the version facts a reply needs, copied once by the engine so no renderer reads the KB."""

from __future__ import annotations

from typing import Any

from packaging.version import InvalidVersion, Version

from assistant.kb.model import Case
from assistant.match.diagnosis import Fix, FixedIn, Reference


def fixed_in(case: Case) -> list[FixedIn]:
    """Per package, the highest `fixed` bound of its ranges (the release to upgrade to)."""
    out = []
    for aff in case.affected:
        fixed = [r.fixed for r in aff.ranges if r.fixed]
        if not fixed:
            continue
        try:
            target = max(fixed, key=Version)
        except InvalidVersion:  # validated by the KB schema; keep the last one rather than fail
            target = fixed[-1]
        out.append(FixedIn(package=aff.package, version=target, fixed_by=aff.fixed_by))
    return out


def case_content(case: Case) -> dict[str, Any]:
    """The `Match` fields taken from *case*."""
    first = case.fixes[0]
    return {
        "title": case.title,
        "summary": case.summary.strip(),
        "cause": case.cause.strip(),
        "fix": first.title + (f"\n{first.code.strip()}" if first.code else ""),
        "fixes": [
            Fix(
                title=fx.title,
                description=fx.description.strip(),
                code=fx.code,
                language=fx.language,
                safety=fx.safety.value,
                tradeoff=fx.tradeoff,
            )
            for fx in case.fixes
        ],
        "references": [Reference(type=r.type.value, url=r.url) for r in case.references],
        "fixed_in": fixed_in(case),
        "version_packages": sorted({a.package for a in case.affected}),
        "probe": case.probe,
        "labels": list(case.labels),
    }
