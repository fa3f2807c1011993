"""`trl-help explain FILE|-`: diagnose a traceback or a training log."""

from __future__ import annotations

import argparse
import json
import sys

#: the keys of `assistant.report.formats.FORMATS` (kept here so `--help` imports no renderer)
FORMAT_NAMES = ("text", "json", "markdown")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", metavar="FILE|-", help="log or traceback file, or - for stdin")
    p.add_argument("--top", type=int, default=3, help="number of candidate cases (default 3)")
    p.add_argument("--format", choices=FORMAT_NAMES, default="text")
    p.add_argument(
        "--installed", action="store_true", help="compare the versions installed here (not only those in the log)"
    )
    p.add_argument("--probe", action="store_true", help="run the top match's probe to confirm it")
    p.add_argument("--model", help="model path for --probe (default: a built-in tiny model)")
    p.add_argument("--kb", help="KB root (default: the bundled one)")
    from assistant.cli.probe import add_probe_options

    add_probe_options(p)


def _run_probe(case_id: str, args: argparse.Namespace, report):
    """The top match's probe, on the settings parsed from the user's log."""
    from assistant.cli.probe import probe_for_explain, settings_from_report

    return probe_for_explain(case_id, model=args.model, settings=settings_from_report(report), args=args)


def run(args: argparse.Namespace) -> int:
    from assistant.cli.errors import UsageError
    from assistant.cli.inputs import read_report

    if args.top < 1:
        raise UsageError("--top must be at least 1")
    if args.probe:  # probe options are checked before anything is read or run
        from assistant.cli.probe import check_probe_args

        check_probe_args(args)
        if args.config is not None and not args.config.is_file():
            raise UsageError(f"{args.config}: no such config file")
    report = read_report(args.file)
    from assistant.kb.load import KBProblemsError
    from assistant.match.engine import Matcher

    try:
        matcher = Matcher.load(args.kb, progress=sys.stderr.isatty())
    except KBProblemsError as exc:
        raise UsageError(str(exc)) from None
    diagnosis = matcher.diagnose(report, top=args.top, installed=args.installed)
    probe_case = diagnosis.matches[0].probe and diagnosis.matches[0].case_id if diagnosis.matches else None
    from assistant.report.formats import FORMATS, render_json

    if args.format == "json" and args.probe and probe_case:
        # one document: the probe's result nested in the match it confirms
        result = json.loads(_run_probe(probe_case, args, report).to_json())
        sys.stdout.write(render_json(diagnosis, probe_result=result))
    else:
        sys.stdout.write(FORMATS[args.format](diagnosis))
    if args.probe and not probe_case:
        print("no probe exists for the top match", file=sys.stderr)
    elif args.probe and probe_case and args.format != "json":
        from assistant.cli.probe import render_text as render_probe

        sys.stdout.flush()
        render_probe(_run_probe(probe_case, args, report))
    return 0
