"""Lexical retrieval: BM25 (bm25s) over identifier-aware tokens of normalised signatures."""

from __future__ import annotations

import re

import numpy as np

_TOKEN_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|\d+")
_STOP = frozenset(
    "the a an of to in is and or for on with by be it this that was are at as from not no "
    "file line self return if else none true false".split()
)


def tokenize(text: str) -> list[str]:
    """Lower-cased identifiers, kept whole (`use_reentrant`) and split into parts."""
    out: list[str] = []
    for tok in _TOKEN_RE.findall(text[:20000]):
        low = tok.lower()
        if low in _STOP or len(low) < 2:
            continue
        out.append(low)
        if "_" in low:
            out.extend(p for p in low.split("_") if len(p) > 1 and p not in _STOP)
        elif any(c.isupper() for c in tok[1:]):
            out.extend(p.lower() for p in re.findall(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])", tok) if len(p) > 1)
    return out


class BM25Index:
    """BM25 over documents; `scores(query)` returns one score per document."""

    def __init__(self, docs: list[str]) -> None:
        import bm25s

        self.n = len(docs)
        self.retriever = bm25s.BM25()
        corpus = [tokenize(d) or ["_empty_"] for d in docs]
        self.retriever.index(corpus, show_progress=False)

    def scores(self, query: str) -> np.ndarray:
        toks = tokenize(query)
        if not toks:
            return np.zeros(self.n, dtype=np.float32)
        return np.asarray(self.retriever.get_scores(toks), dtype=np.float32)
