"""`trl-help kb validate|list|show`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def add_arguments(p: argparse.ArgumentParser) -> None:
    sub = p.add_subparsers(dest="kb_command", metavar="ACTION", required=True)
    v = sub.add_parser("validate", help="check every case (schema, ids, regexes, fixtures)")
    v.add_argument("path", nargs="?", type=Path, help="KB root or a single case file")
    v.add_argument(
        "--matcher",
        action="store_true",
        help="also judge the fixtures with the matcher (held-out positives in the top 3, "
        "negatives not answered as their case; builds the index on a cold cache)",
    )
    ls = sub.add_parser("list", help="list cases")
    ls.add_argument("--label", action="append", default=[], help="only cases with this label")
    ls.add_argument("--kb", type=Path, help="KB root (default: the bundled one)")
    sh = sub.add_parser("show", help="render one case")
    sh.add_argument("case_id")
    sh.add_argument("--kb", type=Path, help="KB root (default: the bundled one)")
    new = sub.add_parser("new", help="scaffold a case YAML from an exported issue")
    new.add_argument("--from-issue", type=int, required=True, metavar="N")
    new.add_argument("--issues", type=Path, required=True, help="the gh issue export")
    new.add_argument("--kb", type=Path, help="KB root to write into (default: the bundled one)")
    new.add_argument("--out", type=Path, help="directory for the YAML (default: <KB>/cases)")
    cov = sub.add_parser("coverage", help="coverage of the labelled issue sample in <KB>/coverage")
    cov.add_argument("--kb", type=Path, help="KB root (default: the bundled one)")
    cov.add_argument("--format", choices=("markdown", "json"), default="markdown")


def run(args: argparse.Namespace) -> int:
    from assistant.cli.errors import UsageError

    if args.kb_command == "validate":
        from assistant.kb.validate import validate_path

        if args.path is not None and not args.path.exists():
            raise UsageError(f"{args.path}: no such file or directory")
        problems, n = validate_path(args.path)
        if args.matcher and not problems:
            from assistant.kb.check_fixtures import check_fixtures
            from assistant.match.engine import Matcher

            kb_root = args.path if args.path is not None and args.path.is_dir() else None
            matcher = Matcher.load(kb_root, progress=False)
            problems = check_fixtures(matcher, matcher.kb.root)
        for problem in problems:
            print(problem)
        if problems:
            print(f"{len(problems)} problem(s)", file=sys.stderr)
            return 1
        print(f"ok: {n} case(s) valid")
        return 0
    if args.kb_command == "coverage":
        from assistant.cli.kb_coverage import run_coverage

        return run_coverage(args.kb, args.format)
    if args.kb_command == "new":
        from assistant.kb.load import default_kb_dir
        from assistant.triage.scaffold import scaffold_case

        out = args.out or (args.kb or default_kb_dir()) / "cases"  # the KB given, not ./kb of the cwd
        path = scaffold_case(args.issues, args.from_issue, out)
        print(f"wrote {path}")
        return 0

    from assistant.kb.load import load_kb

    if args.kb is not None and not (args.kb / "cases").is_dir():
        raise UsageError(f"{args.kb}: not a KB (no cases/ directory)")
    kb = load_kb(args.kb)
    if args.kb_command == "list":
        from assistant.report.kb_render import render_case_list

        cases = [c for c in kb.cases.values() if all(lbl in c.labels for lbl in args.label)]
        render_case_list(cases)
        return 0
    case = kb.cases.get(args.case_id)
    if case is None:
        raise UsageError(f"unknown case id {args.case_id!r} (see `trl-help kb list`)")
    from assistant.report.kb_render import render_case

    render_case(case)
    return 0
