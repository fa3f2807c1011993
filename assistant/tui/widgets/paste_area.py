"""The paste area: a plain multi-line editor that says when a paste landed."""

from __future__ import annotations

from textual import events
from textual.binding import Binding
from textual.widgets import TextArea

from assistant.tui.messages import Pasted

#: an insertion this large at once is treated as a paste (terminals without bracketed paste)
PASTE_CHARS = 80


class PasteArea(TextArea):
    """Whole logs welcome: no soft wrap (long log lines stay lines), tab moves focus."""

    DEFAULT_CSS = """
    PasteArea {
        height: 1fr;
        min-height: 4;
        border: round $primary 50%;
        border-title-color: $text-primary;
        border-subtitle-color: $text-muted;
    }
    PasteArea:focus {
        border: round $primary;
    }
    """

    BINDINGS = [Binding("escape", "app.focus_results", "Results", show=False)]

    def __init__(self, text: str = "", **kwargs) -> None:
        super().__init__(
            text,
            soft_wrap=False,
            tab_behavior="focus",
            show_line_numbers=False,
            placeholder="Paste a traceback or a whole training log here …",
            **kwargs,
        )
        self._last_len = len(text)
        self.border_title = "Traceback / log"
        self.border_subtitle = "F5 diagnose · ctrl+o open file · esc results"

    def set_text(self, text: str) -> None:
        """Replace the text programmatically (a file, a clear): not reported as a paste."""
        self._last_len = len(text)
        self.load_text(text)

    async def _on_paste(self, event: events.Paste) -> None:
        await super()._on_paste(event)
        self._last_len = len(self.text)
        self.post_message(Pasted())

    def _on_text_area_changed(self, event: TextArea.Changed) -> None:
        # pastes that do not arrive as a Paste event (no bracketed paste) show up as one big jump
        n = len(self.text)
        if n - self._last_len >= PASTE_CHARS:
            self.post_message(Pasted())
        self._last_len = n
