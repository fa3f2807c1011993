"""The matching service: Report × KB → ranked Matches and a verdict.

Small interface (`Matcher.load()`, `Matcher.diagnose(report)`), so front ends (CLI, TUI, triage)
and tests can swap in another engine.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import numpy as np

from assistant.kb.load import KB, KBProblemsError, load_kb_cached
from assistant.limits import cap_lines
from assistant.match.case_content import case_content
from assistant.match.diagnosis import Diagnosis, Match, VersionVerdict
from assistant.match.encoder import Encoder
from assistant.match.fuse import FEATURES, Model
from assistant.match.prefilter import prime
from assistant.match.query import query_text
from assistant.match.structural import error_text, structural
from assistant.match.symptoms import is_short_paste, names_a_failure
from assistant.match.versions import RULED_OUT
from assistant.match.versions import verdict as version_verdict
from assistant.parse.model import Report

#: BM25 score at which the absolute lexical feature `bm25_abs` = raw / (raw + BM25_HALF) reaches 0.5:
#: about the score of a report sharing one distinctive error line with a case's documents, so the
#: feature tells "some overlap" from "the same error" regardless of the best case's score.
BM25_HALF = 15.0
#: cosine of MiniLM embeddings above which two tracebacks are near-paraphrases; `dense_hi` rescales
#: (cosine - DENSE_HI_FLOOR) to 0..1 so the fit can reward only very close dense matches.
DENSE_HI_FLOOR = 0.7


#: candidates shown by every front end (explain, triage, the TUI) unless asked otherwise
DEFAULT_TOP = 3


class Engine(Protocol):
    """What front ends (CLI, TUI, triage) need from a matcher; tests swap in a deterministic one."""

    @property
    def digest(self) -> str:
        """Identity of the answers (KB content, fusion weights, query format): keys caches."""
        ...

    def diagnose(self, report: Report, top: int = DEFAULT_TOP, installed: bool = False) -> Diagnosis: ...

    def diagnose_batch(
        self,
        reports: Sequence[Report],
        top: int = DEFAULT_TOP,
        on_embedded: Callable[[int], None] | None = None,
        on_diagnosed: Callable[[int], None] | None = None,
    ) -> list[tuple[Diagnosis, np.ndarray]]:
        """Diagnoses of many reports (each the same as `diagnose` gives), with each query's vector."""
        ...

    def embed(self, texts: list[str]) -> np.ndarray:
        """Unit vectors of *texts* (for near-duplicate search)."""
        ...


@dataclass
class Candidate:
    case_id: str
    features: np.ndarray
    prob: float
    evidence: list[str]
    versions: tuple[str, str]


