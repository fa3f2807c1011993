"""Pilot tests of the TUI: real reports with the real matcher, the no-known-case path, the
loading state, clipboard, parsed view, help, and the probe dialog (fake and real probe)."""

from __future__ import annotations

import asyncio
import os
import threading
import time

import pytest
from textual import events

from assistant.tui.app import TrlHelpApp
from assistant.tui.engine import ProbeRunner, default_probe_runner
from assistant.tui.render import case_markdown, fix_text, no_case_markdown, parsed_markdown
from assistant.tui.screens.help import HelpScreen
from assistant.tui.screens.parsed import ParsedScreen
from assistant.tui.screens.probe import ProbeDialog
from tests.conftest import oos_reports, report_for
from tests.tui_fakes import FakeEngine, FakeProbeRunner

SIZE = (80, 24)

ZERO3 = """\
Traceback (most recent call last):
  File "/opt/conda/lib/python3.11/site-packages/trl/trainer/grpo_trainer.py", line 812, in _generate
    with unwrap_model_for_generation(self.model, self.accelerator) as unwrapped_model:
AttributeError: 'Qwen2ForCausalLM' object has no attribute 'optimizer'
"""


async def until(pilot, cond, timeout: float = 30.0) -> None:
    """Let the app run until *cond()* holds (workers post their results as messages)."""
    end = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > end:
            raise AssertionError("condition not reached in time")
        await pilot.pause(0.05)


def paste(app: TrlHelpApp, text: str) -> None:
    """A terminal (bracketed) paste into the paste area."""
    app.main.paste.post_message(events.Paste(text))


@pytest.fixture(scope="module")
def real_engine(matcher):
    return matcher  # the engine explain and triage use


# --------------------------------------------------------------------------- real matcher


@pytest.mark.parametrize("case_id", ["grpo-zero3-unwrapped-model-no-optimizer", "ddp-reentrant-gc-mark-ready-twice"])
def test_real_report_paste_puts_right_case_first(real_engine, case_id):
    async def go():
        app = TrlHelpApp(engine=real_engine, probe_runner=None, paste_settle_s=0.05)
        async with app.run_test(size=SIZE) as pilot:
            main = app.main
            paste(app, report_for(case_id))  # no key pressed: diagnosis after the paste settles
            await until(pilot, lambda: main.diagnosis is not None)
            await until(pilot, lambda: app.focused is main.candidates)  # focus moves to the list
            d = main.diagnosis
            assert d.verdict == "match"
            assert d.matches[0].case_id == case_id
            assert main.candidates.option_count == len(d.matches) >= 2
            assert main.candidates.highlighted == 0
            case = real_engine.kb.cases[case_id]
            source = main.case_view.source
            assert case.title in source and "### Cause" in source and "### Fix" in source
            assert case.references[0].url in source
            assert case_id in main.status.text and app.focused is main.candidates
            # the fix / markdown answer go to the clipboard
            await pilot.press("c")
            assert app.clipboard == fix_text(d.matches[0])
            await pilot.press("m")
            assert app.clipboard.startswith("**Error:**") and case.title in app.clipboard
            # another candidate
            await pilot.press("down")
            await pilot.pause()
            assert main.selected == 1 and d.matches[1].title in main.case_view.source

    asyncio.run(go())


def test_real_out_of_scope_report_says_no_known_case(real_engine):
    from assistant.parse import parse_text

    # the first out-of-scope report the matcher itself answers "no known case" (most are)
    text = next((t for t in oos_reports() if real_engine.diagnose(parse_text(t)).verdict == "no-known-case"), None)
    assert text, "no out-of-scope report is answered 'no known case' by the matcher"

    async def go():
        app = TrlHelpApp(engine=real_engine, probe_runner=None)
        async with app.run_test(size=SIZE) as pilot:
            main = app.main
            main.paste.load_text(text)
            await pilot.press("f5")
            await until(pilot, lambda: main.diagnosis is not None)
            assert main.diagnosis.verdict == "no-known-case"
            assert main.case_view.source.startswith("## No known case")
            assert "Nearest related" in main.case_view.source
            assert main.status.text.startswith("No known case")
            assert main.candidates.border_title == "Nearest related"
            assert main.selected is None  # nothing presented as the answer

    asyncio.run(go())


# --------------------------------------------------------------------------- fake engine


