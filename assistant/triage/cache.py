"""Incremental cache: per-issue results keyed by issue number + content hash.

One file per *engine state* (KB digest, fusion weights, trl-help version, --top), in the user
cache dir (platformdirs) or ``$TRL_HELP_CACHE_DIR``, under ``triage-v<FORMAT>/``. Re-running on a fresh
export only processes issues that are new or whose title/body changed; editing the KB or the
weights starts a new file (old results are not reused against a different engine).
Writes are atomic (temp file + rename) under a file lock.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import tempfile
from pathlib import Path

import numpy as np

#: 2: each result is the packed row (`rows.pack`, base64), not a JSON object (10,000 cached
#: issues were ~300 MB of dicts in memory)
FORMAT = 2


def cache_dir() -> Path:
    from assistant.cache import cache_root

    return cache_root() / f"triage-v{FORMAT}"


def engine_key(engine_digest: str, top: int) -> str:
    """What a cached result depends on besides the issue: the engine (KB, fusion weights, query
    format), the code version and `--top`."""
    from assistant import __version__

    return hashlib.sha256(f"{engine_digest}|{__version__}|top={top}".encode()).hexdigest()[:16]


def _enc_vec(v: np.ndarray) -> str:
    return base64.b64encode(np.asarray(v, dtype=np.float32).tobytes()).decode("ascii")


def _dec_vec(s: str) -> np.ndarray:
    return np.frombuffer(base64.b64decode(s), dtype=np.float32).copy()


class TriageCache:
    """``get(number, hash) -> (packed row, vector) | None``; ``put``; ``save``."""

    def __init__(self, key: str, root: Path | None = None, enabled: bool = True) -> None:
        self.enabled = enabled
        self.root = root or cache_dir()
        self.path = self.root / f"{key}.json"
        self.entries: dict[str, dict] = {}
        self.hits = 0
        self.misses = 0
        self._dirty = False
        self._seen: tuple[int, int] | None = None  # (mtime_ns, size) of the file as we last read or wrote it
        if enabled:
            self._load()

    def _stat(self) -> tuple[int, int] | None:
        try:
            st = self.path.stat()
        except OSError:
            return None
        return st.st_mtime_ns, st.st_size

    def _load(self) -> None:
        self._seen = self._stat()
        try:
            data = json.loads(self.path.read_text())
        except (OSError, ValueError):
            return  # missing or damaged: start empty (it is only a cache)
        if isinstance(data, dict) and data.get("format") == FORMAT and isinstance(data.get("issues"), dict):
            self.entries = data["issues"]

    def get(self, number: int, content_hash: str) -> tuple[bytes, np.ndarray] | None:
        e = self.entries.get(str(number)) if self.enabled else None
        if e is None or e.get("hash") != content_hash:
            self.misses += 1
            return None
        try:
            vec = _dec_vec(e["vector"])
            blob = base64.b64decode(e["result"])
        except (KeyError, ValueError, TypeError):
            self.misses += 1
            return None
        self.hits += 1
        return blob, vec

    def put(self, number: int, content_hash: str, blob: bytes, vector: np.ndarray) -> None:
        if not self.enabled:
            return
        result = base64.b64encode(blob).decode("ascii")
        self.entries[str(number)] = {"hash": content_hash, "result": result, "vector": _enc_vec(vector)}
        self._dirty = True

    def save(self) -> None:
        if not (self.enabled and self._dirty):
            return
        from filelock import FileLock

        self.root.mkdir(parents=True, exist_ok=True)
        with FileLock(str(self.path) + ".lock"):
            # merge with what another run may have written meanwhile (ours win); a file unchanged
            # since we last read or wrote it holds nothing new (re-reading it at every periodic save
            # of a 10,000-issue run parsed 54 MB each time)
            other: object = {}
            if self._stat() != self._seen:
                try:
                    other = json.loads(self.path.read_text()).get("issues", {})
                except (OSError, ValueError, AttributeError):
                    other = {}
            if isinstance(other, dict):  # kept, so that a later save (which may skip the re-read) keeps them
                for k, v in other.items():
                    self.entries.setdefault(k, v)
            merged = self.entries
            fd, tmp = tempfile.mkstemp(prefix=".triage-", dir=self.root)
            try:
                with os.fdopen(fd, "w") as f:
                    json.dump({"format": FORMAT, "issues": merged}, f, separators=(",", ":"))
                os.replace(tmp, self.path)
                self._seen = self._stat()
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
        self._dirty = False
