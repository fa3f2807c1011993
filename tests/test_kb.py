"""The KB: schema, validator, and one-line errors for malformed cases."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from assistant.kb.load import load_case_file, load_kb
from assistant.kb.validate import validate
from tests.conftest import KB_ROOT, ROOT

EXEMPLAR = ROOT / "kb" / "cases" / "lora-gradient-checkpointing-no-grad.yaml"


def test_bundled_kb_validates(kb):
    assert [str(p) for p in validate(kb)] == []


def test_every_positive_fixture_names_its_source(kb):
    for cid, case in kb.cases.items():
        assert case.fixtures.positive, cid
        for fx in case.fixtures.positive:
            assert fx.source and fx.source.startswith("https://"), (cid, fx)


def test_negatives_do_not_match_own_message_patterns(kb):
    """Read as the matcher reads a report (error chain, then the evidence text)."""
    from assistant.kb.validate import _matched_message_lines

    for cid, case in kb.cases.items():
        for text, _ in kb.negatives[cid]:
            assert not _matched_message_lines(case, text), cid


def test_negative_check_reads_a_notice_as_the_matcher_does(kb):
    """ms-swift 2.x's notice quotes a swift.llm ImportError it would raise (ms-swift#1898): the
    raw text matches the case's pattern, the matcher's reading of it does not; the same message
    raised is still caught."""
    from assistant.kb.validate import _matched_message_lines
    from assistant.match.symptoms import message_hits

    case = kb.cases["ms-swift-python-api-major-version"]
    notice = (
        "[INFO:swift] No vLLM installed, if you are using vLLM, you will get "
        "`ImportError: cannot import name 'get_vllm_engine' from 'swift.llm'`\n"
    )
    assert message_hits(case, notice)
    assert not _matched_message_lines(case, notice)
    assert _matched_message_lines(case, "ImportError: cannot import name 'get_vllm_engine' from 'swift.llm'\n")


def _kb_copy(tmp_path: Path) -> Path:
    root = tmp_path / "kb"
    (root / "cases").mkdir(parents=True)
    shutil.copy(EXEMPLAR, root / "cases")
    shutil.copytree(ROOT / "kb" / "fixtures" / EXEMPLAR.stem, root / "fixtures" / EXEMPLAR.stem)
    shutil.copy(ROOT / "kb" / "releases.json", root / "releases.json")
    return root


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "assistant.cli.main", *args], capture_output=True, text=True)


@pytest.mark.parametrize(
    "edit,field",
    [
        (lambda s: s.replace("symptoms:\n", "symptoms: [\n", 1), "line"),
        (lambda s: s.replace("cause: >-", "causes: >-", 1), "cause"),
        (
            lambda s: s.replace('pattern: "element 0', 'kind: regex\n      pattern: "(element 0', 1),
            "symptoms.messages.0",
        ),
        (lambda s: s.replace("probe: lora-gradient-checkpointing-no-grad", "probe: no-such-probe"), "probe"),
        (
            lambda s: s.replace(
                "references:\n", 'references:\n  - {type: fix, url: "htps:/github.com/x/y/pull/1"}\n', 1
            ),
            "references.0.url",
        ),
        (lambda s: s.replace('fixed: "0.22.0"', 'fixed: "zero"'), "affected.0.ranges.0"),
        (lambda s: s.replace('fixed: "0.22.0"', 'fixed: "0.22.7"'), "affected.0.ranges.0.fixed"),
        (lambda s: s.replace('fixed: "0.22.0"', 'fixed: "0.23.0"'), "affected.0.ranges.0.fixed"),
        (
            lambda s: s.replace('pattern: "element 0', 'kind: regex\n      pattern: "(a+)+$|element 0', 1),
            "symptoms.messages.0",
        ),
        (
            lambda s: s.replace(
                "        RuntimeError: Expected to mark a variable ready only once.",
                "        RuntimeError: element 0 of tensors does not require grad and does not have a grad_fn\n"
                "        RuntimeError: Expected to mark a variable ready only once.",
                1,
            ),
            "fixtures.negative.0",
        ),
    ],
    ids=[
        "bad-yaml",
        "missing-field",
        "bad-regex",
        "unknown-probe",
        "bad-url",
        "bad-version",
        "unreleased-version",
        "unsourced-bound",
        "nested-quantifier",
        "negative-matches-own-pattern",
    ],
)
def test_malformed_case_gives_one_line_naming_file_and_field(tmp_path, edit, field):
    root = _kb_copy(tmp_path)
    path = root / "cases" / EXEMPLAR.name
    path.write_text(edit(path.read_text()))
    res = _cli("kb", "validate", str(root))
    assert res.returncode == 1
    lines = [ln for ln in res.stdout.splitlines() if str(path) in ln]
    assert lines, res.stdout + res.stderr
    assert any(f": {field}" in ln for ln in lines), lines
    assert "Traceback" not in res.stdout + res.stderr


def test_id_must_equal_file_stem(tmp_path):
    root = _kb_copy(tmp_path)
    (root / "cases" / EXEMPLAR.name).rename(root / "cases" / "other-name.yaml")
    case, problems = load_case_file(root / "cases" / "other-name.yaml")
    assert case is None and problems[0].field == "id"


def test_missing_fixture_file_is_reported(tmp_path):
    root = _kb_copy(tmp_path)
    (root / "fixtures" / EXEMPLAR.stem / "report-2.txt").unlink()
    kb = load_kb(root)
    assert any("fixtures.positive.1" == p.field for p in kb.problems)


def test_kb_list_and_show():
    res = _cli("kb", "list", "--label", "zero3")
    assert res.returncode == 0 and "grpo-zero3-unwrapped-model-no-optimizer" in res.stdout
    res = _cli("kb", "show", "grpo-loss-zero-expected")
    assert res.returncode == 0 and "Why" in res.stdout
    res = _cli("kb", "show", "no-such-case")
    assert res.returncode == 2 and res.stderr.count("\n") == 1


@pytest.mark.parametrize(
    "pattern,nested",
    [
        (r"(a+)+$", True),
        (r"(\w*\s?)*x", True),
        (r"(x{1,9})+", True),
        (r"(?:ab|c+)*d", True),
        (r"\w*reward\w*\(\) missing", False),
        (r"(a|b)+", False),
        (r"(abc)+", False),
        (r"(?s)(peft|adapter).{0,4000}?Cannot copy", False),
        (r"(\d+){2}", False),
    ],
)
def test_nested_quantifier_detection(pattern, nested):
    from assistant.kb.regex_safety import nested_quantifier

    assert nested_quantifier(pattern) is nested


def test_every_case_page_renders_its_text_verbatim():
    """`kb show` on every case: KB text (regexes such as `[/\\\\]`, `[report]` reference types) is
    printed as written, never read as terminal markup (a pattern with `[/\\\\]` used to crash it)."""
    import io

    from rich.console import Console

    from assistant.kb.load import load_kb
    from assistant.report.kb_render import render_case, render_case_list

    kb = load_kb(KB_ROOT)
    for case in kb.cases.values():
        buf = io.StringIO()
        render_case(case, Console(file=buf, width=200, color_system=None))
        out = "".join(buf.getvalue().split())  # long lines wrap: compare with all blanks removed
        assert "".join(case.title.split()) in out, case.id
        for p in case.symptoms.messages[:2]:
            assert "".join(p.pattern[:40].split()) in out, (case.id, p.pattern)
        for r in case.references[:1]:
            assert f"[{r.type.value}]" in out, case.id
    buf = io.StringIO()
    render_case_list(list(kb.cases.values()), Console(file=buf, width=400, color_system=None))
    assert f"{len(kb.cases)} case(s)" in buf.getvalue()
