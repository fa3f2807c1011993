"""Real logs of healthy runs (kb/logs/healthy, built by scripts/make_logs.py): never a false alarm,
and the KB check that keeps symptom patterns off lines healthy runs print."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from assistant.kb.healthy import healthy_logs, patterns_firing_on_healthy
from assistant.parse import parse_text
from tests.conftest import KB_ROOT, ROOT, shared_reports

LOGS = sorted((KB_ROOT / "logs" / "healthy").glob("*.log"))


def test_corpus_is_large_and_varied():
    names = {p.stem for p in LOGS}
    assert len(names) >= 30
    for family in ("sft", "dpo", "grpo", "kto", "reward", "trainer", "ddp-"):
        assert any(n.startswith(family) for n in names), family


@pytest.mark.parametrize("path", LOGS, ids=[p.stem for p in LOGS])
def test_healthy_log_is_no_known_case(matcher, path):
    d = matcher.diagnose(parse_text(path.read_text(encoding="utf-8")), top=1)
    assert d.verdict == "no-known-case", (d.matches[0].case_id, d.matches[0].score, d.matches[0].evidence[:2])


def test_validate_names_a_pattern_that_fires_on_a_healthy_log(tmp_path):
    from assistant.kb.load import load_kb
    from assistant.kb.validate import validate

    root = tmp_path / "kb"
    case = "nccl-timeout-long-rank0-preprocessing"
    (root / "cases").mkdir(parents=True)
    text = (ROOT / "kb" / "cases" / f"{case}.yaml").read_text()
    text = text.replace("  log_patterns:\n", '  log_patterns:\n    - pattern: "Map: 100%"\n', 1)
    (root / "cases" / f"{case}.yaml").write_text(text)
    shutil.copytree(ROOT / "kb" / "fixtures" / case, root / "fixtures" / case)
    shutil.copytree(ROOT / "kb" / "logs", root / "logs")
    problems = [p for p in validate(load_kb(root)) if "healthy log" in p.message]
    assert [p.field for p in problems] == ["symptoms.log_patterns.0"]
    assert problems[0].file.endswith(f"{case}.yaml")


def test_bundled_patterns_stay_off_healthy_logs(kb):
    logs = healthy_logs(Path(KB_ROOT))
    assert logs
    assert {
        cid: patterns_firing_on_healthy(c, logs) for cid, c in kb.cases.items() if patterns_firing_on_healthy(c, logs)
    } == {}


from assistant.match.evaluate import bury as _bury  # noqa: E402


def test_reports_buried_in_real_logs_keep_their_top_case(matcher):
    from assistant.match.evaluate import burial_hosts

    hosts = burial_hosts(KB_ROOT)
    assert len(hosts) == 4
    same = total = 0
    for i, (_cid, text) in enumerate(shared_reports()):
        clean = matcher.rank(parse_text(text))[0].case_id
        buried = matcher.rank(parse_text(_bury(text, hosts[i % len(hosts)])))[0].case_id
        same += clean == buried
        total += 1
    print(f"buried in real logs: {same}/{total} keep the clean top case")
    assert same / total >= 0.95
