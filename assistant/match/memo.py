"""An encoder wrapper that embeds each distinct text once, in length-sorted batches."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from assistant.vocab import EMBEDDING_DIM


class MemoEncoder:
    """Wraps an encoder: texts already embedded in `memo` are not embedded again."""

    def __init__(self, inner, memo: dict[str, np.ndarray] | None = None) -> None:
        self.inner = inner
        self.memo: dict[str, np.ndarray] = {} if memo is None else memo
        self.name = getattr(inner, "name", "encoder")

    def encode(self, texts: list[str]) -> np.ndarray:
        missing = list(dict.fromkeys(t for t in texts if t not in self.memo))
        if missing:
            for t, v in zip(missing, self.inner.encode(missing)):
                self.memo[t] = v
        return np.stack([self.memo[t] for t in texts]) if texts else np.zeros((0, EMBEDDING_DIM), dtype=np.float32)

    def prefill(self, texts: list[str], on_batch: Callable[[int], None] | None = None, batch: int = 8) -> None:
        """Embed the unique *texts* in length-sorted batches of 8 (little padding; measured faster per text
        than single calls and than batches of 32 on the 2-core machine)."""
        todo = sorted({t for t in texts if t not in self.memo}, key=len)
        for i in range(0, len(todo), batch):
            chunk = todo[i : i + batch]
            for t, v in zip(chunk, self.inner.encode(chunk)):
                self.memo[t] = v
            if on_batch:
                on_batch(len(chunk))
