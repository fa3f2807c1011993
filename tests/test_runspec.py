"""The user's run for a probe: settings from the log, a config file and --set, with sources."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from probes.runspec import build_run_spec, read_config

LOG = (
    'GRPOConfig(output_dir="out", per_device_train_batch_size=6, num_generations=4)\n'
    'Traceback (most recent call last):\n  File "train.py", line 3, in <module>\n'
    "ValueError: The global train batch size (1 x 6) must be evenly divisible by the number of generations "
    "per prompt (4). Given the current train batch size, the valid values for the number of generations are: "
    "[2, 3, 6].\n"
)


def test_precedence_set_over_config_over_log(tmp_path):
    cfg = tmp_path / "ds.json"
    cfg.write_text(
        json.dumps(
            {"train_micro_batch_size_per_gpu": 3, "zero_optimization": {"stage": 3}, "gradient_accumulation_steps": 2}
        )
    )
    spec = build_run_spec({"per_device_train_batch_size": 6, "num_generations": 4}, cfg, {"num_generations": "8"})
    assert spec.settings == {
        "per_device_train_batch_size": 3,
        "num_generations": "8",
        "zero_stage": 3,
        "gradient_accumulation_steps": 2,
    }
    assert spec.sources["per_device_train_batch_size"] == "config"
    assert spec.sources["num_generations"] == "--set"
    assert "zero_stage=3 (from your config)" in spec.describe()


def test_yaml_config_and_non_mapping_is_an_error(tmp_path):
    y = tmp_path / "grpo.yaml"
    y.write_text("per_device_train_batch_size: 6\nnum_generations: 4\nlora:\n  r: 16\n")
    assert read_config(y) == {"per_device_train_batch_size": 6, "num_generations": 4, "r": 16}
    bad = tmp_path / "bad.yaml"
    bad.write_text("- a\n- b\n")
    with pytest.raises(ValueError):
        read_config(bad)


def _probe(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "assistant.cli.main", "probe", *args], capture_output=True, text=True, timeout=600
    )


@pytest.mark.parametrize("value", ["nan", "0", "-5", "inf"])
def test_bad_timeout_is_refused_before_any_phase(value):
    res = _probe("grpo-batch-not-divisible-by-num-generations", "--timeout", value)
    assert res.returncode == 2 and "--timeout" in res.stderr and "[probe]" not in res.stderr


@pytest.mark.parametrize("kind", ["file", "empty-dir", "missing"])
def test_bad_model_path_is_refused_before_any_phase(tmp_path, kind):
    target = tmp_path / "model"
    if kind == "file":
        target.write_text("not a model")
    elif kind == "empty-dir":
        target.mkdir()
    res = _probe("grpo-batch-not-divisible-by-num-generations", "--model", str(target))
    assert res.returncode == 2 and "--model" in res.stderr and "[probe]" not in res.stderr


@pytest.mark.slow
def test_batch_probe_runs_on_the_logs_batch_and_says_so(tmp_path):
    log = tmp_path / "train.log"
    log.write_text(LOG)
    res = _probe("grpo-batch-not-divisible-by-num-generations", "--from-log", str(log), "--format", "json")
    assert res.returncode == 0, res.stderr[-2000:]
    out = json.loads(res.stdout)
    assert out["verdict"] == "confirmed"
    notes = " ".join(out["notes"])
    assert "per_device_train_batch_size=6 (from the log)" in notes and "num_generations=4 (from the log)" in notes
    assert any("(6)" in e and "(4)" in e for e in out["baseline"]["evidence"]), out["baseline"]["evidence"]


@pytest.mark.slow
def test_explain_probe_json_is_one_document_with_the_probe_nested(tmp_path):
    log = tmp_path / "train.log"
    log.write_text(LOG)
    res = subprocess.run(
        [sys.executable, "-m", "assistant.cli.main", "explain", str(log), "--probe", "--format", "json"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert res.returncode == 0, res.stderr[-2000:]
    doc = json.loads(res.stdout)  # the whole stdout is one JSON document
    assert doc["schema_version"] and doc["verdict"] == "match"
    top = doc["matches"][0]
    assert top["case_id"] == "grpo-batch-not-divisible-by-num-generations"
    assert top["probe_result"]["verdict"] == "confirmed"
    assert any("num_generations=4 (from the log)" in n for n in top["probe_result"]["notes"])


@pytest.mark.slow
def test_explain_probe_takes_probe_options_over_the_log(tmp_path):
    """`explain --probe` passes --set / --config / --device / --timeout through: a --set that puts
    the batch right overrides the log's 6 x 4 and the same probe comes out not-reproduced."""
    log = tmp_path / "train.log"
    log.write_text(LOG)
    cfg = tmp_path / "grpo.yaml"
    cfg.write_text("num_generations: 3\n")
    res = subprocess.run(
        [
            sys.executable,
            "-m",
            "assistant.cli.main",
            "explain",
            str(log),
            "--probe",
            "--format",
            "json",
            "--config",
            str(cfg),
            "--set",
            "per_device_train_batch_size=6",
            "--device",
            "cpu",
            "--timeout",
            "240",
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert res.returncode == 0, res.stderr[-2000:]
    pr = json.loads(res.stdout)["matches"][0]["probe_result"]
    assert pr["verdict"] == "not-reproduced"
    notes = " ".join(pr["notes"])
    assert "num_generations=3 (from your config)" in notes and "per_device_train_batch_size=6 (from --set)" in notes


@pytest.mark.parametrize("bad", [["--timeout", "nan"], ["--set", "novalue"], ["--config", "/nonexistent.yaml"]])
def test_explain_probe_bad_options_are_one_line_errors(tmp_path, bad):
    log = tmp_path / "train.log"
    log.write_text(LOG)
    res = subprocess.run(
        [sys.executable, "-m", "assistant.cli.main", "explain", str(log), "--probe", *bad],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert res.returncode == 2 and len(res.stderr.strip().splitlines()) == 1, res.stderr
    assert "Traceback" not in res.stderr


def test_master_port_is_read_from_real_c10d_messages():
    """The user's master port (for the port probe) comes from torch's own message in real reports,
    and from a launcher command line."""
    from pathlib import Path

    from assistant.parse import parse_text

    seen = 0
    for f in sorted(Path("kb/fixtures/master-port-in-use").glob("report-*.txt")):
        text = f.read_text()
        if "29500" in text:
            assert parse_text(text).settings.get("master_port") == 29500, f.name
            seen += 1
    assert seen >= 2
    assert parse_text("torchrun --nproc_per_node 2 --master_port 29511 train.py\n").settings["master_port"] == 29511
    assert "master_port" not in parse_text("RuntimeError: CUDA error: out of memory\n").settings
