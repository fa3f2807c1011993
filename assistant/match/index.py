"""The derived index (documents + dense vectors), cached per KB hash + model.

Written atomically (build in a temp dir, then rename) under a file lock, so two processes
building at once neither corrupt it nor both pay the build twice.
"""

from __future__ import annotations

import json
import os
import pickle
import shutil
import sys
import tempfile
from dataclasses import asdict
from pathlib import Path

import numpy as np

from assistant.cache import cache_root
from assistant.kb.load import KB
from assistant.match.query import Doc, case_documents
from assistant.vocab import EMBEDDING_DIM

FORMAT = 3


def onnx_path(model_id: str) -> Path:
    return cache_root() / f"onnx-{model_id}" / "model.onnx"


def ensure_onnx(model_id: str) -> Path:
    """The exported query encoder, exporting it once (needs torch) when missing."""
    from filelock import FileLock

    path = onnx_path(model_id)
    if path.is_file():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(path.parent / ".lock")):
        if not path.is_file():
            from assistant.match.encoder import export_onnx
            from assistant.quiet import quiet_libraries

            with quiet_libraries():
                export_onnx(path)
    return path


#: how long to wait for another process building the same index before giving up (seconds)
LOCK_WAIT_S = float(os.environ.get("TRL_HELP_LOCK_WAIT", "600"))


def _build_lock(path: Path):
    """The build lock, acquired with a notice after a few seconds and an error after
    `LOCK_WAIT_S` (a builder that was stopped, not killed, keeps its lock)."""
    from filelock import FileLock, Timeout

    lock = FileLock(str(path))
    try:
        lock.acquire(timeout=3)
    except Timeout:
        print(
            f"trl-help: another trl-help process is building the index; waiting up to {LOCK_WAIT_S:.0f} s "
            f"(lock {path})",
            file=sys.stderr,
        )
        try:
            lock.acquire(timeout=LOCK_WAIT_S)
        except Timeout:
            raise TimeoutError(
                f"the index build lock {path} has been held for over {LOCK_WAIT_S:.0f} s; "
                "if no other trl-help is running, delete it"
            ) from None
    return _Held(lock)


class _Held:
    def __init__(self, lock) -> None:
        self.lock = lock

    def __enter__(self):
        return self.lock

    def __exit__(self, *exc) -> None:
        self.lock.release()


class Index:
    """Documents and their vectors (rows aligned)."""

    def __init__(self, docs: list[Doc], vectors: np.ndarray, bm25=None) -> None:
        self.docs = docs
        self.vectors = vectors
        self.bm25 = bm25  # BM25Index over the same docs (pickled with the index)

    @classmethod
    def load_or_build(cls, kb: KB, progress: bool = True) -> Index:
        from assistant.match.encoder import model_id
        from assistant.match.query import QUERY_VERSION

        # fixture documents are built with query_text: a change there must not reuse old vectors
        key = f"index-v{FORMAT}q{QUERY_VERSION}-{kb.digest}-{model_id()}"
        root = cache_root()
        final = root / key
        idx = cls._load(final)
        if idx is not None:
            return idx
        root.mkdir(parents=True, exist_ok=True)
        with _build_lock(root / f".{key}.lock"):
            idx = cls._load(final)  # another process may have finished meanwhile
            if idx is not None:
                return idx
            from assistant.quiet import quiet_libraries

            print(
                f"trl-help: building the search index for {len(kb)} cases, once per KB version "
                "(about 30 s on 2 CPU cores)",
                file=sys.stderr,
                flush=True,
            )
            with quiet_libraries():
                idx = cls.build(kb, progress=False)
            tmp = Path(tempfile.mkdtemp(prefix=".build-", dir=root))
            try:
                np.save(tmp / "vectors.npy", idx.vectors)
                from assistant.match.lexical import BM25Index

                idx.bm25 = BM25Index([d.text for d in idx.docs])
                (tmp / "bm25.pickle").write_bytes(pickle.dumps(idx.bm25, protocol=pickle.HIGHEST_PROTOCOL))
                (tmp / "docs.json").write_text(json.dumps([asdict(d) for d in idx.docs]))
                (tmp / "OK").write_text(json.dumps({n: _sha256(tmp / n) for n in _FILES}))
                if final.exists():  # a damaged index: os.replace cannot replace a non-empty dir
                    shutil.rmtree(final, ignore_errors=True)
                os.replace(tmp, final)
                _prune(root, keep=final, prefix=f"index-v{FORMAT}")
            except OSError:
                shutil.rmtree(tmp, ignore_errors=True)
                if not final.is_dir():
                    raise
        return idx

    @staticmethod
    def _load(path: Path) -> Index | None:
        if not (path / "OK").is_file():
            return None
        try:
            sums = json.loads((path / "OK").read_text())
            if not isinstance(sums, dict) or any(sums.get(n) != _sha256(path / n) for n in _FILES):
                print("trl-help: the cached search index is damaged; rebuilding it", file=sys.stderr)
                return None
        except (OSError, ValueError):
            return None
        try:
            docs = [Doc(**d) for d in json.loads((path / "docs.json").read_text())]
            vectors = np.load(path / "vectors.npy")
        except (OSError, ValueError, TypeError):
            return None
        if len(docs) != len(vectors):
            return None
        try:
            bm25 = pickle.loads((path / "bm25.pickle").read_bytes())
        except (OSError, pickle.UnpicklingError, EOFError, AttributeError):
            bm25 = None
        from assistant.match.lexical import BM25Index

        if not isinstance(bm25, BM25Index):
            bm25 = None
        return Index(docs, vectors, bm25)

    @classmethod
    def build(cls, kb: KB, progress: bool = True) -> Index:
        """Embed every case document with sentence-transformers (slow path, once per KB)."""
        from rich.progress import Progress

        from assistant.match.encoder import STEncoder

        docs = case_documents(kb)
        with Progress(transient=True, console=_stderr_console(), disable=not progress) as bar:
            task = bar.add_task("building the trl-help index (once per KB change)", total=len(docs) + 1)
            enc = STEncoder()
            bar.advance(task)
            chunks = []
            for i in range(0, len(docs), 64):
                chunks.append(enc.encode([d.text for d in docs[i : i + 64]]))
                bar.advance(task, len(docs[i : i + 64]))
        vectors = np.concatenate(chunks) if chunks else np.zeros((0, EMBEDDING_DIM), np.float32)
        return cls(docs, vectors.astype(np.float32))


_FILES = ("vectors.npy", "bm25.pickle", "docs.json")


def _sha256(path: Path) -> str:
    """Checksum of a cached file, checked on every load (bit-rot must not change scores)."""
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()


def _prune(root: Path, keep: Path, prefix: str, spare: int = 2) -> None:
    """Drop stale indexes (older KB versions): keep *keep* and the *spare* most recent others."""
    others = [p for p in root.glob("index-v*") if p.is_dir() and p != keep]
    other_format = [p for p in others if not p.name.startswith(prefix)]
    same = sorted((p for p in others if p.name.startswith(prefix)), key=lambda p: p.stat().st_mtime, reverse=True)
    for p in same[spare:] + other_format:
        shutil.rmtree(p, ignore_errors=True)


def _stderr_console():
    from rich.console import Console

    return Console(file=sys.stderr)
