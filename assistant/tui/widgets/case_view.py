"""The selected case (or the intro / no-known-case text) as scrollable Markdown."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Markdown


class CaseView(VerticalScroll, can_focus=True):
    DEFAULT_CSS = """
    CaseView {
        width: 1fr;
        height: 1fr;
        border: round $primary 50%;
        border-title-color: $text-primary;
        padding: 0 1;
    }
    CaseView:focus {
        border: round $primary;
    }
    CaseView Markdown {
        margin: 0;
        padding: 0;
    }
    CaseView MarkdownHeader {
        margin: 1 0 1 0;
    }
    CaseView MarkdownHeader:first-child {
        margin-top: 0;
    }
    """

    def __init__(self, markdown: str = "", **kwargs) -> None:
        super().__init__(**kwargs)
        self._initial = markdown
        self.border_title = "Diagnosis"

    def compose(self) -> ComposeResult:
        yield Markdown(self._initial, open_links=False)

    @property
    def markdown_widget(self) -> Markdown:
        return self.query_one(Markdown)

    @property
    def source(self) -> str:
        return self.markdown_widget.source

    def show(self, markdown: str, title: str = "Diagnosis") -> None:
        self.border_title = title
        self.markdown_widget.update(markdown)
        self.scroll_home(animate=False)
