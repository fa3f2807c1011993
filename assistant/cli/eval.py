"""`trl-help eval`: leave-one-out Recall@1/@3, MRR, abstention; baselines; `--fit` to refit."""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--kb", type=Path, help="KB root (default: the bundled one)")
    p.add_argument("--oos", type=Path, help="out-of-scope reports (JSON Lines with 'text')")
    p.add_argument("--folds", type=int, default=5)
    p.add_argument("--fit", action="store_true", help="refit weights on all data and save weights.json")
    p.add_argument("--format", choices=("text", "json"), default="text")


def run(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.table import Table

    from assistant.match import evaluate as ev
    from assistant.match.engine import Matcher
    from assistant.match.fuse import FEATURES, Model

    con = Console(stderr=False)
    if args.kb is not None and not (args.kb / "cases").is_dir():
        from assistant.cli.errors import UsageError

        raise UsageError(f"{args.kb}: not a KB (no cases/ directory)")
    m = Matcher.load(args.kb, progress=True)
    oos = ev.load_oos(args.oos or ev.oos_path(m.kb.root))
    if args.fit and not oos:
        from assistant.cli.errors import UsageError

        raise UsageError(
            f"--fit needs out-of-scope reports ({args.oos or ev.oos_path(m.kb.root)} is missing "
            "or empty): without them the abstention threshold cannot be chosen"
        )
    queries = ev.collect(m, oos)
    ids = m.case_ids
    cv = ev.cross_validate(queries, ids, folds=args.folds)
    shipped = Model.load()
    ship = ev.score(queries, ids, shipped.prob, shipped.threshold)
    heldout_rows = ev.load_heldout(m.kb.root)
    held = ev.score_heldout(m, heldout_rows) if heldout_rows else None
    hosts = ev.burial_hosts(m.kb.root)
    held_buried = ev.score_heldout(m, heldout_rows, hosts) if (heldout_rows and hosts) else None
    dev_rows = ev.load_heldout(m.kb.root, ev.DEV_FILE)
    dev_queries = ev.unseen_queries(m, dev_rows, "dev")  # features once: scored here, thresholds in --fit
    dev = ev.score_unseen(m, dev_queries) if dev_queries else None
    recent_rows = ev.load_heldout(m.kb.root, ev.RECENT_FILE)
    recent_queries = ev.unseen_queries(m, recent_rows, "recent")  # features once: the split and its as-drawn rows
    recent = ev.score_unseen(m, recent_queries) if recent_queries else None
    drawn_rows = ev.load_heldout(m.kb.root, ev.RECENT_FILE, as_drawn=True)
    drawn = set(drawn_rows)
    drawn_queries = [q for q, row in zip(recent_queries, recent_rows, strict=True) if row in drawn]
    recent_drawn = ev.score_unseen(m, drawn_queries) if 0 < len(drawn_rows) < len(recent_rows) else None
    healthy = ev.healthy_false_alarms(m)
    bm = ev.score(queries, ids, lambda X: X[:, FEATURES.index("bm25")])
    de = ev.score(queries, ids, lambda X: X[:, FEATURES.index("dense")])
    n_in = sum(q.truth is not None for q in queries)
    result = {
        "queries_in_kb": n_in,
        "queries_out_of_scope": len(queries) - n_in,
        "cross_validated": _d(cv),
        "shipped_weights_in_sample": _d(ship),
        "baseline_bm25": _d(bm),
        "baseline_dense": _d(de),
        "heldout": None if held is None else {**_d(held), "reports": len(heldout_rows)},
        "heldout_buried": None if held_buried is None else {**_d(held_buried), "reports": len(heldout_rows)},
        "dev": None if dev is None else {**_d(dev), "reports": len(dev_rows)},
        "recent": None if recent is None else {**_d(recent), "reports": len(recent_rows)},
        "recent_never_relabelled": None if recent_drawn is None else {**_d(recent_drawn), "reports": len(drawn_rows)},
        "gap_heldout_minus_cv": None if held is None else _gap(held, cv),
        "healthy_logs": healthy,
        "reliability_cross_validated": [
            {"confidence": b, "queries": n, "precision": None if x is None else round(x, 4)}
            for b, n, x in ev.reliability(cv.bands)
        ],
    }
    if args.fit:
        model = ev.fit_shipped(queries, ids, cv, dev_queries)
        model.save(
            meta={
                "cv": _d(cv),
                "cases": len(ids),
                "fixtures": n_in,
                "oos": len(oos),
                "threshold_also_on_dev": len(dev_rows),
            }
        )
        result["fitted"] = {"weights": model.weights, "threshold": model.threshold}
    if args.format == "json":
        print(json.dumps(result, indent=1))
        return 0
    t = Table(title=f"{n_in} KB reports, each held out with its whole source thread, + {len(oos)} out-of-scope reports")
    t.add_column("", overflow="fold", ratio=1)
    for col in ("R@1", "R@3", "MRR", "OOS abst.", "in-KB right"):
        t.add_column(col, justify="right", no_wrap=True, min_width=5)
    rows = [
        ("hybrid, cross-validated", cv),
        ("hybrid, shipped (in-sample)", ship),
        ("BM25 only", bm),
        ("dense only", de),
    ]
    if held is not None:
        rows.insert(0, (f"held-out real reports ({len(heldout_rows)}), shipped model", held))
    if held_buried is not None:
        rows.insert(1, ("  the same, each buried in a real training log", held_buried))
    if dev is not None:
        rows.insert(2 if held_buried is not None else 1, (f"dev real reports ({len(dev_rows)}), looked at", dev))
    if recent is not None:
        at = sum(x is not None for x in (held, held_buried, dev))
        rows.insert(at, (f"recent real reports ({len(recent_rows)}), 2025-26, never fitted on", recent))
        if recent_drawn is not None:
            rows.insert(at + 1, (f"  the same, rows no later case was written for ({len(drawn_rows)})", recent_drawn))
    for name, s in rows:
        t.add_row(
            name,
            f"{s.recall1:.3f}",
            f"{s.recall3:.3f}",
            f"{s.mrr:.3f}",
            "-" if s.oos_abstained is None else f"{s.oos_abstained:.2f}",
            "-" if s.in_kb_matched is None else f"{s.in_kb_matched:.2f}",
        )
    con.print(t)
    if held is not None:
        gap = _gap(held, cv)
        con.print(
            "gap, held-out split minus cross-validation: "
            + ", ".join(f"{k} {v:+.3f}" for k, v in gap.items() if v is not None)
        )
    for name, h in healthy.items():
        alarms = h["false_alarms"]
        con.print(
            f"healthy real logs ({name}): {h['logs']}, false alarms {len(alarms)}"
            + "".join(f"\n  {a['log']} -> {a['case']} {a['score']:.2f}" for a in alarms)
        )
    rt = Table(title="reliability (cross-validated): how often the answer is right, per confidence")
    for col in ("confidence", "queries", "answer right"):
        rt.add_column(col, justify="right")
    for band, n, prec in ev.reliability(cv.bands):
        rt.add_row(
            band + (" (answered no-known-case)" if band == "low" else ""),
            str(n),
            "-" if prec is None else f"{prec:.2f}",
        )
    con.print(rt)
    if cv.misses:
        mt = Table(title="misses (cross-validated hybrid)")
        for col in ("fixture", "ranked first", "true case at"):
            mt.add_column(col, overflow="fold")
        for row in cv.misses:
            mt.add_row(*row)
        con.print(mt)
    return 0


def _gap(held, cv) -> dict:
    """How much worse (negative) the split nobody fitted on reads than the cross-validated figure."""
    out = {}
    for key, a, b in (
        ("recall@1", held.recall1, cv.recall1),
        ("recall@3", held.recall3, cv.recall3),
        ("oos_abstained", held.oos_abstained, cv.oos_abstained),
        ("in_kb_matched", held.in_kb_matched, cv.in_kb_matched),
    ):
        out[key] = None if a is None or b is None else round(a - b, 4)
    return out


def _d(s) -> dict:
    return {
        "recall@1": round(s.recall1, 4),
        "recall@3": round(s.recall3, 4),
        "mrr": round(s.mrr, 4),
        "oos_abstained": None if s.oos_abstained is None else round(s.oos_abstained, 4),
        "in_kb_matched": None if s.in_kb_matched is None else round(s.in_kb_matched, 4),
        "misses": len(s.misses),
    }
