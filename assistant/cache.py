"""Where derived data lives (index, KB pickle, ONNX export, triage cache): the user cache dir,
or ``$TRL_HELP_CACHE_DIR``. Nothing here is ever committed.

When that directory cannot be used (a file is in the way, no permission, a read-only disk), the
run goes on in a temporary directory removed at exit, with a one-line warning: everything still
works, the index is just rebuilt next time.
"""

from __future__ import annotations

import atexit
import os
import shutil
import sys
import tempfile
from functools import lru_cache
from pathlib import Path


def configured_root() -> Path:
    """The cache directory asked for (``$TRL_HELP_CACHE_DIR`` or the platform's user cache dir)."""
    env = os.environ.get("TRL_HELP_CACHE_DIR")
    if env:
        return Path(env)
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("trl-help"))


@lru_cache(maxsize=4)
def _usable(root: Path) -> Path:
    try:
        root.mkdir(parents=True, exist_ok=True)
        probe = Path(tempfile.mkstemp(prefix=".write-test-", dir=root)[1])
        probe.unlink()
        return root
    except OSError as exc:
        tmp = Path(tempfile.mkdtemp(prefix="trl-help-cache-"))
        atexit.register(shutil.rmtree, tmp, True)
        print(
            f"trl-help: warning: cache directory {root} is unusable ({exc.strerror or exc}); "
            "using a temporary one for this run",
            file=sys.stderr,
        )
        return tmp


def cache_root() -> Path:
    """A writable cache directory: the configured one, or a temporary one for this run."""
    return _usable(configured_root())


def prune_siblings(keep: Path, pattern: str, spare: int) -> None:
    """Remove entries of the cache dir matching *pattern* (files or dirs) other than *keep* and the
    *spare* most recently modified: each trl-help or KB version writes its own ONNX export (173 MB)
    and KB pickle, and without this a cache grew by one of each per upgrade, forever."""
    try:
        others = [p for p in keep.parent.glob(pattern) if p != keep and not p.name.startswith(".")]
        others.sort(key=lambda p: p.stat().st_mtime, reverse=True)
    except OSError:
        return
    for p in others[spare:]:
        try:
            if p.is_dir():
                shutil.rmtree(p, ignore_errors=True)
            else:
                p.unlink()
        except OSError:
            pass
