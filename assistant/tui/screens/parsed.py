"""What was understood from the input: primary error, chain, frames, environment, settings."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Footer, Header

from assistant.parse.model import Report
from assistant.tui.render import parsed_markdown
from assistant.tui.widgets.case_view import CaseView


class ParsedScreen(Screen):
    DEFAULT_CSS = """
    ParsedScreen CaseView {
        height: 1fr;
    }
    """

    BINDINGS = [
        Binding("escape,v,q", "app.pop_screen", "Back"),
        Binding("c", "copy", "Copy"),
    ]

    def __init__(self, report: Report) -> None:
        super().__init__()
        self.report = report
        self.markdown = parsed_markdown(report)

    def compose(self) -> ComposeResult:
        yield Header(icon="⚕")
        view = CaseView(self.markdown, id="parsed")
        view.border_title = "Parsed view"
        yield view
        yield Footer(show_command_palette=False)

    def on_mount(self) -> None:
        self.sub_title = "what was understood"
        self.query_one(CaseView).focus()

    def action_copy(self) -> None:
        self.app.copy_to_clipboard(self.markdown)
        self.notify("Parsed view copied to the clipboard (markdown).", title="Copied")
