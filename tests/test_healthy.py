"""Real logs of healthy runs (kb/logs/healthy, built by scripts/make_logs.py): never a false alarm,
and the KB check that keeps symptom patterns off lines healthy runs print."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from assistant.kb.healthy import all_healthy_logs, healthy_logs, patterns_firing_on_healthy
from assistant.parse import parse_text
from tests.conftest import KB_ROOT, ROOT, shared_reports

LOGS = sorted((KB_ROOT / "logs" / "healthy").glob("*.log"))
#: published logs of healthy runs the matcher derives nothing from (kb/logs/healthy-unseen)
UNSEEN = sorted((KB_ROOT / "logs" / "healthy-unseen").glob("*.log"))


def test_corpus_is_large_and_varied():
    names = {p.stem for p in LOGS}
    assert len(names) >= 30
    for family in ("sft", "dpo", "grpo", "kto", "reward", "trainer", "ddp-"):
        assert any(n.startswith(family) for n in names), family


def test_unseen_corpus_is_published_and_kept_out_of_the_background(kb):
    """The unseen logs are real published logs (each with its source) and none of their line shapes
    is known background unless the fitted corpus prints it too."""
    sources = (KB_ROOT / "logs" / "healthy-unseen" / "SOURCES.md").read_text(encoding="utf-8")
    assert len(UNSEEN) >= 15
    for p in UNSEEN:
        assert f"`{p.name}`" in sources, p.name
    verl = (KB_ROOT / "logs" / "healthy-unseen" / "verl-fsdp-sft-smollm135m.log").read_text(encoding="utf-8")
    from assistant.kb.healthy import line_key

    line = next(ln for ln in verl.splitlines() if "Flash Attention 2" in ln)
    assert line_key(line) not in kb.background


@pytest.mark.parametrize("path", LOGS + UNSEEN, ids=[f"{p.parent.name}/{p.stem}" for p in LOGS + UNSEEN])
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
    logs = all_healthy_logs(Path(KB_ROOT))
    assert len(logs) > len(healthy_logs(Path(KB_ROOT)))
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


def test_unseen_reports_buried_in_a_log_outside_our_corpus_keep_their_top_case(matcher):
    """Real reports the matcher never saw (the dev split), each buried in a real training log whose
    own lines are NOT known background (the host is left out of the healthy-line shapes, as a
    user's log would be): its warnings, deprecation notices and healthy metric lines must not move
    the answer. Before the query dropped healthy metric names and deprecation warnings, 9 of 86
    changed their top case."""
    from assistant.match.evaluate import burial_hosts, load_heldout, unseen_queries

    rows = load_heldout(KB_ROOT, "eval/dev.jsonl")
    alone = unseen_queries(matcher, rows, "alone")
    buried = unseen_queries(matcher, rows, "buried", burial_hosts(KB_ROOT))
    prob = matcher.model.prob
    same = sum(int(prob(a.X).argmax()) == int(prob(b.X).argmax()) for a, b in zip(alone, buried))
    print(f"dev reports buried in a log outside the background: {same}/{len(rows)} keep their top case")
    assert same / len(rows) >= 0.97


def test_query_keeps_metric_marks_and_drops_healthy_metrics_and_deprecations():
    """A run's metric lines enter the query only as marks (nan, a 0 where 0 means broken, ratios at
    1); a healthy run's values and deprecation warnings are background."""
    from assistant.match.query import metric_anomalies, query_text

    for name, text in healthy_logs(KB_ROOT):
        marks = metric_anomalies(parse_text(text).metric_series())
        assert "nan" not in marks and "learning_rate" not in marks, (name, marks)
    broken = parse_text(
        "{'loss': 0.0, 'grad_norm': nan, 'learning_rate': 1e-05, 'clipped_ratio': 1.0, 'epoch': 0.1}\n"
        "{'loss': 0.0, 'grad_norm': nan, 'learning_rate': 1e-05, 'clipped_ratio': 1.0, 'epoch': 0.2}\n"
    )
    marks = metric_anomalies(broken.metric_series())
    assert "loss 0" in marks and "grad_norm nan" in marks and "clipped_ratio 1" in marks
    assert "learning_rate" not in marks and "epoch" not in marks
    log = (
        "/x/transformers/modeling_utils.py:12: FutureWarning: `gradient_checkpointing` is deprecated and will be "
        "removed in v6.\n  warnings.warn(\nthe loss stays 0 and the rewards never move\n"
    )
    q = query_text(parse_text(log))
    assert "deprecated" not in q and "rewards never move" in q


