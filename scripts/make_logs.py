"""Build the healthy-log corpus `kb/logs/healthy/*.log` from real tiny training runs.

    python scripts/make_logs.py [VARIANT ...] [--ddp]

Each variant of `scripts/healthy_run.py` runs in its own process on a tiny random Qwen2 built
locally (probes/tiny.py); stdout and stderr are captured together, as a terminal shows them
(tqdm bars with carriage returns, warnings, INFO lines, metric dicts). `--ddp` adds runs launched
by torchrun with 2 processes over gloo (`[rankN]:` prefixes via --tee). Logs are trimmed to
`MAX_BYTES`. `kb validate` and the tests require every one of them to answer "no-known-case".
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "kb" / "logs" / "healthy"
MAX_BYTES = 200_000
sys.path.insert(0, str(ROOT))


def _env() -> dict[str, str]:
    env = dict(os.environ, HF_HUB_OFFLINE="1", TOKENIZERS_PARALLELISM="false", PYTHONUNBUFFERED="1")
    env.pop("CUDA_VISIBLE_DEVICES", None)
    return env


def _save(name: str, out: bytes) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    # a user's paths, not this machine's
    text = (
        out.decode("utf-8", "replace").replace(sys.prefix, "/home/user/venv").replace(str(ROOT), "/home/user/project")
    )
    if len(text) > MAX_BYTES:
        text = text[: MAX_BYTES // 2] + "\n" + text[-MAX_BYTES // 2 :]
    (OUT / f"{name}.log").write_text(text, encoding="utf-8")


def run_variant(variant: str, model_dir: Path, work: Path) -> int:
    cmd = [sys.executable, str(ROOT / "scripts" / "healthy_run.py"), variant, str(model_dir), str(work / variant)]
    res = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=_env(), timeout=600)
    if res.returncode == 0:
        _save(variant, res.stdout)
    return res.returncode


def run_ddp(variant: str, model_dir: Path, work: Path) -> int:
    cmd = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--nproc_per_node=2",
        "--tee",
        "3",
        str(ROOT / "scripts" / "healthy_run.py"),
        variant,
        str(model_dir),
        str(work / f"ddp-{variant}"),
    ]
    env = _env() | {"ACCELERATE_USE_CPU": "1"}
    res = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, timeout=900)
    if res.returncode == 0:
        _save(f"ddp-{variant}", res.stdout)
    return res.returncode


def main() -> int:
    from scripts.healthy_run import VARIANTS

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("variants", nargs="*", default=list(VARIANTS))
    ap.add_argument("--ddp", action="store_true", help="also run --ddp-variants under torchrun, 2 processes")
    ap.add_argument("--ddp-variants", nargs="+", default=["sft", "grpo", "dpo"])
    args = ap.parse_args()
    from probes.tiny import build_tiny

    with tempfile.TemporaryDirectory(prefix="trl-help-logs-") as tmp:
        work = Path(tmp)
        model_dir = work / "model-eos"
        subprocess.run(
            [
                sys.executable,
                str(ROOT / "scripts" / "healthy_run.py"),
                "warmup",
                str(build_tiny(work / "model")),
                str(model_dir),
            ],
            env=_env(),
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        failed = []
        for v in args.variants:
            rc = run_variant(v, model_dir, work)
            print(f"{v}: {'ok' if rc == 0 else f'FAILED (exit {rc})'}", flush=True)
            if rc:
                failed.append(v)
        if args.ddp:
            for v in args.ddp_variants:
                rc = run_ddp(v, model_dir, work)
                print(f"ddp-{v}: {'ok' if rc == 0 else f'FAILED (exit {rc})'}", flush=True)
                if rc:
                    failed.append(f"ddp-{v}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
