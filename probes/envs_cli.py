"""`trl-help probe CASE --versions … | --versions-from LOG`: the probe on both stacks."""

from __future__ import annotations

import argparse
import sys
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from probes.envs import EnvBuildError, Pins, VersionSpecError, ensure_env, parse_versions, versions_from_environment
from probes.envs_compare import Comparison, StackResult


def pins_from_args(args: argparse.Namespace) -> Pins:
    """The pins asked for; usage errors (exit 2) for a bad spec or a log without versions."""
    from assistant.cli.errors import UsageError

    pins: dict[str, str] = {}
    if args.versions_from is not None:
        from assistant.cli.inputs import read_report

        found = versions_from_environment(read_report(str(args.versions_from)).environment)
        if not found.pins:
            raise UsageError(f"{args.versions_from}: no library versions found in this log")
        pins.update(found.pins)
    if args.versions:
        try:
            pins.update(parse_versions(args.versions).pins)
        except VersionSpecError as exc:
            raise UsageError(str(exc)) from None
    return Pins(pins=pins)


def _installed(names: list[str]) -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    out = {}
    for n in names:
        try:
            out[n] = version(n)
        except PackageNotFoundError:
            out[n] = "not installed"
    return out


def run_versions(args: argparse.Namespace, spec: Any) -> int:
    """Build/reuse the env, run the probe there and on the installed stack, print both."""
    from assistant.cli.probe import _run_with_progress, probe_kwargs

    pins = pins_from_args(args)
    kw = probe_kwargs(args, spec)
    yours = StackResult(label="your versions", versions=dict(pins.pins))
    installed = StackResult(label="installed versions", versions=_installed(sorted(pins.pins)))

    def run_yours() -> None:
        try:
            py = ensure_env(pins, on_status=lambda m: print(f"[probe yours] {m}", file=sys.stderr, flush=True))
            yours.result = _run_with_progress(args.case_id, python=str(py), label="yours", **kw).model_dump(mode="json")
        except EnvBuildError as exc:
            yours.error = str(exc)

    def run_installed() -> None:
        installed.result = _run_with_progress(args.case_id, label="installed", **kw).model_dump(mode="json")

    # the two stacks run in separate worker processes: side by side they share the cores and the
    # wall time is the slower stack's, not the sum
    with ThreadPoolExecutor(max_workers=2) as pool:
        for fut in [pool.submit(run_yours), pool.submit(run_installed)]:
            fut.result()
    cmp = Comparison(case_id=args.case_id, yours=yours, installed=installed)
    print(cmp.to_json() if args.format == "json" else cmp.render_text())
    return 1 if "error" in (yours.verdict, installed.verdict) else 0
