"""`?`: every key, and what the app does."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Markdown

HELP = """\
# trl-help — keys

| key | does |
|---|---|
| paste | put a traceback or a whole log in the box; diagnosis starts once the paste settles |
| `F5` `ctrl+enter` `ctrl+r` | diagnose the box now |
| `ctrl+o` | open a log file |
| `ctrl+l` | clear the box |
| `escape` / `tab` | leave the box: go to the candidates |
| `↑` `↓` | pick a candidate case |
| `c` | copy the selected case's fix |
| `m` | copy a GitHub-ready markdown answer |
| `v` | parsed view: what was understood (error, chain, environment) |
| `p` | run the selected case's probe (dialog: model, device, tiny replica) |
| `ctrl+p` | command palette (themes: light / dark) |
| `?` `F1` | this help |
| `ctrl+q` | quit |

**Confidence badges**: `HIGH` / `MED` / `LOW` come from the matcher's calibrated score.
The version verdict says whether the versions in your log are in the case's affected range
(`affected`), past its fix (`fixed in yours`: probably not your problem) or unknown
(`ver ?`: the log shows no versions; paste `pip list` output too). `probe` marks cases
with a probe.

**No known case** means nothing fits confidently; the nearest related cases are listed as
leads only.

**Probes** reproduce a case on a tiny model (or your model's tiny replica) in a subprocess,
then apply the fix: `confirmed` means the baseline failed and the fix removed the failure.
They run in the background; `escape` cancels a running probe.

**Clipboard**: copying uses the terminal's OSC 52; some terminals (or tmux without
`set -g set-clipboard on`) ignore it.

_Press escape to close._
"""


class HelpScreen(ModalScreen[None]):
    DEFAULT_CSS = """
    HelpScreen {
        align: center middle;
    }
    HelpScreen > VerticalScroll {
        width: 90%;
        max-width: 100;
        height: 90%;
        border: round $primary;
        background: $surface;
        padding: 0 1;
    }
    """

    BINDINGS = [Binding("escape,q,question_mark,f1", "dismiss", "Close")]

    def compose(self) -> ComposeResult:
        with VerticalScroll() as v:
            v.border_title = "Help"
            yield Markdown(HELP)

    def on_mount(self) -> None:
        self.query_one(VerticalScroll).focus()
