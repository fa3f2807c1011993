"""`trl-help explain FILE|-`: diagnose a traceback or a training log."""

from __future__ import annotations

import argparse
import sys


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", metavar="FILE|-", help="log or traceback file, or - for stdin")
    p.add_argument("--top", type=int, default=3, help="number of candidate cases (default 3)")
    p.add_argument("--format", choices=("text", "json", "markdown"), default="text")
    p.add_argument("--installed", action="store_true",
                   help="compare the versions installed here (not only those in the log)")
    p.add_argument("--probe", action="store_true", help="run the top match's probe to confirm it")
    p.add_argument("--model", help="model path for --probe (default: a built-in tiny model)")
    p.add_argument("--kb", help="KB root (default: the bundled one)")


def run(args: argparse.Namespace) -> int:
    from assistant.cli.inputs import read_report
    from assistant.cli.errors import UsageError

    if args.top < 1:
        raise UsageError("--top must be at least 1")
    report = read_report(args.file)
    from assistant.kb.load import KBProblemsError
    from assistant.match.engine import Matcher

    try:
        matcher = Matcher.load(args.kb, progress=sys.stderr.isatty())
    except KBProblemsError as exc:
        raise UsageError(str(exc)) from None
    diagnosis = matcher.diagnose(report, top=args.top, installed=args.installed)
    if args.format == "json":
        print(diagnosis.model_dump_json(indent=1))
    elif args.format == "markdown":
        from assistant.report.markdown import render_markdown

        print(render_markdown(diagnosis, matcher.kb))
    else:
        from assistant.report.text import render_text

        render_text(diagnosis, matcher.kb, report)
    if args.probe and diagnosis.matches and diagnosis.matches[0].probe:
        from assistant.cli.probe import run_and_render

        run_and_render(diagnosis.matches[0].case_id, model=args.model, fmt=args.format,
                       settings=dict(report.settings))
    elif args.probe:
        print("no probe exists for the top match", file=sys.stderr)
    return 0
