"""One engine, one Diagnosis: `explain`, `triage` and the TUI give the same answer for the same
text, and the JSON document is self-contained (a reader needs no KB)."""

from __future__ import annotations

import asyncio
import json

import pytest

from assistant.cli.main import main
from assistant.match.diagnosis import SCHEMA_VERSION, Diagnosis
from tests.conftest import oos_reports, report_for

TEXTS = [
    report_for("ddp-reentrant-gc-mark-ready-twice"),
    report_for("grpo-zero3-unwrapped-model-no-optimizer"),
    oos_reports()[0],
]


def _explain_json(tmp_path, capsys, text: str) -> dict:
    f = tmp_path / "log.txt"
    f.write_text(text, encoding="utf-8")
    assert main(["explain", str(f), "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def _answer(matches: list) -> list[tuple[str, float, str]]:
    return [(m["case_id"], m["score"], m["confidence"]) for m in matches]


@pytest.mark.parametrize("i", range(len(TEXTS)))
def test_explain_triage_and_tui_agree(matcher, tmp_path, capsys, i):
    from assistant.triage.inputs import load_issues
    from assistant.triage.run import Options, triage
    from assistant.tui.app import TrlHelpApp

    text = TEXTS[i]
    doc = _explain_json(tmp_path, capsys, text)

    export = tmp_path / "issues.json"
    export.write_text(json.dumps([{"number": 1, "title": "", "body": text, "labels": []}]))
    res = triage(load_issues(export), matcher, Options(use_cache=False))
    issue = res.issues[0]
    assert issue.verdict == doc["verdict"]
    assert _answer([m.model_dump(mode="json") for m in issue.matches]) == _answer(doc["matches"])

    async def tui() -> Diagnosis:
        app = TrlHelpApp(engine=matcher, probe_runner=None, initial_text=text)
        async with app.run_test(size=(100, 30)) as pilot:
            for _ in range(400):
                if app.main.diagnosis is not None:
                    break
                await pilot.pause(0.05)
            assert app.main.diagnosis is not None
            return app.main.diagnosis

    d = asyncio.run(tui())
    assert d.verdict == doc["verdict"]
    assert _answer([m.model_dump(mode="json") for m in d.matches]) == _answer(doc["matches"])


def test_json_document_is_self_contained(tmp_path, capsys, kb):
    doc = _explain_json(tmp_path, capsys, TEXTS[0])
    assert doc["schema_version"] == SCHEMA_VERSION
    Diagnosis.model_validate(doc)  # the documented contract round-trips
    top = doc["matches"][0]
    case = kb.cases[top["case_id"]]
    # what a reader needs is in the document, equal to the case it came from
    assert top["cause"] == case.cause.strip() and top["summary"] == case.summary.strip()
    assert [f["title"] for f in top["fixes"]] == [f.title for f in case.fixes]
    assert [r["url"] for r in top["references"]] == [r.url for r in case.references]
    assert top["version_packages"] == sorted({a.package for a in case.affected})


def test_every_format_renders_from_the_diagnosis_alone(matcher):
    from assistant.cli.explain import FORMAT_NAMES
    from assistant.parse import parse_text
    from assistant.report.formats import FORMATS

    assert tuple(FORMATS) == FORMAT_NAMES  # `--help` lists exactly the renderers that exist
    d = matcher.diagnose(parse_text(TEXTS[0]))
    # a Diagnosis that went through JSON (a cache, another process) renders the same
    again = Diagnosis.model_validate_json(d.model_dump_json())
    for name, render in FORMATS.items():
        out = render(again)
        assert isinstance(out, str) and out.endswith("\n"), name
        assert out == render(d), name
    assert d.matches[0].fixes[0].title in FORMATS["markdown"](d)


def test_fix_code_is_wrapped_not_cropped_in_a_narrow_terminal(matcher):
    """A fix's code line longer than the panel wraps; cropped code would be copied wrong."""
    import io

    from rich.console import Console

    from assistant.parse import parse_text
    from assistant.report.text import render_text

    d = matcher.diagnose(parse_text(TEXTS[0]))
    fx = next(f for m in d.matches for f in m.fixes if f.code)
    long_line = "x = " + "a_rather_long_identifier + " * 8 + "1"
    top = d.matches[0].model_copy(update={"fixes": [fx.model_copy(update={"code": long_line})]})
    d = d.model_copy(update={"matches": [top]})
    out = render_text(d, console=Console(file=io.StringIO(), width=80, color_system=None))
    assert max(len(line) for line in out.splitlines()) <= 80
    flat = "".join(line.strip(" │") for line in out.splitlines())
    assert long_line.replace(" ", "") in flat.replace(" ", "")
