"""A first `explain` in a fresh cache prints one progress line and the answer, nothing else."""

from __future__ import annotations

import os
import subprocess
import sys


def _explain(env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "assistant.cli.main", "explain", "examples/grpo-zero3-multirank.log"],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )


def test_first_explain_is_quiet(tmp_path):
    env = {**os.environ, "TRL_HELP_CACHE_DIR": str(tmp_path / "cache")}
    env.pop("TRL_HELP_VERBOSE", None)
    res = _explain(env)
    assert res.returncode == 0, res.stderr[-2000:]
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("trl-help: building the search index for"), res.stderr[-2000:]
    assert "grpo-zero3-unwrapped-model-no-optimizer" in res.stdout
    # the second run finds the index: not even that line
    res = _explain(env)
    assert res.returncode == 0 and res.stderr.strip() == ""
