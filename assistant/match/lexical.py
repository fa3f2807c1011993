"""Lexical retrieval: Okapi BM25 over identifier-aware tokens of normalised signatures.

A small numpy implementation (same formula and defaults as bm25s' "lucene" variant: k1=1.5,
b=0.75, idf = ln(1 + (N - df + 0.5) / (df + 0.5)), tf part f / (f + k1·(1 - b + b·dl/avgdl)));
tests check it agrees with bm25s. It avoids
importing scipy on the query path, which keeps a cold `trl-help explain` fast.
"""

from __future__ import annotations

import math
import re
from collections import Counter

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

    def __init__(self, docs: list[str], k1: float = 1.5, b: float = 0.75) -> None:
        self.n = len(docs)
        tfs = [Counter(tokenize(d)) for d in docs]
        lengths = np.array([sum(tf.values()) for tf in tfs], dtype=np.float64)
        avg = float(lengths.mean()) if self.n else 1.0
        df: Counter[str] = Counter()
        for tf in tfs:
            df.update(tf.keys())
        self.postings: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        norm = k1 * (1 - b + b * lengths / max(avg, 1e-9))
        rows: dict[str, list[tuple[int, float]]] = {}
        for i, tf in enumerate(tfs):
            for term, f in tf.items():
                rows.setdefault(term, []).append((i, f))
        for term, items in rows.items():
            idf = math.log(1 + (self.n - df[term] + 0.5) / (df[term] + 0.5))
            idx = np.array([i for i, _ in items], dtype=np.int64)
            freq = np.array([x for _, x in items], dtype=np.float64)
            self.postings[term] = (idx, idf * freq / (freq + norm[idx]))

    def scores(self, query: str) -> np.ndarray:
        out = np.zeros(self.n, dtype=np.float32)
        for term in set(tokenize(query)):
            hit = self.postings.get(term)
            if hit is not None:
                out[hit[0]] += hit[1]
        return out
