"""Grouping across the batch.

* case clusters: issues whose verdict is a match, grouped by the top case;
* near-duplicate clusters among issues with no known case: cosine similarity of the issues'
  query vectors (the MiniLM embedding `explain` already computes) with *complete linkage* —
  two groups merge only if every pair across them is above the threshold, so one borderline
  pair cannot chain unrelated issues together (duplicate bots are disliked for false merges);
* "possible new failure categories": unmatched issues with a real traceback, grouped by the
  normalised error head and by near-duplicate cluster.

The threshold is measured on the shared research reports (pairs sharing a case_id vs pairs that
do not; `pair_precision` below, figures in docs/triage.md).
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass

import numpy as np

from assistant.parse.model import short_exception_name

#: cosine similarity above which two unmatched issues count as near-duplicates (see docs/triage.md)
DUP_THRESHOLD = 0.90


def near_duplicate_groups(vectors: np.ndarray, threshold: float = DUP_THRESHOLD) -> list[tuple[list[int], float]]:
    """Complete-linkage groups (size >= 2) of row indices; each with its minimum pairwise similarity."""
    n = len(vectors)
    if n < 2:
        return []
    v = np.asarray(vectors, dtype=np.float32)
    sims = v @ v.T
    iu, ju = np.nonzero(np.triu(sims >= threshold, k=1))
    if not len(iu):
        return []
    order = np.argsort(-sims[iu, ju], kind="stable")
    group = list(range(n))
    members: dict[int, list[int]] = {i: [i] for i in range(n)}
    for k in order:
        a, b = group[iu[k]], group[ju[k]]
        if a == b:
            continue
        ma, mb = members[a], members[b]
        if sims[np.ix_(ma, mb)].min() < threshold:
            continue  # complete linkage: some pair across the two groups is not similar enough
        if len(ma) < len(mb):
            a, b, ma, mb = b, a, mb, ma
        ma.extend(mb)
        for x in mb:
            group[x] = a
        del members[b]
    out = []
    for ms in members.values():
        if len(ms) >= 2:
            ms = sorted(ms)
            out.append((ms, float(sims[np.ix_(ms, ms)].min())))
    return sorted(out, key=lambda g: (-len(g[0]), g[0][0]))


def pair_precision(vectors: np.ndarray, labels: list[str], threshold: float) -> dict[str, float]:
    """Pairs above *threshold*: precision (same label) and recall of same-label pairs."""
    v = np.asarray(vectors, dtype=np.float32)
    sims = v @ v.T
    lab = np.array(labels)
    same = lab[:, None] == lab[None, :]
    iu = np.triu_indices(len(v), k=1)
    s, y = sims[iu], same[iu]
    pred = s >= threshold
    tp = int((pred & y).sum())
    fp = int((pred & ~y).sum())
    return {
        "threshold": threshold,
        "pairs_above": tp + fp,
        "true": tp,
        "false": fp,
        "precision": tp / (tp + fp) if tp + fp else 1.0,
        "recall": tp / int(y.sum()) if y.any() else 0.0,
    }


_HEAD_NUM = re.compile(r"<[a-z]+>|\d+")


def error_key(exception: str | None, message: str) -> str:
    """Normalised error head used to group unmatched tracebacks ('RuntimeError: expected <n> ...')."""
    if not exception:
        return ""
    first = (message or "").strip().splitlines()[0] if message and message.strip() else ""
    first = _HEAD_NUM.sub("#", first)[:90].strip()
    name = short_exception_name(exception)
    return f"{name}: {first}" if first else name


@dataclass
class _UF:
    parent: list[int]

    def find(self, x: int) -> int:
        while self.parent[x] != x:
            self.parent[x] = self.parent[self.parent[x]]
            x = self.parent[x]
        return x

    def union(self, a: int, b: int) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)


def group_new_categories(keys: list[str], dup_groups: list[list[int]]) -> list[list[int]]:
    """Indices grouped by identical error key or shared near-duplicate cluster (all groups, singletons too)."""
    uf = _UF(list(range(len(keys))))
    by_key: dict[str, int] = {}
    for i, k in enumerate(keys):
        if k in by_key:
            uf.union(by_key[k], i)
        else:
            by_key[k] = i
    for g in dup_groups:
        for x in g[1:]:
            uf.union(g[0], x)
    groups: dict[int, list[int]] = defaultdict(list)
    for i in range(len(keys)):
        groups[uf.find(i)].append(i)
    return sorted(groups.values(), key=lambda g: (-len(g), g[0]))