def test_a_line_healthy_runs_print_counts_only_next_to_an_error(kb):
    """flash-attention-fp32-activations-lora's load-time dtype warning is printed by a healthy verl
    FSDP run that trains in fp32 masters with bf16 compute (kb/logs/healthy-unseen): alone it is no
    evidence; next to the error it still is. A case whose subject is the notice (no message
    patterns) keeps counting it alone."""
    from assistant.match.structural import structural

    verl = (KB_ROOT / "logs" / "healthy-unseen" / "verl-fsdp-sft-smollm135m.log").read_text(encoding="utf-8")
    warning = next(ln for ln in verl.splitlines() if "Flash Attention 2" in ln)
    fa = kb.cases["flash-attention-fp32-activations-lora"]
    assert fa.symptoms.log_patterns[0].seen_in_healthy_runs
    alone = parse_text(verl)
    assert structural(fa, alone, {}, set()).values["log"] == 0.0
    error = parse_text(
        warning + '\nTraceback (most recent call last):\n  File "train.py", line 3, in <module>\n    loss.backward()\n'
        "RuntimeError: expected scalar type Float but found BFloat16\n"
    )
    assert structural(fa, error, {}, set()).values["log"] == 1.0

    notice = kb.cases["use-cache-with-gradient-checkpointing-warning"]
    assert notice.symptoms.log_patterns[0].seen_in_healthy_runs and not notice.symptoms.messages
    warned = parse_text("`use_cache=True` is incompatible with gradient checkpointing. Setting `use_cache=False`.\n")
    assert structural(notice, warned, {}, set()).values["log"] == 1.0


def test_validate_exempts_only_patterns_marked_seen_in_healthy_runs(kb):
    logs = all_healthy_logs(Path(KB_ROOT))
    fa = kb.cases["flash-attention-fp32-activations-lora"]
    assert patterns_firing_on_healthy(fa, logs) == []
    unmarked = fa.model_copy(
        update={
            "symptoms": fa.symptoms.model_copy(
                update={
                    "log_patterns": [fa.symptoms.log_patterns[0].model_copy(update={"seen_in_healthy_runs": False})]
                }
            )
        }
    )
    problems = patterns_firing_on_healthy(unmarked, logs)
    assert [f for f, _ in problems] == ["symptoms.log_patterns.0"]
    assert "logs/healthy-unseen/verl-fsdp-sft-smollm135m.log" in problems[0][1]


def test_a_notice_case_answers_a_paste_about_the_notice_not_a_runs_log(matcher):
    """trainer-label-names-peftmodel-warning explains a notice every PEFT Trainer run prints. A
    published healthy GRPO run (7 lines: the notice, then TrainOutput) was answered with it at 0.96;
    the notice pasted on its own must still find it."""
    from assistant.match.symptoms import is_short_paste

    case = matcher.kb.cases["trainer-label-names-peftmodel-warning"]
    assert case.is_notice
    log = (KB_ROOT / "logs" / "healthy-unseen" / "cookbook-grpo-qwen2.5-vl-3b-lora.log").read_text(encoding="utf-8")
    r = parse_text(log)
    assert not r.chain and not is_short_paste(log, r.metric_series())  # TrainOutput carries the loss
    assert matcher.diagnose(r, top=1).verdict == "no-known-case"
    notice = next(ln for ln in log.splitlines() if ln.startswith("No label_names provided"))
    d = matcher.diagnose(parse_text(notice), top=1)
    assert d.verdict == "match" and d.matches[0].case_id == case.id


def test_a_notice_pasted_above_a_failed_runs_header_is_not_the_answer(matcher):
    """A real paste of vLLM 0.6.3's harmless commit-hash warning (Logic-RL#7) is about that
    warning. The same warning above Hydra's job-failure header (verl prints it when a run dies, its
    traceback cut from the paste) is about the failure, which the paste does not show: the notice
    case must not answer it (it did, at 0.91, on a real verl report of a missing dataset column)."""
    from assistant.match.symptoms import names_a_failure

    case_id = "vllm-missing-version-module-commit-hash-warning"
    assert matcher.kb.cases[case_id].is_notice
    paste = (KB_ROOT / "fixtures" / case_id / "report-2.txt").read_text(encoding="utf-8")
    d = matcher.diagnose(parse_text(paste), top=1)
    assert d.verdict == "match" and d.matches[0].case_id == case_id
    failed = paste + "\n(main_task pid=868545) Error executing job with overrides: ['data.train_batch_size=256']\n"
    assert names_a_failure(failed) and not names_a_failure(paste)
    d = matcher.diagnose(parse_text(failed), top=1)
    assert not (d.verdict == "match" and d.matches[0].case_id == case_id)
