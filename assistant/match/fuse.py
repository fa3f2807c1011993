"""Fusion of dense, lexical and structural signals into one score, and calibration.

A softmax over per-(query, case) features plus a "none" option; weights and the abstention threshold are fitted
by `trl-help eval --fit` (cross-validated) and stored in `weights.json` next to this file.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

FEATURES = (
    "dense",
    "dense_hi",
    "bm25",
    "bm25_abs",
    "msg",
    "text",
    "log",
    "metric",
    "exc",
    "frames",
    "settings",
    "keywords",
    "version_ruled_out",
)
WEIGHTS_FILE = Path(__file__).with_name("weights.json")

#: the weight of "the report's versions are past this case's fix" is at most this (a prior, not fitted
#: freely): few reports carry versions, so the fit alone would leave it near 0, yet a case the
#: user's versions rule out should need clearly more evidence than one they don't
VERSION_PENALTY = -1.5

#: hand-set starting point, used until weights.json is fitted
DEFAULT = {
    "dense": 6.0,
    "dense_hi": 0.0,
    "bm25": 2.0,
    "bm25_abs": 0.0,
    "msg": 4.0,
    "text": 2.0,
    "log": 1.5,
    "metric": 2.5,
    "exc": 0.5,
    "frames": 0.5,
    "settings": 0.5,
    "keywords": 1.0,
    "version_ruled_out": VERSION_PENALTY,
    "none": 5.0,
}


@dataclass
class Model:
    weights: dict[str, float] = field(default_factory=lambda: dict(DEFAULT))
    threshold: float = 0.5  # P(correct) of the top match below which we abstain
    high: float = 0.85
    medium: float = 0.6

    def vector(self) -> np.ndarray:
        return np.array([self.weights.get(f, 0.0) for f in FEATURES], dtype=np.float64)

    def prob(self, feats: np.ndarray) -> np.ndarray:
        """P(case) for every candidate row of one query: a softmax over the cases plus a
        "none of them" option whose logit is `bias` (so probabilities are calibrated against
        out-of-scope reports and the rows sum to 1 - P(none))."""
        z = feats @ self.vector()
        b = self.weights.get("none", 0.0)
        m = max(float(z.max()) if len(z) else b, b)
        e = np.exp(z - m)
        return e / (e.sum() + np.exp(b - m))

    def confidence(self, p: float) -> str:
        """ "low" below the abstention threshold (the verdict is then no-known-case), "medium" from
        it, "high" where the measured out-of-fold precision reaches 0.95 (`eval --fit`)."""
        return "high" if p >= self.high else "medium" if p >= max(self.medium, self.threshold) else "low"

    @classmethod
    def load(cls, path: Path = WEIGHTS_FILE) -> Model:
        if not path.is_file():
            return cls()
        d = json.loads(path.read_text())
        return cls(weights=d["weights"], threshold=d["threshold"], high=d["high"], medium=d["medium"])

    def save(self, path: Path = WEIGHTS_FILE, meta: dict | None = None) -> None:
        d = {
            "weights": self.weights,
            "threshold": self.threshold,
            "high": self.high,
            "medium": self.medium,
            "meta": meta or {},
        }
        path.write_text(json.dumps(d, indent=1, sort_keys=True) + "\n")


def fit_listwise(
    queries: list[tuple[np.ndarray, int | None]], l2: float = 0.005, steps: int = 4000, lr: float = 2.0
) -> dict[str, float]:
    """Softmax over each query's candidates plus a 'none' option (the target for out-of-scope
    reports), fitted by full-batch gradient descent; in-KB and out-of-scope halves weighted equally.

    *queries*: (feature matrix [cases × features], index of the right case or None).
    """
    X = np.stack([q[0] for q in queries])  # Q × C × d
    Q, C, d = X.shape
    Y = np.zeros((Q, C + 1))
    for i, (_, t) in enumerate(queries):
        Y[i, C if t is None else t] = 1.0
    inkb = np.array([t is not None for _, t in queries])
    wt = np.where(inkb, 0.5 / max(1, inkb.sum()), 0.5 / max(1, (~inkb).sum()))
    w = np.zeros(d)
    b = 0.0
    for _ in range(steps):
        z = np.concatenate([X @ w, np.full((Q, 1), b)], axis=1)
        z -= z.max(axis=1, keepdims=True)
        p = np.exp(z)
        p /= p.sum(axis=1, keepdims=True)
        g = (p - Y) * wt[:, None]
        gw = np.einsum("qc,qcd->d", g[:, :C], X)
        gb = g[:, C].sum()
        w -= lr * (gw + l2 * w)
        b -= lr * gb
    out = {f: float(v) for f, v in zip(FEATURES, w)}
    out["none"] = float(b)
    return out
