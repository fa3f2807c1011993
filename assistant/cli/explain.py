"""`trl-help explain FILE|-`: diagnose a traceback or a training log."""

from __future__ import annotations

import argparse
import json
import sys


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", metavar="FILE|-", help="log or traceback file, or - for stdin")
    p.add_argument("--top", type=int, default=3, help="number of candidate cases (default 3)")
    p.add_argument("--format", choices=("text", "json", "markdown"), default="text")
    p.add_argument(
        "--installed", action="store_true", help="compare the versions installed here (not only those in the log)"
    )
    p.add_argument("--probe", action="store_true", help="run the top match's probe to confirm it")
    p.add_argument("--model", help="model path for --probe (default: a built-in tiny model)")
    p.add_argument("--kb", help="KB root (default: the bundled one)")


def _run_probe(case_id: str, args: argparse.Namespace, report):
    """The top match's probe, on the settings parsed from the user's log."""
    from assistant.cli.probe import probe_for_explain

    return probe_for_explain(case_id, model=args.model, settings=dict(report.settings))


def run(args: argparse.Namespace) -> int:
    from assistant.cli.errors import UsageError
    from assistant.cli.inputs import read_report

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
    probe_case = diagnosis.matches[0].probe and diagnosis.matches[0].case_id if diagnosis.matches else None
    if args.format == "json":
        # one document: the probe's result nested in the match it confirms
        doc = diagnosis.model_dump(mode="json")
        if args.probe and probe_case:
            doc["matches"][0]["probe_result"] = json.loads(_run_probe(probe_case, args, report).to_json())
        print(json.dumps(doc, indent=1))
        if args.probe and not probe_case:
            print("no probe exists for the top match", file=sys.stderr)
        return 0
    elif args.format == "markdown":
        from assistant.report.markdown import render_markdown

        print(render_markdown(diagnosis, matcher.kb))
    else:
        from assistant.report.text import render_text

        render_text(diagnosis, matcher.kb, report)
    if args.probe and probe_case:
        from assistant.cli.probe import render_text as render_probe

        render_probe(_run_probe(probe_case, args, report))
    elif args.probe:
        print("no probe exists for the top match", file=sys.stderr)
    return 0
