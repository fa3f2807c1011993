"""Snapshot tests of the TUI's screens at 80×24 (pytest-textual-snapshot).

Deterministic engine and probe runner (tests/tui_fakes.py), so the pictures change only when
the UI does. Update with ``pytest tests/test_tui_snapshots.py --snapshot-update``.
"""

from __future__ import annotations

import time

from assistant.tui.app import TrlHelpApp
from assistant.tui.screens.probe import ProbeDialog
from tests.tui_fakes import FakeEngine, FakeProbeRunner

ZERO3 = """\
Traceback (most recent call last):
  File "/opt/conda/lib/python3.11/site-packages/trl/trainer/grpo_trainer.py", line 812, in _generate
    with unwrap_model_for_generation(self.model, self.accelerator) as unwrapped_model:
AttributeError: 'Qwen2ForCausalLM' object has no attribute 'optimizer'
"""


def make_app(theme: str | None = None) -> TrlHelpApp:
    app = TrlHelpApp(engine=FakeEngine(), probe_runner=FakeProbeRunner(lines=8))
    if theme:
        app.theme = theme
    return app


async def wait(pilot, cond, timeout: float = 20.0) -> None:
    end = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < end, "condition not reached"
        await pilot.pause(0.05)


async def diagnose(pilot, text: str = ZERO3) -> None:
    main = pilot.app.main
    main.paste.load_text(text)
    await pilot.press("f5")
    await wait(pilot, lambda: main.diagnosis is not None)
    await pilot.pause()


def test_snapshot_intro(snap_compare):
    assert snap_compare(make_app())


def test_snapshot_match(snap_compare):
    assert snap_compare(make_app(), run_before=diagnose)


def test_snapshot_match_light_theme(snap_compare):
    assert snap_compare(make_app("textual-light"), run_before=diagnose)


def test_snapshot_no_known_case(snap_compare):
    async def run_before(pilot):
        await diagnose(pilot, "Traceback (most recent call last):\nValueError: something new\n")

    assert snap_compare(make_app(), run_before=run_before)


def test_snapshot_parsed_view(snap_compare):
    async def run_before(pilot):
        await diagnose(pilot)
        await pilot.press("v")
        await pilot.pause()

    assert snap_compare(make_app(), run_before=run_before)


def test_snapshot_help(snap_compare):
    assert snap_compare(make_app(), press=["f1"])


def test_snapshot_probe_dialog(snap_compare):
    async def run_before(pilot):
        await diagnose(pilot)
        await pilot.press("p")
        await pilot.pause()

    assert snap_compare(make_app(), run_before=run_before)


def test_snapshot_probe_verdict(snap_compare):
    async def run_before(pilot):
        app = pilot.app
        app.push_screen(ProbeDialog("demo-zero3-unwrapped-model", app.probe_runner))
        await pilot.pause()
        dialog = app.screen
        await pilot.press("f5")
        await wait(pilot, lambda: dialog.result is not None)
        await pilot.pause()

    assert snap_compare(make_app(), run_before=run_before)
