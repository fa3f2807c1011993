"""ctrl+o: choose a log file (type a path, or pick one in the tree)."""

from __future__ import annotations

from pathlib import Path

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import DirectoryTree, Input, Label


class OpenFileScreen(ModalScreen[Path | None]):
    DEFAULT_CSS = """
    OpenFileScreen {
        align: center middle;
    }
    OpenFileScreen > Vertical {
        width: 90%;
        max-width: 100;
        height: 80%;
        border: round $primary;
        background: $surface;
        padding: 0 1;
    }
    OpenFileScreen DirectoryTree {
        height: 1fr;
    }
    OpenFileScreen #open-error {
        color: $text-error;
        height: auto;
    }
    """

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, root: Path | None = None) -> None:
        super().__init__()
        self.root = root or Path.cwd()

    def compose(self) -> ComposeResult:
        with Vertical() as v:
            v.border_title = "Open a log file"
            yield Input(placeholder="path/to/train.log (enter opens)", id="open-path")
            yield Label("", id="open-error")
            yield DirectoryTree(self.root, id="open-tree")

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    @on(Input.Submitted, "#open-path")
    def _submitted(self, event: Input.Submitted) -> None:
        path = Path(event.value.strip()).expanduser()
        if not event.value.strip():
            self.query_one(DirectoryTree).focus()
        elif path.is_file():
            self.dismiss(path)
        else:
            self.query_one("#open-error", Label).update(f"not a file: {path}")

    @on(DirectoryTree.FileSelected)
    def _picked(self, event: DirectoryTree.FileSelected) -> None:
        self.dismiss(Path(event.path))

    def action_cancel(self) -> None:
        self.dismiss(None)
