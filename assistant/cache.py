"""Where derived data lives (index, KB pickle, ONNX export, triage cache): the user cache dir,
or ``$TRL_HELP_CACHE_DIR``. Nothing here is ever committed."""

from __future__ import annotations

import os
from pathlib import Path


def cache_root() -> Path:
    env = os.environ.get("TRL_HELP_CACHE_DIR")
    if env:
        return Path(env)
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("trl-help"))
