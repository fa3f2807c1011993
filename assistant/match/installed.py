"""Versions installed in this environment (for `--installed`), without importing the packages."""

from __future__ import annotations

from importlib import metadata

from assistant.vocab import DISTRIBUTIONS

DISTS = DISTRIBUTIONS


def installed_versions() -> dict[str, str]:
    out = {}
    for pkg, dist in DISTS.items():
        try:
            out[pkg] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            continue
    return out
