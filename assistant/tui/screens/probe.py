"""The probe dialog: model path, device, tiny replica; live output, progress, verdict, cancel.

The probe runs in a thread worker (it blocks on a subprocess); its output and status lines come
back as messages, so the UI never waits on it. Cancelling kills the probe's process group.
"""

from __future__ import annotations

from typing import Any

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Checkbox, Input, ProgressBar, RichLog, Select, Static

from assistant.tui.engine import ProbeCancelled, ProbeRunner
from assistant.tui.messages import ProbeFinished, ProbeOutput, ProbeStatus
from assistant.tui.render import VERDICT_STYLE, VERDICT_TEXT, probe_summary


class ProbeDialog(ModalScreen[Any]):
    """Dismissed with the ProbeResult of the last run (or None)."""

    DEFAULT_CSS = """
    ProbeDialog {
        align: center middle;
    }
    ProbeDialog > #dialog {
        width: 96%;
        max-width: 120;
        height: 96%;
        max-height: 40;
        border: round $primary;
        border-title-color: $text-primary;
        background: $surface;
        padding: 0 1;
    }
    ProbeDialog #probe-desc {
        height: auto;
        max-height: 2;
        color: $text-muted;
    }
    ProbeDialog #options {
        height: 3;
    }
    ProbeDialog #model { width: 1fr; }
    ProbeDialog #device { width: 13; }
    ProbeDialog #tiny { width: auto; }
    ProbeDialog #timeout { width: 9; }
    ProbeDialog #progress-row {
        height: 1;
    }
    ProbeDialog ProgressBar {
        width: auto;
        margin-right: 1;
    }
    ProbeDialog #probe-status {
        width: 1fr;
        height: 1;
        text-wrap: nowrap;
        text-overflow: ellipsis;
        color: $text-muted;
    }
    ProbeDialog RichLog {
        height: 1fr;
        min-height: 3;
        border: round $primary 40%;
        background: $background;
    }
    ProbeDialog #verdict {
        height: auto;
        max-height: 3;
        padding: 0 1;
    }
    ProbeDialog #verdict.-success { color: $text-success; background: $success-muted; }
    ProbeDialog #verdict.-warning { color: $text-warning; background: $warning-muted; }
    ProbeDialog #verdict.-error { color: $text-error; background: $error-muted; }
    ProbeDialog #verdict.-primary { color: $text-primary; background: $primary-muted; }
    ProbeDialog #buttons {
        height: 3;
        align-horizontal: right;
    }
    ProbeDialog #buttons Button {
        margin-left: 1;
        min-width: 10;
    }
    """

    BINDINGS = [
        Binding("escape", "escape", "Cancel / close"),
        Binding("f5,ctrl+r", "run", "Run", priority=True),
    ]

    def __init__(self, case_id: str, runner: ProbeRunner) -> None:
        super().__init__()
        self.case_id = case_id
        self.runner = runner
        self.running = False
        self.result: Any = None
        try:
            self.description = (
                f"{runner.describe(case_id)}\nModel: a local dir (never downloaded)"
                "; empty = a built-in tiny Qwen2. CPU is fine."
            )
            self.steps = max(1, runner.phase_count(case_id))
        except LookupError as exc:
            self.description = str(exc)
            self.steps = 1
        self._step = 0

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog") as dialog:
            dialog.border_title = f"Probe · {self.case_id}"
            yield Static(self.description, id="probe-desc", markup=False)
            with Horizontal(id="options"):
                yield Input(placeholder="model dir (optional)", id="model")
                yield Select(
                    [("auto", "auto"), ("cpu", "cpu"), ("cuda", "cuda")], value="auto", allow_blank=False, id="device"
                )
                yield Checkbox("tiny replica", id="tiny")
                yield Input("180", type="number", id="timeout", tooltip="seconds per phase")
            with Horizontal(id="progress-row"):
                yield ProgressBar(total=self.steps, show_eta=False, id="progress")
                yield Static("Ready: F5 or Run starts the probe.", id="probe-status", markup=False)
            yield RichLog(id="probe-log", max_lines=5000, wrap=False, markup=False, highlight=False)
            yield Static("", id="verdict", markup=False)
            with Horizontal(id="buttons"):
                yield Button("Run", variant="primary", id="run")
                yield Button("Cancel", variant="error", id="cancel", disabled=True)
                yield Button("Close", id="close")

    def on_mount(self) -> None:
        self.query_one("#run", Button).focus()

    def on_unmount(self) -> None:
        # closing the dialog or quitting the app never leaves a probe running
        if self.running:
            self.runner.cancel()

    # ------------------------------------------------------------------ actions
    def _set_status(self, text: str) -> None:
        self.query_one("#probe-status", Static).update(text)

    def _set_running(self, running: bool) -> None:
        self.running = running
        self.query_one("#run", Button).disabled = running
        self.query_one("#cancel", Button).disabled = not running
        for sel in ("#model", "#device", "#tiny", "#timeout"):
            self.query_one(sel).disabled = running

    def action_run(self) -> None:
        if self.running:
            return
        model = self.query_one("#model", Input).value.strip() or None
        device = str(self.query_one("#device", Select).value)
        tiny = self.query_one("#tiny", Checkbox).value
        try:
            timeout = float(self.query_one("#timeout", Input).value or 180)
        except ValueError:
            timeout = 180.0
        verdict = self.query_one("#verdict", Static)
        if tiny and not model:
            verdict.update("A tiny replica is built from a model's config: give a model dir.")
            self._verdict_class("warning")
            return
        verdict.update("")
        self._verdict_class(None)
        self.query_one(RichLog).clear()
        self._step = 0
        bar = self.query_one(ProgressBar)
        bar.update(total=self.steps, progress=0)
        self._set_running(True)
        self._set_status("starting …")
        self.query_one("#cancel", Button).focus()
        runner, case_id = self.runner, self.case_id

        def work() -> None:
            try:
                result = runner.run(
                    case_id,
                    model=model,
                    tiny_replica=tiny,
                    device=device,
                    timeout=timeout,
                    on_output=lambda line: None if self.post_message(ProbeOutput(line)) else None,
                    on_status=lambda text: None if self.post_message(ProbeStatus(text)) else None,
                )
            except ProbeCancelled:
                self.post_message(ProbeFinished(cancelled=True))
            except LookupError as exc:
                self.post_message(ProbeFinished(error=str(exc).strip("'\"")))
            except Exception as exc:  # noqa: BLE001 - shown in the dialog
                self.post_message(ProbeFinished(error=f"{type(exc).__name__}: {exc}"))
            else:
                self.post_message(ProbeFinished(result=result))

        self.run_worker(work, thread=True, group="probe", exclusive=True, name="probe")

    def action_cancel(self) -> None:
        if self.running:
            self._set_status("cancelling …")
            self.runner.cancel()

    def action_escape(self) -> None:
        if self.running:
            self.action_cancel()
        else:
            self.dismiss(self.result)

    @on(Button.Pressed, "#run")
    def _run_pressed(self) -> None:
        self.action_run()

    @on(Button.Pressed, "#cancel")
    def _cancel_pressed(self) -> None:
        self.action_cancel()

    @on(Button.Pressed, "#close")
    def _close_pressed(self) -> None:
        if self.running:
            self.runner.cancel()
        self.dismiss(self.result)

    @on(Input.Submitted)
    def _submitted(self) -> None:
        self.action_run()

    # ------------------------------------------------------------------ probe events
    def on_probe_output(self, message: ProbeOutput) -> None:
        self.query_one(RichLog).write(message.line)

    def on_probe_status(self, message: ProbeStatus) -> None:
        self._step = min(self._step + 1, self.steps - 1) if self.steps > 1 else 0
        self.query_one(ProgressBar).update(progress=self._step)
        self._set_status(message.text)
        self.query_one(RichLog).write(f"▶ {message.text}")

    def _verdict_class(self, tone: str | None) -> None:
        v = self.query_one("#verdict", Static)
        for t in ("success", "warning", "error", "primary"):
            v.set_class(t == tone, f"-{t}")

    def on_probe_finished(self, message: ProbeFinished) -> None:
        self._set_running(False)
        self.query_one("#run", Button).focus()
        verdict = self.query_one("#verdict", Static)
        log = self.query_one(RichLog)
        bar = self.query_one(ProgressBar)
        if message.cancelled:
            self._set_status("cancelled")
            verdict.update("Cancelled: the probe's processes were stopped.")
            self._verdict_class("warning")
            return
        if message.error is not None:
            self._set_status("failed")
            verdict.update(f"Could not run the probe: {message.error}")
            self._verdict_class("error")
            return
        result = self.result = message.result
        bar.update(progress=self.steps)
        v = getattr(result.verdict, "value", str(result.verdict))
        seconds = getattr(result, "seconds", 0.0) or 0.0
        self._set_status(f"done in {seconds:.1f} s")
        for line in probe_summary(result):
            log.write(line)
        verdict.update(f"Verdict: {VERDICT_TEXT.get(v, v)}")
        self._verdict_class(VERDICT_STYLE.get(v, "primary"))