def test_no_known_case_with_fake_engine():
    async def go():
        app = TrlHelpApp(engine=FakeEngine(), probe_runner=None)
        async with app.run_test(size=SIZE) as pilot:
            main = app.main
            main.paste.load_text("Traceback (most recent call last):\nValueError: something new\n")
            await pilot.press("ctrl+r")
            await until(pilot, lambda: main.diagnosis is not None)
            assert main.diagnosis.verdict == "no-known-case"
            src = main.case_view.source
            assert "## No known case" in src and "ValueError: something new" in src
            assert "demo-ddp-mark-ready-twice" in src  # nearest related, listed
            assert app.focused is main.case_view and main.selected is None
            # reading a related case says it is not a diagnosis
            await pilot.press("shift+tab", "down")
            await pilot.pause()
            assert main.selected is not None
            assert "Low-confidence related case, not a diagnosis" in main.case_view.source

    asyncio.run(go())


def test_loading_state_and_pending_diagnosis():
    gate = threading.Event()
    engine = FakeEngine()

    def loader():
        gate.wait(10)
        return engine

    async def go():
        app = TrlHelpApp(engine_loader=loader, probe_runner=None)
        async with app.run_test(size=SIZE) as pilot:
            main = app.main
            await pilot.pause()
            assert main.case_view.loading and "Loading the matcher" in main.status.text
            assert main.status.has_class("-busy")
            main.paste.load_text(ZERO3)
            await pilot.press("f5")  # UI answers while the engine loads
            assert "as soon as the matcher is loaded" in main.status.text
            await pilot.press("f1")
            assert isinstance(app.screen, HelpScreen)
            await pilot.press("escape")
            gate.set()
            await until(pilot, lambda: main.diagnosis is not None)
            assert not main.case_view.loading
            assert main.diagnosis.matches[0].case_id == "demo-zero3-unwrapped-model"

    asyncio.run(go())


def test_engine_load_failure_is_shown():
    def loader():
        raise ValueError("the KB has problems")

    async def go():
        app = TrlHelpApp(engine_loader=loader, probe_runner=None)
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: "Could not load" in app.main.status.text)
            assert app.main.status.has_class("-error") and not app.main.case_view.loading

    asyncio.run(go())


def test_opened_with_file_diagnoses_at_startup(tmp_path):
    log = tmp_path / "train.log"
    log.write_text("step 1 loss 0.5\n" + ZERO3)

    engine = FakeEngine()

    async def go():
        app = TrlHelpApp(engine=engine, probe_runner=None, initial_file=log, paste_settle_s=0.05)
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: app.main.diagnosis is not None)
            assert app.main.diagnosis.matches[0].case_id == "demo-zero3-unwrapped-model"
            assert app.main.paste.border_title == "train.log"
            await pilot.pause(0.3)
            assert engine.calls == 1  # loading the file is not mistaken for a paste

    asyncio.run(go())


@pytest.mark.parametrize("kind", ["gzip", "utf-16"])
def test_gzip_and_utf16_logs_are_read_like_explain_reads_them(tmp_path, kind):
    import gzip

    log = tmp_path / f"train.log{'.gz' if kind == 'gzip' else ''}"
    text = "step 1 loss 0.5\n" + ZERO3
    log.write_bytes(gzip.compress(text.encode()) if kind == "gzip" else text.encode("utf-16"))

    async def go():
        app = TrlHelpApp(engine=FakeEngine(), probe_runner=None, initial_file=log, paste_settle_s=0.05)
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: app.main.diagnosis is not None)
            assert app.main.diagnosis.matches[0].case_id == "demo-zero3-unwrapped-model"

    asyncio.run(go())


def test_binary_file_is_refused_with_a_message(tmp_path):
    blob = tmp_path / "model.bin"
    blob.write_bytes(bytes(range(256)) * 64)

    async def go():
        app = TrlHelpApp(engine=FakeEngine(), probe_runner=None, initial_file=blob, paste_settle_s=0.05)
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: "Cannot read" in app.main.status.text)
            assert "binary" in app.main.status.text and app.main.diagnosis is None

    asyncio.run(go())


def test_large_insertion_without_bracketed_paste_is_diagnosed():
    async def go():
        app = TrlHelpApp(engine=FakeEngine(), probe_runner=None, paste_settle_s=0.05)
        async with app.run_test(size=SIZE) as pilot:
            app.main.paste.insert(ZERO3)  # what a terminal without bracketed paste produces
            await until(pilot, lambda: app.main.diagnosis is not None)
            assert app.main.diagnosis.verdict == "match"

    asyncio.run(go())


