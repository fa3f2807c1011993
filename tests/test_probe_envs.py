"""probe --versions: spec parsing, versions from a log, env cache key/reuse, side-by-side output."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from probes import envs
from probes.envs import Pins, VersionSpecError, env_key, parse_versions, versions_from_text
from probes.envs_compare import Comparison, StackResult

TRL_ENV_LOG = """Copy-paste the following information when reporting an issue:
- Platform: Linux-5.15.0-x86_64-with-glibc2.35
- Python version: 3.11.9
- PyTorch version: 2.5.1
- TRL version: 0.15.2
- Transformers version: 4.49.0
- PEFT version: 0.14.0
- Accelerate version: 1.4.0
Traceback (most recent call last):
  File "train.py", line 40, in <module>
    trainer.train()
RuntimeError: element 0 of tensors does not require grad and does not have a grad_fn
"""


def test_parse_versions_normalises_and_sorts() -> None:
    p = parse_versions(" Transformers==4.49.0,trl==0.15.2 ,peft==0.14.0")
    assert p.pins == {"transformers": "4.49.0", "trl": "0.15.2", "peft": "0.14.0"}
    assert p.as_requirements()[0] == "peft==0.14.0"


@pytest.mark.parametrize("bad", ["", "trl", "trl=0.15", "trl>=0.15", "trl==0.15,,peft==0.14", "trl==0.1,trl==0.2"])
def test_parse_versions_rejects(bad: str) -> None:
    with pytest.raises(VersionSpecError):
        parse_versions(bad)


def test_cli_bad_versions_is_one_line_exit_2() -> None:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "assistant.cli.main",
            "probe",
            "lora-gradient-checkpointing-no-grad",
            "--versions",
            "trl>=1",
        ],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip().count("\n") == 0 and "NAME==VERSION" in proc.stderr


def test_versions_from_trl_env_block() -> None:
    pins = versions_from_text(TRL_ENV_LOG).pins
    assert pins["trl"] == "0.15.2" and pins["transformers"] == "4.49.0" and pins["peft"] == "0.14.0"
    assert "torch" not in pins  # torch always comes from the parent environment


def test_env_key_order_independent_and_python_sensitive() -> None:
    a = parse_versions("trl==0.15.2,peft==0.14.0")
    b = parse_versions("peft==0.14.0,trl==0.15.2")
    assert env_key(a) == env_key(b)
    assert env_key(a, "3.10") != env_key(a, "3.12")
    assert env_key(a) != env_key(parse_versions("trl==0.15.1,peft==0.14.0"))


def test_ensure_env_builds_once_and_reuses(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[list[str]] = []
    monkeypatch.setattr(envs, "envs_root", lambda: tmp_path)
    monkeypatch.setattr(envs.subprocess, "run", lambda cmd, **kw: Path(cmd[-1]).mkdir(parents=True))
    monkeypatch.setattr(envs, "_install", lambda py, reqs, log: calls.append(reqs))
    pins = Pins(pins={"trl": "0.15.2"})
    py1 = envs.ensure_env(pins)
    py2 = envs.ensure_env(pins)
    assert py1 == py2 and (tmp_path / env_key(pins) / ".complete").is_file()
    assert len(calls) == 1  # one resolver run (harness deps + pins), only on the first call
    assert any("trl==0.15.2" in r for r in calls[0]) and any(r.startswith("torch==") for r in calls[0])
    assert "pydantic>=2.7" in calls[0]
    assert not list(tmp_path.glob(".*.building"))


def test_install_reason_names_the_package() -> None:
    out = "ERROR: Could not find a version that satisfies the requirement deepspeed==9.9.9 (from versions: 0.16.3)\n"
    msg = envs._install_reason(out, ["deepspeed==9.9.9"])
    assert "deepspeed==9.9.9" in msg and "not installable here" in msg


def _cmp(yours: str, installed: str) -> Comparison:
    return Comparison(
        case_id="lora-gradient-checkpointing-no-grad",
        yours=StackResult(label="your versions", versions={"trl": "0.15.2"}, result={"verdict": yours}),
        installed=StackResult(label="installed versions", versions={"trl": "1.16.0"}, result={"verdict": installed}),
    )


def test_side_by_side_rendering() -> None:
    text = _cmp("confirmed", "not-reproduced").render_text()
    assert "your versions (trl 0.15.2): confirmed" in text
    assert "installed versions (trl 1.16.0): not-reproduced" in text
    assert "upgrading fixes it" in text
    assert "apply the fix" in _cmp("confirmed", "confirmed").render_text()


def test_side_by_side_json_nests_both() -> None:
    import json

    doc = json.loads(_cmp("confirmed", "not-reproduced").to_json())
    assert doc["yours"]["result"]["verdict"] == "confirmed"
    assert doc["installed"]["result"]["verdict"] == "not-reproduced"
    assert doc["conclusion"] == "upgrading fixes it"


def test_build_failure_is_an_error_stack() -> None:
    s = StackResult(
        label="your versions", versions={"deepspeed": "9.9.9"}, error="deepspeed==9.9.9 is not installable here"
    )
    assert s.verdict == "error"
    assert "not installable here" in Comparison(case_id="x", yours=s, installed=s).render_text()


def test_another_interpreter_decides_what_is_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    """With `--versions` the probe runs in another interpreter: whether deepspeed is there is asked of
    that interpreter's worker, never of this process's importlib (the ZeRO-3 probe was skipped on
    every stack because the parent lacked deepspeed)."""
    import sys

    import probes.session as session

    def parent_lookup(spec):  # the bug: consulting this interpreter
        raise AssertionError("missing packages looked up in the parent interpreter")

    monkeypatch.setattr(session, "missing_packages", parent_lookup)
    with session.ProbeSession(python=sys.executable) as s:
        r = s.run("grpo-zero3-unwrapped-model-no-optimizer", timeout=60)
        versions = s.env.get("versions") or {}
    if versions.get("deepspeed"):  # pragma: no cover - a machine with deepspeed runs the probe
        assert r.verdict.value != "skipped" or "deepspeed" not in " ".join(r.notes)
    else:
        assert r.verdict.value == "skipped" and "deepspeed is not installed" in " ".join(r.notes)
        assert r.environment["versions"]["torch"]  # the worker's own versions are reported
