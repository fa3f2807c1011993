"""`trl-help kb coverage`: the coverage table of the labelled issue sample."""

from __future__ import annotations

import json
import sys
from pathlib import Path


def run_coverage(kb: Path | None, fmt: str) -> int:
    """Print the coverage table; exit 1 when the sample has problems (listed on stderr)."""
    from assistant.cli.errors import UsageError
    from assistant.kb.coverage import as_json, load_coverage, render_markdown
    from assistant.kb.load import default_kb_dir

    root = kb if kb is not None else default_kb_dir()
    sample = root / "coverage" / "sample.jsonl"
    if not sample.is_file():
        raise UsageError(f"{sample}: no such file (the coverage sample of the KB)")
    cov = load_coverage(root)
    if fmt == "json":
        print(json.dumps(as_json(cov), indent=1, ensure_ascii=False))
    else:
        print(render_markdown(cov))
    for problem in cov.problems:
        print(problem, file=sys.stderr)
    if cov.problems:
        print(f"{len(cov.problems)} problem(s)", file=sys.stderr)
        return 1
    return 0
