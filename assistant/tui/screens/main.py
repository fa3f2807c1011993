"""The main screen: paste area, status line, candidate list and the selected case."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Footer, Header

from assistant.match.diagnosis import Diagnosis, Match
from assistant.parse.model import Report
from assistant.tui.messages import (
    CaseSelected,
    DiagnosisFailed,
    DiagnosisReady,
    EngineFailed,
    EngineReady,
    Pasted,
)
from assistant.tui.render import INTRO, case_markdown, fix_text, no_case_markdown
from assistant.tui.widgets.candidates import CandidateList
from assistant.tui.widgets.case_view import CaseView
from assistant.tui.widgets.paste_area import PasteArea
from assistant.tui.widgets.status_line import StatusLine

if TYPE_CHECKING:
    from assistant.tui.app import TrlHelpApp

#: files larger than this are parsed by streaming; the paste area shows their tail only
MAX_EDIT_BYTES = 2_000_000
TAIL_LINES = 3000


class MainScreen(Screen):
    DEFAULT_CSS = """
    MainScreen #results {
        height: 1fr;
    }
    MainScreen PasteArea {
        height: 40%;
    }
    MainScreen.-has-result PasteArea {
        height: 30%;
    }
    MainScreen CandidateList {
        width: 34;
        max-width: 45%;
    }
    """

    BINDINGS = [
        Binding("f5", "diagnose", "Diagnose", priority=True),
        Binding("ctrl+enter,ctrl+r", "diagnose", "Diagnose", show=False, priority=True),
        Binding("ctrl+o", "open_file", "Open", show=False, priority=True),
        Binding("c", "copy_fix", "Copy fix"),
        Binding("m", "copy_markdown", "Copy md"),
        Binding("v", "parsed", "Parsed"),
        Binding("p", "probe", "Probe"),
        Binding("ctrl+l", "clear", "Clear", show=False, priority=True),
    ]

    app: TrlHelpApp

    def __init__(self) -> None:
        super().__init__()
        self.report: Report | None = None
        self.diagnosis: Diagnosis | None = None
        self.selected: int | None = None
        self._generation = 0
        self._pending = False
        self._paste_timer: Timer | None = None
        #: (report, text shown) for a file too big to edit: used while the text is unchanged
        self._file_report: tuple[Report, str] | None = None

    # ------------------------------------------------------------------ layout
    def compose(self) -> ComposeResult:
        yield Header(icon="⚕")
        with Vertical(id="body"):
            yield PasteArea(id="paste")
            yield StatusLine(id="status")
            with Horizontal(id="results"):
                yield CandidateList(id="candidates")
                yield CaseView(INTRO, id="case")
        yield Footer(show_command_palette=False)

    @property
    def paste(self) -> PasteArea:
        return self.query_one(PasteArea)

    @property
    def status(self) -> StatusLine:
        return self.query_one(StatusLine)

    @property
    def candidates(self) -> CandidateList:
        return self.query_one(CandidateList)

    @property
    def case_view(self) -> CaseView:
        return self.query_one(CaseView)

    def on_mount(self) -> None:
        self.paste.focus()
        if self.app.engine is None:
            self.status.set(
                "Loading the matcher … (the first run builds an index; later ones take seconds). Paste away meanwhile.",
                busy=True,
            )
            self.case_view.loading = True
            self.run_worker(self._load_engine, thread=True, group="engine", name="load engine")
        else:
            self.status.set("Ready. Paste a traceback or a log, then F5.")
        initial_file = self.app.initial_file
        if initial_file is not None:
            self.load_file(initial_file)
        elif self.app.initial_text:
            self.paste.set_text(self.app.initial_text)
            self.action_diagnose()

    # ------------------------------------------------------------------ engine
    def _load_engine(self) -> None:
        try:
            engine = self.app.engine_loader()
        except Exception as exc:  # noqa: BLE001 - shown in the status line
            self.post_message(EngineFailed(f"{type(exc).__name__}: {exc}"))
        else:
            self.post_message(EngineReady(engine))

    def on_engine_ready(self, message: EngineReady) -> None:
        self.app.engine = message.engine
        self.case_view.loading = False
        self.status.set("Matcher loaded. Paste a traceback or a log, then F5.", tone="ok")
        self.refresh_bindings()
        if self._pending:
            self._pending = False
            self.action_diagnose()

    def on_engine_failed(self, message: EngineFailed) -> None:
        self.case_view.loading = False
        self._pending = False
        self.status.set(f"Could not load the matcher: {message.error}", tone="error")

    # ------------------------------------------------------------------ input
    def load_file(self, path: Path) -> None:
        """Put *path* in the paste area (its tail when huge) and diagnose it."""
        from assistant.parse import InputError, parse_file

        path = Path(path).expanduser()
        try:
            size = path.stat().st_size
            with path.open("rb") as fh:
                gzipped = fh.read(2) == b"\x1f\x8b"
            if gzipped:  # decoded and parsed like `explain` does; the tail is shown
                report = parse_file(path)
                text = "\n".join(report.text.splitlines()[-TAIL_LINES:])
                self._file_report = (report, text)
            elif size <= MAX_EDIT_BYTES:
                from assistant.parse.decode import decode_bytes

                text = decode_bytes(path.read_bytes())  # UTF-16, latin-1; binary refused
                self._file_report = None
            else:
                report = parse_file(path)
                with path.open("rb") as fh:
                    fh.seek(max(0, size - MAX_EDIT_BYTES // 2))
                    tail = fh.read().decode("utf-8", errors="replace").splitlines()[-TAIL_LINES:]
                text = "\n".join(tail)
                self._file_report = (report, text)
        except (OSError, InputError) as exc:
            self.status.set(f"Cannot read {path}: {exc}", tone="error")
            return
        self.paste.set_text(text)
        self.paste.border_title = f"{path.name}" + (" (tail; diagnosed in full)" if self._file_report else "")
        self.action_diagnose()

    def on_pasted(self, message: Pasted) -> None:
        message.stop()
        if self._paste_timer is not None:
            self._paste_timer.stop()
        self._paste_timer = self.set_timer(self.app.paste_settle_s, self._paste_settled)

    def _paste_settled(self) -> None:
        self._paste_timer = None
        self.action_diagnose()

    def on_paste(self, event: events.Paste) -> None:
        # a paste while the results have focus replaces the text: a new report to diagnose
        if isinstance(self.focused, PasteArea) or not event.text.strip():
            return
        self.paste.set_text(event.text)
        self.paste.focus()
        self.post_message(Pasted())

    # ------------------------------------------------------------------ diagnosis
    def action_diagnose(self) -> None:
        if self._paste_timer is not None:  # a diagnosis on demand supersedes a pending paste
            self._paste_timer.stop()
            self._paste_timer = None
        text = self.paste.text
        if not text.strip():
            self.status.set("Nothing to diagnose yet: paste a traceback or a log (or ctrl+o).", tone="warn")
            return
        engine = self.app.engine
        if engine is None:
            self._pending = True
            self.status.set("Will diagnose as soon as the matcher is loaded …", busy=True)
            return
        self._generation += 1
        gen = self._generation
        file_report = self._file_report[0] if self._file_report and self._file_report[1] == text else None
        self.status.set("Diagnosing …", busy=True)
        self.run_worker(
            lambda: self._diagnose(engine, text, file_report, gen),
            thread=True,
            group="diagnose",
            exclusive=True,
            name="diagnose",
        )

    def _diagnose(self, engine: Any, text: str, report: Report | None, gen: int) -> None:
        from assistant.parse import parse_text

        try:
            report = report if report is not None else parse_text(text)
            diagnosis = engine.diagnose(report, top=self.app.top)
        except Exception as exc:  # noqa: BLE001 - shown in the status line
            self.post_message(DiagnosisFailed(f"{type(exc).__name__}: {exc}", gen))
        else:
            self.post_message(DiagnosisReady(report, diagnosis, gen))

    def on_diagnosis_failed(self, message: DiagnosisFailed) -> None:
        if message.generation == self._generation:
            self.status.set(f"Diagnosis failed: {message.error}", tone="error")

    def on_diagnosis_ready(self, message: DiagnosisReady) -> None:
        if message.generation != self._generation:
            return  # a newer request is running
        self.report, self.diagnosis = message.report, message.diagnosis
        d = message.diagnosis
        self.add_class("-has-result")
        self.selected = None
        self.candidates.show(d)
        if d.verdict == "match" and d.matches:
            top = d.matches[0]
            self.status.set(
                f"Match: {top.case_id} ({top.confidence}, {top.score:.2f}). ↑↓ other candidates · c copy fix · p probe",
                tone="ok",
            )
            self._select(0)
        else:
            what = f"{d.error.exception}" if d.error is not None else "no exception found"
            self.status.set(f"No known case ({what}). Nearest related cases are listed, low confidence.", tone="warn")
            self.case_view.show(no_case_markdown(d), title="No known case")
        # a match: the list has focus (keys c / m / p act on it); no known case: the answer
        # text has it, and the related cases wait until the user moves into the list
        (self.candidates if d.verdict == "match" else self.case_view).focus()
        self.refresh_bindings()

    # ------------------------------------------------------------------ selection
    @on(CaseSelected)
    def _case_selected(self, message: CaseSelected) -> None:
        if self.diagnosis is None or not (0 <= message.index < len(self.diagnosis.matches)):
            return
        if message.index == self.selected:
            return
        self._select(message.index)

    def _select(self, index: int) -> None:
        d = self.diagnosis
        assert d is not None
        self.selected = index
        m = d.matches[index]
        related = d.verdict != "match"
        note = None
        if m.probe and self.app.probe_runner is None:
            note = "This case has a probe, but probes are unavailable here (the `probes` package is not importable)."
        self.case_view.show(
            case_markdown(m, related=related, probe_note=note),
            title=f"{'Related' if related else 'Candidate'} {index + 1}/{len(d.matches)}",
        )
        self.refresh_bindings()

    @property
    def current_match(self) -> Match | None:
        if self.diagnosis is None or self.selected is None:
            return None
        return self.diagnosis.matches[self.selected]

    # ------------------------------------------------------------------ actions
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("copy_fix", "probe"):
            m = self.current_match
            if m is None or (action == "probe" and not m.probe):
                return None  # shown, greyed out
        if action in ("copy_markdown", "parsed") and self.diagnosis is None:
            return None
        return True

    def action_focus_results(self) -> None:
        self.candidates.focus()

    def action_copy_fix(self) -> None:
        m = self.current_match
        if m is None:
            return
        self.app.copy_to_clipboard(fix_text(m))
        self.notify(f"Fix for {m.case_id} copied to the clipboard.", title="Copied")

    def action_copy_markdown(self) -> None:
        if self.diagnosis is None:
            return
        from assistant.report.markdown import render_markdown

        self.app.copy_to_clipboard(render_markdown(self.diagnosis))
        self.notify("GitHub-ready markdown answer copied to the clipboard.", title="Copied")

    def action_parsed(self) -> None:
        if self.report is None:
            return
        from assistant.tui.screens.parsed import ParsedScreen

        self.app.push_screen(ParsedScreen(self.report))

    def action_probe(self) -> None:
        m = self.current_match
        if m is None:
            return
        if not m.probe:
            self.notify(f"{m.case_id} has no probe.", severity="warning")
            return
        runner = self.app.probe_runner
        if runner is None:
            self.notify(
                "Probes are unavailable here (the `probes` package is not importable).",
                title="Probes unavailable",
                severity="warning",
            )
            return
        from assistant.tui.screens.probe import ProbeDialog

        self.app.push_screen(ProbeDialog(m.case_id, runner))

    def action_open_file(self) -> None:
        from assistant.tui.screens.open_file import OpenFileScreen

        def opened(path: Path | None) -> None:
            if path is not None:
                self.load_file(path)

        self.app.push_screen(OpenFileScreen(), opened)

    def action_clear(self) -> None:
        self.paste.set_text("")
        self.paste.border_title = "Traceback / log"
        self._file_report = None
        self._generation += 1
        self.report = self.diagnosis = None
        self.selected = None
        self.remove_class("-has-result")
        self.candidates.clear()
        self.case_view.show(INTRO)
        self.status.set("Cleared. Paste a traceback or a log, then F5.")
        self.paste.focus()
        self.refresh_bindings()
