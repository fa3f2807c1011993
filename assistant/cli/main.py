"""`trl-help` entry point: argparse only, every subcommand imported lazily.

`--help` and `--version` must stay fast: nothing here imports torch, transformers or
sentence-transformers.
"""

from __future__ import annotations

import argparse
import sys
from importlib import import_module

from assistant import __version__

#: subcommand -> (module, help)
COMMANDS: dict[str, tuple[str, str]] = {
    "explain": ("assistant.cli.explain", "diagnose a traceback or training log"),
    "parse": ("assistant.cli.parse", "show what was understood from a log"),
    "probe": ("assistant.cli.probe", "reproduce a case on your model and test the fix"),
    "triage": ("assistant.cli.triage", "match a batch of exported GitHub issues"),
    "eval": ("assistant.cli.eval", "leave-one-out accuracy of the matcher on the KB"),
    "kb": ("assistant.cli.kb", "validate, list and show knowledge-base cases"),
    "tui": ("assistant.cli.tui", "interactive app: paste a traceback, read the diagnosis"),
}


from assistant.cli.errors import EXIT_INTERNAL, EXIT_USAGE, UsageError  # noqa: E402


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="trl-help",
        description="Diagnose TRL / PEFT / DeepSpeed / accelerate / vLLM training failures.",
    )
    parser.add_argument("--version", action="version", version=f"trl-help {__version__}")
    parser.add_argument(
        "--verbose",
        action="store_true",
        help="show what libraries print while the index is built (also TRL_HELP_VERBOSE=1)",
    )
    parser.add_argument(
        "--debug", action="store_true", help="show the full traceback of an internal error (also TRL_HELP_DEBUG=1)"
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (module, help_text) in COMMANDS.items():
        p = sub.add_parser(name, help=help_text, description=help_text)
        p.set_defaults(_module=module)
        # each command module declares its arguments in `add_arguments(p)`; importing those
        # modules is cheap (their heavy imports happen inside `run`).
        try:
            import_module(module).add_arguments(p)
        except ImportError as exc:  # a front end whose extra is not installed
            p.description = f"{help_text} (unavailable: {exc})"
    return parser


def _broken_pipe_is_quiet() -> None:
    """rich ends the process with exit 1 when the reader of stdout goes away (`| head -1`);
    raise BrokenPipeError instead, which `main` turns into a quiet exit 0."""
    import rich.console

    def on_broken_pipe(self) -> None:
        raise BrokenPipeError

    rich.console.Console.on_broken_pipe = on_broken_pipe  # type: ignore[method-assign]


class Terminated(BaseException):
    """SIGTERM arrived: unwind (context managers remove temporary directories, stop probe workers)."""


def _sigterm_unwinds() -> None:
    """Turn SIGTERM into an exception in the main thread, so `finally` blocks and `with` exits run
    (the default action would leave /tmp/trl-help-probe-* and a running worker behind)."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        return

    def on_term(signum, frame) -> None:
        raise Terminated()

    try:
        signal.signal(signal.SIGTERM, on_term)
    except (ValueError, OSError):  # not settable here
        pass


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv and sys.stdin.isatty() and sys.stdout.isatty():
        argv = ["tui"]
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "command", None):
        parser.print_help()
        return 0
    if args.verbose:
        import os

        os.environ["TRL_HELP_VERBOSE"] = "1"
    _broken_pipe_is_quiet()
    _sigterm_unwinds()
    try:
        return int(import_module(args._module).run(args) or 0)
    except UsageError as exc:
        print(f"trl-help: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("trl-help: interrupted", file=sys.stderr)
        return 130
    except Terminated:
        print("trl-help: terminated", file=sys.stderr)
        return 143
    except BrokenPipeError:
        # the reader went away (`| head`): point stdout at /dev/null so the flush at exit
        # does not fail again, and end quietly
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except Exception as exc:  # noqa: BLE001 - one line and exit 3, the traceback only on request
        import os

        if args.debug or os.environ.get("TRL_HELP_DEBUG"):
            raise
        first = str(exc).strip().splitlines()[0][:300] if str(exc).strip() else ""
        print(
            f"trl-help: internal error: {type(exc).__name__}: {first} (run again with --debug for the traceback)",
            file=sys.stderr,
        )
        return EXIT_INTERNAL


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
