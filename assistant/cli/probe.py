"""`trl-help probe CASE_ID` — reproduce a case on your model and test the fix; `--list`."""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("case_id", nargs="?", metavar="CASE_ID", help="KB case id (or probe id) to reproduce; see --list")
    p.add_argument("--list", action="store_true", help="list the probes and the cases they confirm")
    p.add_argument(
        "--model", metavar="PATH", help="local model directory (default: a built-in tiny Qwen2 built locally)"
    )
    p.add_argument("--format", choices=["text", "json"], default="text")
    p.add_argument(
        "--from-log",
        type=Path,
        metavar="LOG",
        help="use the settings of the run in this log (batch size, num_generations, LoRA, dtype, ...)",
    )
    add_probe_options(p)
    p.add_argument("-v", "--verbose", action="store_true", help="stream the phases' output to stderr while they run")
    p.add_argument(
        "--versions",
        metavar="PINS",
        help="also run in a cached environment with these versions, e.g. trl==0.15.2,transformers==4.49.0",
    )
    p.add_argument(
        "--versions-from", type=Path, metavar="LOG", help="like --versions, with the versions read from this log"
    )


def _list(fmt: str) -> int:
    from probes.harness import list_probes

    rows = list_probes()
    if fmt == "json":
        print(json.dumps(rows, indent=2))
        return 0
    from rich.console import Console
    from rich.table import Table

    t = Table(title="probes", show_lines=False)
    t.add_column("cases (trl-help probe CASE)", no_wrap=True)
    t.add_column("probe", overflow="fold")
    t.add_column("needs")
    t.add_column("runs here")
    for r in rows:
        t.add_row(
            "\n".join(r["cases"]),
            r["probe"],
            ", ".join(r["needs"]) or "-",
            "yes" if r["installed"] else "no (missing package)",
        )
    Console().print(t)
    return 0


_STYLE = {
    "confirmed": "bold green",
    "reproduced-in-part": "bold cyan",
    "not-reproduced": "bold yellow",
    "fix-ineffective": "bold red",
    "skipped": "bold blue",
    "error": "bold red",
}


def render_text(result, console=None) -> None:
    """Human-readable rendering of a ProbeResult (also used by `explain --probe`)."""
    from rich.console import Console
    from rich.markup import escape

    c = console or Console()
    v = result.verdict.value
    c.print(
        f"[bold]{escape(result.case_id)}[/bold]  (probe {escape(result.probe)})  "
        f"→ [{_STYLE.get(v, 'bold')}]{v}[/]  in {result.seconds:.1f} s"
    )
    vers = result.environment.get("versions") or {}
    shown = ", ".join(f"{k} {vv}" for k, vv in vers.items() if vv)
    if shown:
        c.print(f"[dim]{escape(shown)}; device {result.environment.get('device', '?')}[/dim]")
    phases = [result.baseline, result.treatment, *result.extra.values()]
    for ph in phases:
        if ph.status.value == "not-run" and not ph.description:
            continue
        mark = {True: "[red]symptom[/red]", False: "[green]clean[/green]", None: "[dim]n/a[/dim]"}[ph.reproduced]
        c.print(f"\n[bold]{escape(ph.name)}[/bold] {mark}  [dim]{ph.status.value}, {ph.seconds:.1f} s[/dim]")
        if ph.description:
            c.print(f"  [dim]{escape(ph.description)}[/dim]")
        if ph.detail:
            c.print(f"  {escape(ph.detail[:600])}")
        for ev in ph.evidence[:4]:
            c.print(f"  [cyan]evidence:[/cyan] {escape(ev)}")
    if result.notes:
        c.print()
        for n in result.notes:
            c.print(f"• {escape(n)}")


def run(args: argparse.Namespace) -> int:
    from assistant.cli.errors import UsageError

    if args.list:
        return _list(args.format)
    if not args.case_id:
        raise UsageError("give a CASE_ID (or --list)")
    from probes.harness import ProbeLookupError, resolve

    try:
        resolve(args.case_id)
    except ProbeLookupError as exc:
        raise UsageError(str(exc)) from None

    sets = check_probe_args(args)
    spec = _run_spec(args.from_log, args.config, sets)
    if args.versions or args.versions_from:
        from probes.envs_cli import run_versions

        return run_versions(args, spec)

    try:
        result = _run_with_progress(args.case_id, **probe_kwargs(args, spec))
    except ProbeLookupError as exc:
        raise UsageError(str(exc)) from None
    _note_run_spec(result, spec)
    _print(result, args.format)
    return 1 if result.verdict.value == "error" else 0


def add_probe_options(p: argparse.ArgumentParser) -> None:
    """The options that shape a probe run, shared by `probe` and `explain --probe`."""
    p.add_argument(
        "--tiny-replica",
        action="store_true",
        help="build a 2-layer, small-dims model of the same class from --model's config",
    )
    p.add_argument(
        "--device", choices=["auto", "cpu", "cuda"], default="auto", help="auto picks CUDA when torch sees a GPU"
    )
    p.add_argument("--timeout", type=float, default=180.0, metavar="S", help="seconds allowed per phase (default 180)")
    p.add_argument("--trust-remote-code", action="store_true", help="allow the model's own code (never done otherwise)")
    p.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        dest="options",
        help="probe setting, e.g. target_modules=q_proj,v_proj or num_generations=8 "
        "(batch check: per_device_train_batch_size, num_processes, gradient_accumulation_steps)",
    )
    p.add_argument(
        "--config",
        type=Path,
        metavar="FILE",
        help="a TRL / accelerate / DeepSpeed YAML or JSON config of the run (overrides the log)",
    )