def test_open_file_dialog(tmp_path):
    log = tmp_path / "x.log"
    log.write_text(ZERO3)

    async def go():
        app = TrlHelpApp(engine=FakeEngine(), probe_runner=None)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("ctrl+o")
            await pilot.pause()
            app.screen.query_one("#open-path").value = str(tmp_path / "nope.log")
            await pilot.press("enter")
            assert "not a file" in str(app.screen.query_one("#open-error").content)
            app.screen.query_one("#open-path").value = str(log)
            await pilot.press("enter")
            await until(pilot, lambda: app.main.diagnosis is not None)
            assert app.main.paste.text == ZERO3

    asyncio.run(go())


def test_keys_parsed_view_help_clear_and_empty_input():
    async def go():
        app = TrlHelpApp(engine=FakeEngine(), probe_runner=None)
        async with app.run_test(size=SIZE) as pilot:
            main = app.main
            await pilot.press("f5")
            assert "Nothing to diagnose" in main.status.text
            # keys needing a diagnosis are inert before one
            await pilot.press("escape", "v", "c")
            assert app.screen is main and app.clipboard == ""
            main.paste.load_text(ZERO3)
            await pilot.press("f5")
            await until(pilot, lambda: main.diagnosis is not None)
            await pilot.press("v")
            assert isinstance(app.screen, ParsedScreen)
            md = app.screen.markdown
            assert "AttributeError" in md and "Frames" in md and "grpo_trainer.py" in md
            await pilot.press("escape")
            await pilot.press("question_mark")
            assert isinstance(app.screen, HelpScreen)
            await pilot.press("escape")
            assert app.screen is main
            await pilot.press("ctrl+l")
            assert main.paste.text == "" and main.diagnosis is None
            assert main.candidates.option_count == 0

    asyncio.run(go())


def test_typing_in_paste_area_is_not_taken_by_keys():
    async def go():
        app = TrlHelpApp(engine=FakeEngine(), probe_runner=None)
        async with app.run_test(size=SIZE) as pilot:
            main = app.main
            main.paste.load_text(ZERO3)
            await pilot.press("f5")
            await until(pilot, lambda: main.diagnosis is not None)
            main.paste.focus()
            await pilot.press("c", "m", "v", "p")
            assert "cmvp" in main.paste.text and app.screen is main

    asyncio.run(go())


def test_probes_unavailable_is_said():
    async def go():
        app = TrlHelpApp(engine=FakeEngine(), probe_runner=None)
        async with app.run_test(size=SIZE) as pilot:
            main = app.main
            main.paste.load_text(ZERO3)
            await pilot.press("f5")
            await until(pilot, lambda: main.diagnosis is not None)
            assert "probes are unavailable" in main.case_view.source
            await pilot.press("p")
            await pilot.pause()
            assert app.screen is main
            assert any("unavailable" in n.message for n in app._notifications)

    asyncio.run(go())


# --------------------------------------------------------------------------- probe dialog


def test_probe_dialog_streams_and_gives_verdict_fake_runner():
    runner = FakeProbeRunner(lines=30)

    async def go():
        app = TrlHelpApp(engine=FakeEngine(), probe_runner=runner)
        async with app.run_test(size=SIZE) as pilot:
            main = app.main
            main.paste.load_text(ZERO3)
            await pilot.press("f5")
            await until(pilot, lambda: main.diagnosis is not None)
            await pilot.press("p")
            dialog = app.screen
            assert isinstance(dialog, ProbeDialog)
            dialog.query_one("#device").value = "cpu"
            await pilot.press("f5")
            await until(pilot, lambda: dialog.result is not None)
            log = dialog.query_one("#probe-log")
            text = "\n".join(str(line.text) for line in log.lines)
            assert "output line 29" in text and "baseline: symptom" in text
            assert str(dialog.query_one("#verdict").content).startswith("Verdict: confirmed")
            assert dialog.query_one("#verdict").has_class("-success")
            assert dialog.query_one("#progress").percentage == 1.0
            assert runner.calls[0]["device"] == "cpu" and runner.calls[0]["model"] is None
            await pilot.press("escape")
            assert app.screen is main

    asyncio.run(go())


