"""Benchmark: what a bigger KB costs the old cases. The 114 cases of the first research pass
(`first_pass_case_ids.txt`, their current text and fixtures) alone, against the whole KB, with
the same shipped weights, on every unseen report (held-out, dev, recent) whose truth is one of
those 114 or none, and on the old cases' fixtures (each held out with its source thread).

    python tests/benchmarks/bench_kb_growth.py      (builds a second index once, ~1 min; ~4 min in all)
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))


def old_ids() -> set[str]:
    lines = (Path(__file__).with_name("first_pass_case_ids.txt")).read_text(encoding="utf-8").splitlines()
    return {ln.strip() for ln in lines if ln.strip() and not ln.startswith("#")}


def small_kb(dest: Path, keep: set[str]) -> Path:
    """A copy of the bundled KB with only the cases in *keep* (and their fixtures)."""
    src = ROOT / "kb"
    shutil.copytree(src, dest, ignore=shutil.ignore_patterns("cases", "fixtures"))
    (dest / "cases").mkdir()
    (dest / "fixtures").mkdir()
    for cid in sorted(keep):
        shutil.copy(src / "cases" / f"{cid}.yaml", dest / "cases")
        if (src / "fixtures" / cid).is_dir():
            shutil.copytree(src / "fixtures" / cid, dest / "fixtures" / cid)
    return dest


def figures(root: Path, old: set[str]) -> dict:
    from assistant.match import evaluate as ev
    from assistant.match.engine import Matcher

    m = Matcher.load(root, progress=False)
    out: dict = {"cases": len(m.case_ids)}
    for split, name in (("heldout", ev.HELDOUT_FILE), ("dev", ev.DEV_FILE), ("recent", ev.RECENT_FILE)):
        rows = [(t, c) for t, c in ev.load_heldout(ROOT / "kb", name) if c is None or c in old]
        s = ev.score_unseen(m, ev.unseen_queries(m, rows, split))
        out[split] = {
            "reports": len(rows),
            "in_kb": sum(c is not None for _, c in rows),
            "recall@1": round(s.recall1, 3),
            "recall@3": round(s.recall3, 3),
            "in_kb_right": s.in_kb_matched and round(s.in_kb_matched, 3),
            "oos_abstained": s.oos_abstained and round(s.oos_abstained, 3),
        }
    qs = [q for q in ev.collect(m, ev.load_oos(ev.oos_path(ROOT / "kb"))) if q.truth is None or q.truth in old]
    s = ev.score(qs, m.case_ids, m.model.prob, m.model.threshold)
    out["old_fixtures"] = {
        "reports": len(qs),
        "recall@1": round(s.recall1, 3),
        "in_kb_right": round(s.in_kb_matched or 0, 3),
        "oos_abstained": round(s.oos_abstained or 0, 3),
    }
    return out


def main() -> None:
    old = old_ids()
    with tempfile.TemporaryDirectory() as tmp:
        small = small_kb(Path(tmp) / "kb", old)
        result = {"whole KB": figures(ROOT / "kb", old), "first 114 only": figures(small, old)}
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
