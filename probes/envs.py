"""Isolated, cached environments holding the user's library versions, for `probe --versions`.

An environment is keyed by the sorted pins and the Python version, lives under the user cache
dir (``envs/<key>``), is built in a temporary directory under a file lock and renamed into
place once complete. torch is never resolved from the registry: the pinned local ``torch==2.13.0``
(or the parent's version) is installed first, so no CUDA build is pulled.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from pydantic import BaseModel

_PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([0-9][A-Za-z0-9.+!-]*)$")
#: packages the probe harness itself needs inside the environment
HARNESS_DEPS = ["pydantic>=2.7", "pyyaml>=6", "packaging>=23", "rich>=13", "tokenizers", "numpy", "platformdirs"]
#: companions pinned with known-good old stacks (accelerate/datasets of the same period)
DEFAULT_TORCH = "torch==2.13.0"


class VersionSpecError(ValueError):
    """A `--versions` string that is not a comma-separated list of NAME==VERSION."""


class EnvBuildError(RuntimeError):
    """The pinned versions cannot be installed here (one line, from the installer's error)."""


class Pins(BaseModel):
    """Exact versions to install, by normalised distribution name."""

    pins: dict[str, str]

    def as_requirements(self) -> list[str]:
        return [f"{k}=={v}" for k, v in sorted(self.pins.items())]

    def describe(self) -> str:
        return ", ".join(f"{k} {v}" for k, v in sorted(self.pins.items()))


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def parse_versions(spec: str) -> Pins:
    """``"trl==0.15.2,transformers==4.49.0"`` → Pins; raises VersionSpecError with a one-line reason."""
    items = [s.strip() for s in spec.split(",")]
    if not spec.strip() or any(not s for s in items):
        raise VersionSpecError(f"--versions expects NAME==VERSION[,NAME==VERSION...], got {spec!r}")
    pins: dict[str, str] = {}
    for item in items:
        m = _PIN.match(item)
        if not m:
            raise VersionSpecError(f"--versions: {item!r} is not NAME==VERSION (exact pins only)")
        name = _norm(m.group(1))
        if name in pins and pins[name] != m.group(2):
            raise VersionSpecError(f"--versions: {name} pinned twice ({pins[name]} and {m.group(2)})")
        pins[name] = m.group(2)
    return Pins(pins=pins)


#: distributions read from a log that are worth pinning (the probe's stack; not torch, never CUDA)
PINNABLE = ("trl", "transformers", "peft", "accelerate", "datasets", "deepspeed", "bitsandbytes", "vllm")


def versions_from_text(text: str) -> Pins:
    """The log's library versions (parser's `trl env` / pip-freeze / site-packages reading)."""
    from assistant.parse import parse_text

    return versions_from_environment(parse_text(text).environment)


def versions_from_environment(env: dict[str, str]) -> Pins:
    """Pins for the pinnable libraries of a parsed report's environment."""
    pins = {}
    for k, v in env.items():
        name = _norm(k)
        m = re.match(r"^[0-9][0-9A-Za-z.+!-]*", str(v).strip())
        if name in PINNABLE and m:
            pins[name] = m.group(0).split("+")[0]
    return Pins(pins=pins)


def env_key(pins: Pins, python: str | None = None) -> str:
    """Cache key: sorted pins + python major.minor."""
    py = python or f"{sys.version_info.major}.{sys.version_info.minor}"
    raw = "\n".join([f"python=={py}", *pins.as_requirements()])
    return hashlib.sha256(raw.encode()).hexdigest()[:16]


def envs_root() -> Path:
    from assistant.cache import cache_root

    return cache_root() / "envs"


def _python_in(env_dir: Path) -> Path:
    return env_dir / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def _torch_requirement() -> str:
    try:
        from importlib.metadata import version

        return f"torch=={version('torch')}"
    except Exception:
        return DEFAULT_TORCH


def _install(py: Path, reqs: list[str], log: Path) -> None:
    env = dict(os.environ, DS_BUILD_OPS="0", PIP_DISABLE_PIP_VERSION_CHECK="1")
    uv = shutil.which("uv")
    cmd = (
        [uv, "pip", "install", "--python", str(py), *reqs]
        if uv
        else [sys.executable, "-m", "pip", "--python", str(py), "install", *reqs]
    )
    with log.open("a") as fh:
        fh.write("$ " + " ".join(cmd) + "\n")
        fh.flush()
        proc = subprocess.run(cmd, stdout=fh, stderr=subprocess.STDOUT, env=env)
    if proc.returncode != 0:
        raise EnvBuildError(_install_reason(log.read_text(errors="replace"), reqs))


def _install_reason(out: str, reqs: list[str]) -> str:
    for pat in (
        r"No matching distribution found for (\S+)",
        r"Could not find a version that satisfies the requirement (\S+)",
    ):
        m = re.search(pat, out)
        if m:
            return f"{m.group(1)} is not installable here (no release or no wheel for Python {sys.version_info.major}.{sys.version_info.minor})"
    tail = [ln for ln in out.splitlines() if ln.strip()][-1:] or ["installer failed"]
    return f"could not install {' '.join(reqs)}: {tail[0][:200]}"


def ensure_env(pins: Pins, *, on_status=None) -> Path:
    """Path of the python of a cached environment with *pins*; built once, under a lock, atomically."""
    from filelock import FileLock

    root = envs_root()
    root.mkdir(parents=True, exist_ok=True)
    key = env_key(pins)
    final = root / key
    if (final / ".complete").is_file():
        return _python_in(final)
    with FileLock(str(root / f"{key}.lock")):
        if (final / ".complete").is_file():
            return _python_in(final)
        tmp = root / f".{key}.building"
        shutil.rmtree(tmp, ignore_errors=True)
        if on_status:
            on_status(f"building an environment with {pins.describe()} (once)")
        # no pip inside the environment (ensurepip costs seconds): this interpreter's pip installs into it
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(tmp)], check=True, capture_output=True)
        log = tmp / "build.log"
        py = _python_in(tmp)
        # one resolver run for everything (torch pinned to the installed build, so no CUDA wheels)
        _install(py, [_torch_requirement(), *HARNESS_DEPS, *pins.as_requirements()], log)
        (tmp / "pins.txt").write_text("\n".join(pins.as_requirements()) + "\n")
        (tmp / ".complete").write_text("ok\n")
        shutil.rmtree(final, ignore_errors=True)
        os.replace(tmp, final)
    return _python_in(final)
