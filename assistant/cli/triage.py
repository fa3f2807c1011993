"""`trl-help triage FILE|DIR|-`: match a batch of exported GitHub issues.

Exit codes: 0 when every issue was processed; 1 when some could not be used (each reported on
stderr, one line, and in the JSON `problems`; the others are processed and output); 2 when the
whole input is unusable.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "file",
        metavar="FILE|DIR|-",
        help="`gh issue list --json number,title,body,labels,url,createdAt` output (JSON array or "
        "JSON Lines), a directory of .md/.txt issues, or - for stdin",
    )
    p.add_argument("--format", choices=("table", "json", "markdown", "csv"), default="table")
    p.add_argument("--top", type=int, default=3, help="candidate cases per issue (default 3)")
    p.add_argument(
        "--issue",
        type=int,
        action="append",
        default=[],
        metavar="N",
        help="only triage issue N (repeatable; clusters are then computed among those)",
    )
    p.add_argument(
        "--dup-threshold",
        type=float,
        default=None,
        metavar="SIM",
        help="near-duplicate similarity threshold (default: the measured conservative one)",
    )
    p.add_argument("--no-cache", action="store_true", help="ignore and do not update the incremental cache")
    p.add_argument("--strict", action="store_true", help="(the default now) exit 1 when any issue was skipped")
    p.add_argument("-o", "--output", type=Path, help="write the report to this file instead of stdout")
    p.add_argument("--kb", help="KB root (default: the bundled one)")


def run(args: argparse.Namespace) -> int:
    from assistant.cli.errors import UsageError
    from assistant.triage.inputs import ExportError, load_issues

    if args.top < 1:
        raise UsageError("--top must be at least 1")
    if args.dup_threshold is not None and not 0.0 < args.dup_threshold <= 1.0:
        raise UsageError("--dup-threshold must be in (0, 1]")
    try:
        batch = load_issues(args.file)
    except ExportError as exc:
        raise UsageError(str(exc)) from None
    if args.issue:
        wanted = set(args.issue)
        chosen = [i for i in batch.all() if i.number in wanted]  # a streamed export is read through here
        batch.stream = None
        missing = sorted(wanted - {i.number for i in chosen})
        if missing:
            batch.problems.append("not in the export: " + ", ".join(f"#{n}" for n in missing))
        batch.issues = chosen
        if not batch.issues:
            raise UsageError(
                f"{args.file}: none of the requested issues ({', '.join(f'#{n}' for n in sorted(wanted))}) is in the export"
            )

    from assistant.kb.load import KBProblemsError
    from assistant.match.engine import Matcher
    from assistant.triage.cluster import DUP_THRESHOLD
    from assistant.triage.run import Options, triage

    try:
        matcher = Matcher.load(args.kb, progress=sys.stderr.isatty())
    except KBProblemsError as exc:
        raise UsageError(str(exc)) from None
    opts = Options(
        top=args.top,
        dup_threshold=args.dup_threshold or DUP_THRESHOLD,
        use_cache=not args.no_cache,
        progress=sys.stderr.isatty(),
        source=str(args.file) if args.file != "-" else "issues.json",
    )
    result = triage(batch, matcher, opts)
    for p in result.problems:
        print(f"trl-help: warning: {p}", file=sys.stderr)

    if args.format == "table":
        from rich.console import Console

        if args.output:
            with args.output.open("w") as f:
                from assistant.triage.render_table import render_table

                render_table(result, Console(file=f, width=160))
        else:
            from assistant.triage.render_table import render_table

            render_table(result)
    elif args.format == "json":
        from assistant.triage.render_json import write_json

        # streamed: the document for 10,000 issues is ~90 MB
        if args.output:
            with args.output.open("w") as f:
                write_json(result, f)
                f.write("\n")
        else:
            write_json(result, sys.stdout)
            sys.stdout.write("\n")
    else:
        if args.format == "markdown":
            from assistant.triage.render_markdown import render_markdown_report as render
        else:
            from assistant.triage.render_csv import render_csv as render
        text = render(result)
        if args.output:
            args.output.write_text(text if text.endswith("\n") else text + "\n")
        else:
            sys.stdout.write(text if text.endswith("\n") else text + "\n")
    # processed, but some issues were dropped or malformed (listed above): exit 1 (README, exit codes)
    return 1 if result.problems else 0
