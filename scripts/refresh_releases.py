"""Refresh `kb/releases.json`: every released version of the packages the KB's ranges name.

Run by hand when a library releases (needs the package registry; nothing at run time does):

    python scripts/refresh_releases.py

`kb validate` then rejects a range bound that is not one of these versions.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import urllib.request
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "kb" / "releases.json"


def packages_in_kb() -> list[str]:
    names = set()
    for path in (ROOT / "kb" / "cases").glob("*.yaml"):
        names.update(re.findall(r"^\s*- package: *([A-Za-z0-9_.\-]+)", path.read_text(encoding="utf-8"), re.M))
    return sorted(names)


def index_url() -> str:
    """pip's configured index (PEP 691 simple API), else pip's default one."""
    out = subprocess.run(
        [sys.executable, "-m", "pip", "config", "get", "global.index-url"], capture_output=True, text=True
    ).stdout.strip()
    if out.startswith("http"):
        return out.rstrip("/") + "/"
    from pip._internal.models.index import PyPI

    return PyPI.simple_url.rstrip("/") + "/"


def released(name: str) -> list[str]:
    """Every version the index has files for, yanked ones included (a fix can land in a release
    that was later yanked; `pip index versions` hides those)."""
    req = urllib.request.Request(f"{index_url()}{name}/", headers={"Accept": "application/vnd.pypi.simple.v1+json"})
    with urllib.request.urlopen(req, timeout=60) as resp:
        return list(json.load(resp)["versions"])


def main() -> int:
    old = json.loads(OUT.read_text()) if OUT.is_file() else {"packages": {}}
    packages = dict(old.get("packages", {}))
    for name in packages_in_kb():
        try:
            packages[name] = released(name)
        except (OSError, KeyError, ValueError) as exc:
            print(f"{name}: kept the old list ({exc})", file=sys.stderr)
    OUT.write_text(
        json.dumps({"refreshed": date.today().isoformat(), "packages": packages}, indent=1, sort_keys=True) + "\n"
    )
    print(f"wrote {OUT} ({len(packages)} packages)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