def check_probe_args(args: argparse.Namespace) -> dict[str, str]:
    """Usage errors for --model / --timeout / --set, before anything runs; the --set values."""
    from assistant.cli.errors import UsageError

    if args.model is not None and not Path(args.model, "config.json").is_file():
        what = "is not a directory" if not Path(args.model).is_dir() else "has no config.json"
        raise UsageError(f"--model {args.model} {what}: give a local model directory (save_pretrained output)")
    if not math.isfinite(args.timeout) or args.timeout <= 0:
        raise UsageError(f"--timeout must be a positive number of seconds, got {args.timeout}")
    sets = {}
    for item in args.options:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise UsageError(f"--set expects KEY=VALUE, got {item!r}")
        sets[key.strip()] = value.strip()
    return sets


def probe_kwargs(args: argparse.Namespace, spec) -> dict:
    """What `run_probe` needs from the command line and the user's run (shared with --versions)."""
    return dict(
        model=args.model,
        tiny_replica=args.tiny_replica,
        device=args.device,
        timeout=args.timeout,
        verbose=args.verbose,
        trust_remote_code=args.trust_remote_code,
        options=spec.options(),
    )


def _run_spec(log: Path | None, config: Path | None, sets: dict[str, str]):
    """The user's run from `--from-log`, `--config` and `--set` (usage errors for unreadable files)."""
    from assistant.cli.errors import UsageError
    from probes.runspec import build_run_spec

    log_settings: dict = {}
    if log is not None:
        from assistant.cli.inputs import read_report

        log_settings = settings_from_report(read_report(str(log)))
    if config is not None and not config.is_file():
        raise UsageError(f"{config}: no such config file")
    try:
        return build_run_spec(log_settings, config, sets)
    except (ValueError, OSError) as exc:
        raise UsageError(f"{config}: not a readable YAML/JSON config ({exc})") from None


def _note_run_spec(result, spec) -> None:
    """Say which of the user's settings the probe ran with, and where each came from."""
    if spec.settings:
        result.notes.insert(0, "your run's settings: " + spec.describe())


def _run_with_progress(case_id: str, *, verbose: bool = False, label: str | None = None, **kw):
    """`run_probe` with progress on stderr: a spinner on a terminal, `[probe] …` lines otherwise.
    With `label` (runs side by side) always labelled lines: two spinners cannot share a terminal."""
    from contextlib import nullcontext

    from rich.console import Console

    from probes.harness import run_probe

    err = Console(stderr=True)
    status_ctx = err.status("starting probe …", spinner="dots") if err.is_terminal and label is None else None
    tag = f"[probe {label}]" if label else "[probe]"

    def on_status(msg: str) -> None:
        if status_ctx is not None:
            status_ctx.update(msg)
        else:
            print(f"{tag} {msg}", file=sys.stderr, flush=True)

    def on_output(line: str) -> None:
        if verbose:
            print(line, file=sys.stderr, flush=True)

    with status_ctx if status_ctx is not None else nullcontext():
        return run_probe(case_id, on_output=on_output, on_status=on_status, **kw)


def _print(result, fmt: str) -> None:
    if fmt == "json":
        print(result.to_json())
    else:
        render_text(result)


def settings_from_report(report) -> dict:
    """The probe settings a parsed log gives: its settings, plus `reward_spread` ("none" / "some")
    from its logged reward_std / frac_reward_zero_std (whether groups got different rewards)."""
    out = dict(report.settings)
    series = report.metric_series()
    frac, std = series.get("frac_reward_zero_std"), series.get("reward_std")
    if frac:
        out["reward_spread"] = "none" if all(x >= 1 - 1e-9 for x in frac) else "some"
    elif std:
        out["reward_spread"] = "none" if all(abs(x) < 1e-9 for x in std) else "some"
    return out


def probe_for_explain(case_id: str, *, model: str | None = None, settings: dict | None = None, args=None):
    """Used by `trl-help explain --probe`: run the case's probe on the settings parsed from the
    user's log (then --config, then --set) with explain's probe options; returns the ProbeResult."""
    from probes.runspec import build_run_spec

    sets = check_probe_args(args) if args is not None else {}
    config = getattr(args, "config", None)
    spec = build_run_spec(settings or {}, config, sets)
    kwargs: dict[str, Any] = dict(model=model, tiny_replica=False, device="auto", timeout=300.0, options=spec.options())
    if args is not None:
        kwargs.update(
            tiny_replica=args.tiny_replica,
            device=args.device,
            timeout=args.timeout,
            trust_remote_code=args.trust_remote_code,
        )
    result = _run_with_progress(case_id, **kwargs)
    _note_run_spec(result, spec)
    return result


def run_and_render(case_id: str, *, model: str | None = None, fmt: str = "text", settings: dict | None = None) -> int:
    """Run the probe for `explain --probe` and print its result (text)."""
    result = probe_for_explain(case_id, model=model, settings=settings)
    _print(result, fmt)
    return 0
