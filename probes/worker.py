"""Probe worker: imports the heavy libraries once, then runs every phase in a forked child.

Started by :mod:`probes.harness` as ``python -m probes.worker``; reads one JSON command per line
on stdin and writes the phases' own output (stdout and stderr merged) to stdout, followed by a
sentinel line ``SENTINEL {json}`` per command. A phase that segfaults, is OOM-killed or hangs
only takes its child down: the worker kills the child's process group at the timeout and
reports ``timeout`` / ``crashed``. Forking after the imports saves 7–9 s per phase.

Commands::

    {"cmd": "preload", "modules": ["torch", ...]}
    {"cmd": "env", "packages": [...]}
    {"cmd": "phase", "module": "probes.x", "phase": "baseline", "ctx": {...},
     "timeout": 120, "result_file": "/tmp/.../baseline.json"}
    {"cmd": "exit"}
"""

from __future__ import annotations

import importlib
import json
import os
import signal
import sys
import time
import traceback

from assistant.vocab import PACKAGES
from probes._base import exc_chain

SENTINEL = "\x1e@@trl-help-probe@@"

#: versions a probe result reports: the project's libraries (assistant.vocab, stdlib only) + tokenizers
VERSION_PACKAGES = (*PACKAGES, "tokenizers")


def _say(obj: dict) -> None:
    sys.stdout.flush()
    sys.stderr.flush()
    sys.stdout.write(f"{SENTINEL} {json.dumps(obj)}\n")
    sys.stdout.flush()


def versions(packages=VERSION_PACKAGES) -> dict[str, str | None]:
    from importlib import metadata

    out: dict[str, str | None] = {}
    for p in packages:
        try:
            out[p] = metadata.version(p)
        except metadata.PackageNotFoundError:
            out[p] = None
    return out


def environment() -> dict:
    import platform

    env: dict = {"python": platform.python_version(), "platform": platform.platform()}
    env["versions"] = versions()
    env["cuda_available"] = False
    env["cuda_devices"] = 0
    if "torch" in sys.modules or env["versions"].get("torch"):
        try:
            import torch

            # NVML-based check (PYTORCH_NVML_BASED_CUDA_CHECK=1): does not initialise CUDA in
            # the worker, so forked children can still use it.
            env["cuda_available"] = bool(torch.cuda.is_available())
            env["cuda_devices"] = torch.cuda.device_count() if env["cuda_available"] else 0
            env["torch_cuda"] = torch.version.cuda
        except Exception as exc:  # noqa: BLE001
            env["cuda_error"] = f"{type(exc).__name__}: {exc}"
    env["cpu_count"] = os.cpu_count()
    return env


def _child(cmd: dict) -> None:
    """Runs in the forked child: the phase, then the result file. Never returns."""
    code = 0
    try:
        os.setpgid(0, 0)
    except OSError:
        pass
    os.dup2(1, 2)  # one merged stream, in order
    result: dict = {}
    t0 = time.perf_counter()
    try:
        probe = importlib.import_module(cmd["module"]).PROBE  # a probes.contract.Probe
        out = probe.run_phase(cmd["phase"], probe.context_type.from_dict(cmd.get("ctx") or {}))
        result = dict(out or {})
        result["status"] = "ok"
    except BaseException as exc:  # noqa: BLE001 - the phase's failure is the data
        traceback.print_exc()
        result = {
            "status": "raised",
            "exception": exc_chain(exc)[0],
            "exception_chain": exc_chain(exc),
        }
        info = getattr(exc, "probe_info", None)
        if isinstance(info, dict):
            result.update(info)
    result["seconds_in_phase"] = round(time.perf_counter() - t0, 3)
    try:
        sys.stdout.flush()
        sys.stderr.flush()
        with open(cmd["result_file"], "w", encoding="utf-8") as fh:
            json.dump(result, fh, default=str)
    except BaseException:  # noqa: BLE001
        traceback.print_exc()
        code = 3
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


def _become_subreaper() -> None:
    """Linux: orphaned descendants of a phase (one that called setsid, a daemonised helper) are
    re-parented to this worker instead of init, so `_kill_descendants` still finds them."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
    except Exception:  # noqa: BLE001 - not Linux: process groups only
        pass


def _descendants(root: int) -> list[int]:
    """Pids below *root* (Linux /proc; empty elsewhere)."""
    children: dict[int, list[int]] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    for name in entries:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", encoding="utf-8", errors="replace") as fh:
                ppid = int(fh.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(ppid, []).append(int(name))
    out: list[int] = []
    todo = list(children.get(root, []))
    while todo:
        pid = todo.pop()
        out.append(pid)
        todo.extend(children.get(pid, []))
    return out


def _kill_descendants() -> None:
    """Nothing a phase started outlives it: kill every remaining descendant, then reap them."""
    for pid in _descendants(os.getpid()):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    # reap them (SIGKILL is delivered asynchronously: a victim not yet dead would stay a zombie)
    deadline = time.monotonic() + 5.0
    while True:
        try:
            done, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:  # no children left
            break
        if done:
            continue
        if time.monotonic() > deadline:
            break
        time.sleep(0.01)


def _run_phase(cmd: dict) -> dict:
    timeout = float(cmd.get("timeout") or 120)
    sys.stdout.flush()
    sys.stderr.flush()
    t0 = time.perf_counter()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - child
        _child(cmd)
    status, rc, sig = "done", None, None
    deadline = t0 + timeout
    while True:
        done, st = os.waitpid(pid, os.WNOHANG)
        if done:
            if os.WIFSIGNALED(st):
                sig = os.WTERMSIG(st)
                status = "crashed"
            else:
                rc = os.WEXITSTATUS(st)
                status = "done" if rc == 0 else "crashed"
            break
        if time.perf_counter() > deadline:
            status = "timeout"
            try:
                os.killpg(pid, signal.SIGKILL)
            except OSError:
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            os.waitpid(pid, 0)
            break
        time.sleep(0.02)
    # leftovers of the phase (torchrun workers, a process that left the group with setsid) go with it
    try:
        os.killpg(pid, signal.SIGKILL)
    except OSError:
        pass
    _kill_descendants()
    return {
        "status": status,
        "rc": rc,
        "signal": sig,
        "seconds": round(time.perf_counter() - t0, 3),
    }


def main() -> int:
    _become_subreaper()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ.setdefault("PYTORCH_NVML_BASED_CUDA_CHECK", "1")
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            cmd = json.loads(line)
        except json.JSONDecodeError as exc:
            _say({"ok": False, "error": f"bad command: {exc}"})
            continue
        kind = cmd.get("cmd")
        if kind == "exit":
            _say({"ok": True})
            return 0
        if kind == "preload":
            failed = {}
            t0 = time.perf_counter()
            for m in cmd.get("modules", []):
                try:
                    importlib.import_module(m)
                except Exception as exc:  # noqa: BLE001
                    failed[m] = f"{type(exc).__name__}: {exc}"
            _say({"ok": not failed, "failed": failed, "seconds": round(time.perf_counter() - t0, 3)})
        elif kind == "env":
            try:
                _say({"ok": True, "env": environment()})
            except Exception as exc:  # noqa: BLE001
                _say({"ok": False, "error": f"{type(exc).__name__}: {exc}"})
        elif kind == "phase":
            _say({"ok": True, **_run_phase(cmd)})
        else:
            _say({"ok": False, "error": f"unknown command {kind!r}"})
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
