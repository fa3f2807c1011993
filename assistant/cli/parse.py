"""`trl-help parse FILE|-`: show what was understood."""

from __future__ import annotations

import argparse


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", metavar="FILE|-", help="log or traceback file, or - for stdin")
    p.add_argument("--format", choices=("text", "json"), default="text")


def run(args: argparse.Namespace) -> int:
    from assistant.cli.inputs import read_report

    report = read_report(args.file)
    if args.format == "json":
        from assistant.report.json_out import report_json

        print(report_json(report))
    else:
        from assistant.report.parsed_text import render_report

        render_report(report)
    return 0
