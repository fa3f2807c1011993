"""Released versions of the libraries the KB's ranges name (vendored in `kb/releases.json`,
refreshed by `scripts/refresh_releases.py`), and the check that every range bound is one."""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

from packaging.version import InvalidVersion, Version

from assistant.kb.model import Case

RELEASES_FILE = "releases.json"


@lru_cache(maxsize=8)
def load_releases(kb_root: Path) -> dict[str, frozenset[Version]]:
    """Package name -> set of released versions; empty when the KB ships no list."""
    path = Path(kb_root) / RELEASES_FILE
    if not path.is_file():
        return {}
    data = json.loads(path.read_text(encoding="utf-8"))
    out: dict[str, frozenset[Version]] = {}
    for name, versions in data.get("packages", {}).items():
        parsed = set()
        for v in versions:
            try:
                parsed.add(Version(v))
            except InvalidVersion:
                continue
        out[name.lower()] = frozenset(parsed)
    return out


def unreleased_bounds(case: Case, releases: dict[str, frozenset[Version]]) -> list[tuple[str, str]]:
    """(field path, message) for every range bound of *case* that names no released version.

    ``introduced: "0"`` (since the beginning) is always fine; a package the list does not know
    is not judged (the list names what `scripts/refresh_releases.py` fetched)."""
    problems = []
    for i, aff in enumerate(case.affected):
        known = releases.get(aff.package.lower())
        if not known:
            continue
        for j, rng in enumerate(aff.ranges):
            for name in ("introduced", "fixed", "last_affected"):
                value = getattr(rng, name)
                if value is None or (name == "introduced" and value == "0"):
                    continue
                if Version(value) not in known:
                    problems.append(
                        (
                            f"affected.{i}.ranges.{j}.{name}",
                            f"{aff.package} {value} is not a released version "
                            f"(kb/{RELEASES_FILE}; refresh with scripts/refresh_releases.py)",
                        )
                    )
    return problems


def unsourced_bounds(case: Case) -> list[tuple[str, str]]:
    """(field path, message) for every range bound that `verification.checked` never names: each
    bound must say what it was checked against (a wheel, a git tag, a measured run)."""
    checked = " ".join(case.verification.checked)
    problems = []
    for i, aff in enumerate(case.affected):
        for j, rng in enumerate(aff.ranges):
            for name in ("introduced", "fixed", "last_affected"):
                value = getattr(rng, name)
                if value is None or (name == "introduced" and value == "0"):
                    continue
                if value not in checked:
                    problems.append(
                        (
                            f"affected.{i}.ranges.{j}.{name}",
                            f"{aff.package} {value}: verification.checked does not name the "
                            "source of this bound (the wheel, git tag or run it was checked on)",
                        )
                    )
    return problems
