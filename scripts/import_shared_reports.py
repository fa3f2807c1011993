"""Copy the real user reports from ../shared/research/cases.jsonl into kb/fixtures/<id>/.

Each example report becomes ``report-N.txt`` (verbatim; the URL is kept in the case YAML's
``source``). Run once when shared/ gains reports; the case YAML lists the files it uses.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main(shared: Path) -> int:
    src = shared / "research" / "cases.jsonl"
    n = 0
    for line in src.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        out = ROOT / "kb" / "fixtures" / row["case_id"]
        out.mkdir(parents=True, exist_ok=True)
        sources = []
        for i, rep in enumerate(row.get("example_reports", []), 1):
            (out / f"report-{i}.txt").write_text(rep["text"], encoding="utf-8")
            sources.append({"file": f"report-{i}.txt", "source": rep.get("url")})
            n += 1
        (out / "SOURCES.json").write_text(json.dumps(sources, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {n} report fixtures")
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT.parent / "shared"))
