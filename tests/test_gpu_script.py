"""The on-demand GPU script (tests/gpu/run_probes.py) runs here in its smoke mode, so it cannot rot
between the rare runs on a GPU machine; its CUDA refusal is a clear exit 2."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.conftest import ROOT


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "tests.gpu.run_probes", *args], cwd=ROOT, capture_output=True, text=True, timeout=600
    )


@pytest.mark.slow
def test_smoke_run_writes_a_verdict_per_case(tmp_path):
    out = tmp_path / "r.json"
    proc = _run("--shape", "tiny", "--device", "cpu", "--only", "tokenizer-missing-pad-token", "--out", str(out))
    assert proc.returncode == 0, proc.stderr[-2000:]
    doc = json.loads(out.read_text())
    assert [r["case"] for r in doc["results"]] == ["tokenizer-missing-pad-token"]
    assert doc["results"][0]["verdict"] == "not-reproduced"  # the built-in tokenizer has a pad token
    assert "| tokenizer-missing-pad-token | tokenizer-checks | not-reproduced |" in proc.stdout


def test_cuda_requested_without_cuda_is_a_clear_refusal():
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA: the refusal path does not apply")
    proc = _run("--device", "cuda", "--only", "tokenizer-missing-pad-token")
    assert proc.returncode == 2
    assert "no CUDA device" in proc.stderr and "Traceback" not in proc.stderr


def test_unknown_case_is_refused():
    proc = _run("--device", "cpu", "--shape", "tiny", "--only", "no-such-case")
    assert proc.returncode != 0 and "no probe for no-such-case" in proc.stderr