def test_probe_dialog_cancel_keeps_ui_alive():
    runner = FakeProbeRunner(block=True, interval_s=0.02)

    async def go():
        app = TrlHelpApp(engine=FakeEngine(), probe_runner=runner)
        async with app.run_test(size=SIZE) as pilot:
            app.push_screen(ProbeDialog("demo-zero3-unwrapped-model", runner))
            await pilot.pause()
            dialog = app.screen
            await pilot.click("#run")
            await until(pilot, lambda: len(dialog.query_one("#probe-log").lines) > 10)
            assert dialog.running and not dialog.query_one("#cancel").disabled
            assert dialog.query_one("#model").disabled
            # tiny replica without a model is refused before running anything
            await pilot.press("escape")  # cancels, does not close
            await until(pilot, lambda: not dialog.running)
            assert app.screen is dialog
            assert str(dialog.query_one("#verdict").content).startswith("Cancelled")
            dialog.query_one("#tiny").value = True
            await pilot.press("f5")
            assert "give a model dir" in str(dialog.query_one("#verdict").content)
            assert len(runner.calls) == 1
            await pilot.press("escape")
            assert app.screen is app.main

    asyncio.run(go())


@pytest.mark.skipif(default_probe_runner() is None, reason="probes.harness not importable")
def test_probe_dialog_runs_real_probe_on_cpu():
    """The built-in tiny model, CPU, the real harness: streaming output and a verdict."""
    runner: ProbeRunner = default_probe_runner()  # type: ignore[assignment]
    case_id = "tokenizer-missing-pad-token"
    assert runner.has_probe(case_id)

    async def go():
        app = TrlHelpApp(engine=FakeEngine(), probe_runner=runner)
        async with app.run_test(size=SIZE) as pilot:
            app.push_screen(ProbeDialog(case_id, runner))
            await pilot.pause()
            dialog = app.screen
            dialog.query_one("#device").value = "cpu"
            await pilot.press("f5")
            await until(pilot, lambda: not dialog.running and dialog.query_one("#verdict").content, timeout=240)
            verdict = str(dialog.query_one("#verdict").content)
            assert dialog.result is not None, verdict
            assert dialog.result.verdict.value in ("confirmed", "not-reproduced"), dialog.result.notes
            assert verdict.startswith("Verdict: ")
            log = "\n".join(str(line.text) for line in dialog.query_one("#probe-log").lines)
            assert "▶ tokenizer-checks: baseline" in log and "── baseline" in log

    asyncio.run(go())


def test_cancel_finds_the_probe_subprocesses():
    """Cancelling kills the probe worker's descendants (phases run in their own groups)."""
    import subprocess
    import sys

    from assistant.tui.engine import _descendants

    parent = subprocess.Popen([sys.executable, "-c", "import subprocess, sys; subprocess.run(['sleep', '30'])"])
    try:
        deadline = time.monotonic() + 10
        while not _descendants(parent.pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _descendants(parent.pid), "the grandchild was not found"
    finally:
        for pid in _descendants(parent.pid):
            os.kill(pid, 9)
        parent.kill()
        parent.wait()


def test_quitting_during_a_probe_cancels_it():
    runner = FakeProbeRunner(block=True, interval_s=0.02)

    async def go():
        app = TrlHelpApp(engine=FakeEngine(), probe_runner=runner)
        async with app.run_test(size=SIZE) as pilot:
            app.push_screen(ProbeDialog("demo-zero3-unwrapped-model", runner))
            await pilot.pause()
            await pilot.press("f5")
            await until(pilot, lambda: runner.started.is_set())
            await pilot.press("ctrl+q")
        assert runner._cancel.is_set()

    asyncio.run(go())


# --------------------------------------------------------------------------- pure builders


def test_render_builders():
    from assistant.parse import parse_text

    engine = FakeEngine()
    report = parse_text(ZERO3)
    d = engine.diagnose(report)
    m = d.matches[0]
    md = case_markdown(m)
    assert "### Cause" in md and "unwrap_model_for_generation(self.model_wrapped" in md
    assert "```python" in md and "```bash" in md and "<https://github.com/huggingface/trl/pull/2>" in md
    assert "Press `p`" in md
    assert fix_text(m).startswith("with unwrap_model_for_generation")
    assert fix_text(m.model_copy(update={"fixes": []})) == m.fix + "\n"
    nc = no_case_markdown(engine.diagnose(parse_text("ValueError: nope")))
    assert nc.startswith("## No known case") and "Nearest related" in nc
    pm = parsed_markdown(report)
    assert "AttributeError" in pm and "## Environment" in pm and "## Frames" in pm
    # evidence with backticks stays inside its fence
    m2 = m.model_copy(update={"evidence": ["x = ```oops```"]})
    assert "````text" in case_markdown(m2)
