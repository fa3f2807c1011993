"""`TrlHelpApp`: configuration (engine, probe runner, initial input) and the global keys.

The app depends on two small interfaces (:mod:`assistant.tui.engine`): pass ``engine=`` (a
loaded :class:`~assistant.match.engine.Engine`) or ``engine_loader=`` (called in a
worker thread; the default loads the real matcher), and ``probe_runner=`` (default: the real
harness when the ``probes`` package is importable, else None → "probes unavailable").
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from textual.app import App
from textual.binding import Binding

from assistant.match.engine import DEFAULT_TOP, Engine
from assistant.tui.engine import ProbeRunner, default_probe_runner, load_engine

_DEFAULT = object()


class TrlHelpApp(App[None]):
    TITLE = "trl-help"
    SUB_TITLE = "paste a traceback · read the diagnosis · run the probe"

    CSS = """
    Screen {
        background: $background;
    }
    """

    BINDINGS = [
        Binding("f1", "help", "Help"),
        Binding("question_mark", "help", "Help", show=False),
        Binding("ctrl+q", "quit", "Quit", priority=True),
    ]

    def __init__(
        self,
        *,
        engine: Engine | None = None,
        engine_loader: Callable[[], Engine] | None = None,
        probe_runner: ProbeRunner | None | Any = _DEFAULT,
        initial_file: str | Path | None = None,
        initial_text: str | None = None,
        top: int = DEFAULT_TOP,
        paste_settle_s: float = 0.6,
        kb_root: str | None = None,
    ) -> None:
        super().__init__()
        self.engine: Engine | None = engine
        self.engine_loader: Callable[[], Engine] = engine_loader or (lambda: load_engine(kb_root))
        self.probe_runner: ProbeRunner | None = default_probe_runner() if probe_runner is _DEFAULT else probe_runner
        self.initial_file = Path(initial_file) if initial_file is not None else None
        self.initial_text = initial_text
        self.top = top
        self.paste_settle_s = paste_settle_s

    def on_mount(self) -> None:
        from assistant.tui.screens.main import MainScreen

        self.push_screen(MainScreen())

    @property
    def main(self):
        """The main screen (whatever is on top)."""
        from assistant.tui.screens.main import MainScreen

        for screen in self.screen_stack:
            if isinstance(screen, MainScreen):
                return screen
        raise LookupError("no main screen")

    def action_help(self) -> None:
        from assistant.tui.screens.help import HelpScreen

        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen())

    def action_focus_results(self) -> None:
        self.main.action_focus_results()


def run(file: str | None = None, kb_root: str | None = None) -> int:
    TrlHelpApp(initial_file=file, kb_root=kb_root).run()
    return 0