class Matcher:
    """Hybrid retrieval: dense (MiniLM via ONNX + faiss), BM25, structural, versions."""

    def __init__(
        self, kb: KB, docs, vectors: np.ndarray, encoder: Encoder, model: Model | None = None, bm25=None
    ) -> None:
        import faiss

        from assistant.match.lexical import BM25Index

        self.kb = kb
        self.docs = docs
        self.model = model or Model.load()
        self.encoder = encoder
        self.case_ids = list(kb.cases)
        pos = {c: i for i, c in enumerate(self.case_ids)}
        self.doc_case = np.array([pos[d.case_id] for d in docs], dtype=np.int64)
        self.index = faiss.IndexFlatIP(vectors.shape[1])
        self.index.add(np.ascontiguousarray(vectors, dtype=np.float32))
        self.bm25 = bm25 if bm25 is not None and bm25.n == len(docs) else BM25Index([d.text for d in docs])
        self.keywords = kb.keywords  # context keywords less those healthy logs print
        prime(getattr(kb, "prefilter", None) or {})  # a KB pickled by an older trl-help has none
        #: every distinct keyword once: a query tests each against its text a single time
        self.all_keywords = tuple(sorted({k for ks in self.keywords.values() for k in ks}))
        #: cases that explain a notice healthy runs print (`Case.is_notice`)
        self.notice_cases = frozenset(cid for cid, c in kb.cases.items() if c.is_notice)

    @classmethod
    def load(cls, kb_root: Path | None = None, progress: bool = True, model: Model | None = None) -> Matcher:
        from assistant.match.encoder import QUERY_TOKENS, OnnxEncoder, model_id
        from assistant.match.index import Index, ensure_onnx

        kb = load_kb_cached(kb_root)
        if kb.problems:
            raise KBProblemsError(f"the KB has problems; run `trl-help kb validate`: {kb.problems[0]}")
        idx = Index.load_or_build(kb, progress=progress)
        enc = OnnxEncoder(ensure_onnx(model_id()), max_tokens=QUERY_TOKENS)
        return cls(kb, idx.docs, idx.vectors, enc, model=model, bm25=idx.bm25)

    # -- scoring ---------------------------------------------------------------------------
    def _per_case_max(self, doc_scores: np.ndarray, mask: np.ndarray | None) -> np.ndarray:
        out = np.full(len(self.case_ids), -1.0, dtype=np.float64)
        s = doc_scores if mask is None else np.where(mask, doc_scores, -1.0)
        np.maximum.at(out, self.doc_case, s)
        return out

    def features(
        self,
        report: Report,
        exclude: tuple[str, int] | set[tuple[str, int]] | None = None,
        env: dict[str, str] | None = None,
        query: tuple[str, np.ndarray] | None = None,
    ) -> list[Candidate]:
        """Feature rows for every case (unsorted). *exclude* masks one fixture (leave-one-out) or a
        set of them (every report of one source thread); *query* is the report's query text and
        vector when already computed (batches)."""
        if query is None:
            q = self.query_text(report)
            qv = self.encoder.encode([q])
        else:
            q, qv = query[0], query[1].reshape(1, -1)
        mask = None
        if exclude is not None:
            held = exclude if isinstance(exclude, (set, frozenset)) else {exclude}
            mask = np.array([(d.case_id, d.fixture) not in held for d in self.docs])
        sims, ids = self.index.search(qv, len(self.docs))
        doc_scores = np.empty(len(self.docs), dtype=np.float32)
        doc_scores[ids[0]] = sims[0]
        dense = np.clip(self._per_case_max(doc_scores, mask), 0.0, 1.0)
        raw = np.clip(self._per_case_max(self.bm25.scores(q), mask), 0, None)
        top = raw.max()
        bm = np.clip(raw / top, 0, 1) if top > 0 else np.zeros_like(raw)
        bm_abs = raw / (raw + BM25_HALF)
        series = report.metric_series()
        packages = set(report.packages_in_frames())
        env = report.environment if env is None else env
        out = []
        searched = report.match_text or report.text
        low = cap_lines(searched).lower()
        err = error_text(report)
        err_low = err.lower()
        present = frozenset(k for k in self.all_keywords if k in low)
        # a case that explains a notice healthy runs print has no evidence in a run's log or next to an
        # error: only in a paste about the notice (its similarity there is to the notice line itself)
        short_paste = is_short_paste(searched, series)
        notice_paste = short_paste and not report.chain and not report.observations and not names_a_failure(searched)
        for i, cid in enumerate(self.case_ids):
            case = self.kb.cases[cid]
            if cid in self.notice_cases and not notice_paste:
                out.append(
                    Candidate(cid, np.zeros(len(FEATURES), dtype=np.float64), 0.0, [], version_verdict(case, env))
                )
                continue
            st = structural(case, report, series, packages, low, err, err_low, self.keywords[cid], present, short_paste)
            vv = version_verdict(case, env)
            row = {
                "dense": dense[i],
                "dense_hi": max(0.0, dense[i] - DENSE_HI_FLOOR) / (1.0 - DENSE_HI_FLOOR),
                "bm25": bm[i],
                "bm25_abs": bm_abs[i],
                **st.values,
                "version_ruled_out": 1.0 if vv[0] in RULED_OUT else 0.0,
            }
            feats = np.array([row.get(f, 0.0) for f in FEATURES], dtype=np.float64)
            out.append(Candidate(cid, feats, 0.0, st.evidence, vv))
        probs = self.model.prob(np.stack([c.features for c in out]))
        for c, p in zip(out, probs):
            c.prob = float(p)
        return out

    def rank(
        self,
        report: Report,
        exclude: tuple[str, int] | set[tuple[str, int]] | None = None,
        env: dict[str, str] | None = None,
        query: tuple[str, np.ndarray] | None = None,
    ) -> list[Candidate]:
        cands = self.features(report, exclude=exclude, env=env, query=query)
        return sorted(cands, key=lambda c: -c.prob)

    def query_text(self, report: Report) -> str:
        """What is embedded and searched for *report* (lines healthy runs print left out)."""
        return query_text(report, background=self.kb.background)

    @property
    def digest(self) -> str:
        from assistant.match.query import QUERY_VERSION

        weights = json.dumps([self.model.weights, self.model.threshold, self.model.high, self.model.medium])
        return hashlib.sha256(f"{self.kb.digest}:{weights}:q{QUERY_VERSION}".encode()).hexdigest()[:16]

    def embed(self, texts: list[str]) -> np.ndarray:
        return self.encoder.encode(texts)

    # -- the answer ------------------------------------------------------------------------
    def diagnose(self, report: Report, top: int = DEFAULT_TOP, installed: bool = False) -> Diagnosis:
        env = dict(report.environment)
        if installed:
            from assistant.match.installed import installed_versions

            env = {**env, **installed_versions()}
        return self._diagnose(report, top, env)

    def diagnose_batch(
        self,
        reports: Sequence[Report],
        top: int = DEFAULT_TOP,
        on_embedded: Callable[[int], None] | None = None,
        on_diagnosed: Callable[[int], None] | None = None,
    ) -> list[tuple[Diagnosis, np.ndarray]]:
        from assistant.match.memo import MemoEncoder

        texts = [self.query_text(r) for r in reports]
        memo = MemoEncoder(self.encoder)
        memo.prefill(texts, on_batch=on_embedded)  # one ONNX call per 8 distinct texts
        out = []
        for r, q in zip(reports, texts):
            out.append((self._diagnose(r, top, dict(r.environment), query=(q, memo.memo[q])), memo.memo[q]))
            if on_diagnosed:
                on_diagnosed(1)
        return out

    def _diagnose(
        self, report: Report, top: int, env: dict[str, str], query: tuple[str, np.ndarray] | None = None
    ) -> Diagnosis:
        ranked = self.rank(report, env=env, query=query)[: max(1, top)]
        matches = [self._match(c, report) for c in ranked]
        matched = bool(ranked) and ranked[0].prob >= self.model.threshold
        return Diagnosis.from_parts(report, matches, matched, env)

    def _match(self, c: Candidate, report: Report) -> Match:
        case = self.kb.cases[c.case_id]
        evidence = list(dict.fromkeys(c.evidence))[:6]
        if not evidence and report.primary is not None:
            evidence = [
                f"{report.primary.exception}: {report.primary.message.splitlines()[0][:200]}"
                if report.primary.message
                else report.primary.exception
            ]
        signals = {f: round(float(v), 3) for f, v in zip(FEATURES, c.features) if v}
        return Match(
            case_id=c.case_id,
            score=round(c.prob, 4),
            confidence=self.model.confidence(c.prob),  # type: ignore[arg-type]
            evidence=evidence,
            versions=VersionVerdict(verdict=c.versions[0], detail=c.versions[1]),  # type: ignore[arg-type]
            signals=signals,
            **case_content(case),
        )
