"""One line under the paste area: engine state, diagnosis outcome, hints."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import LoadingIndicator, Static


class StatusLine(Horizontal):
    DEFAULT_CSS = """
    StatusLine {
        height: 1;
        padding: 0 1;
    }
    StatusLine LoadingIndicator {
        width: 6;
        height: 1;
        min-height: 1;
        display: none;
        background: transparent;
    }
    StatusLine.-busy LoadingIndicator {
        display: block;
    }
    StatusLine #status-text {
        width: 1fr;
        height: 1;
        text-wrap: nowrap;
        text-overflow: ellipsis;
    }
    StatusLine.-error #status-text { color: $text-error; }
    StatusLine.-ok #status-text { color: $text-success; }
    StatusLine.-warn #status-text { color: $text-warning; }
    """

    def compose(self) -> ComposeResult:
        yield LoadingIndicator()
        yield Static("", id="status-text", markup=False)

    def set(self, text: str, *, busy: bool = False, tone: str = "") -> None:
        """Show *text*; *tone* is '', 'ok', 'warn' or 'error'."""
        self.query_one("#status-text", Static).update(text)
        self.set_class(busy, "-busy")
        for t in ("ok", "warn", "error"):
            self.set_class(tone == t, f"-{t}")

    @property
    def text(self) -> str:
        return str(self.query_one("#status-text", Static).content)
