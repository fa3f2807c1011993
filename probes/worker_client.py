"""The CLI side of the probe worker: start ``python -m probes.worker`` (this or another
interpreter), send it one JSON command per line, stream its output, read its sentinel answers."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

from probes.worker import SENTINEL

OutputFn = Callable[[str], None]


class WorkerError(RuntimeError):
    pass


class Worker:
    """The ``python -m probes.worker`` subprocess and its line protocol."""

    def __init__(self, on_output: OutputFn | None, python: str | None = None):
        self.on_output = on_output
        env = dict(os.environ)
        env.setdefault("HF_HUB_OFFLINE", "1")
        env.setdefault("HF_DATASETS_OFFLINE", "1")
        env.setdefault("TRANSFORMERS_OFFLINE", "1")
        env.setdefault("TOKENIZERS_PARALLELISM", "false")
        env.setdefault("PYTORCH_NVML_BASED_CUDA_CHECK", "1")
        env.setdefault("DS_ACCELERATOR", env.get("DS_ACCELERATOR", ""))
        if not env["DS_ACCELERATOR"]:
            env.pop("DS_ACCELERATOR")
        env["PYTHONUNBUFFERED"] = "1"
        root = str(Path(__file__).resolve().parent.parent)
        env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        self.proc = subprocess.Popen(
            [python or sys.executable, "-u", "-m", "probes.worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            encoding="utf-8",
            errors="replace",
            bufsize=1,
            env=env,
            cwd=root,
            start_new_session=True,
        )
        self.lines: queue.Queue[str | None] = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line.rstrip("\n"))
        self.lines.put(None)

    def command(self, cmd: dict, deadline_s: float) -> tuple[dict, list[str]]:
        """Send *cmd*; return (sentinel payload, output lines before it)."""
        if self.proc.poll() is not None:
            raise WorkerError(f"probe worker exited (rc {self.proc.returncode})")
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(json.dumps(cmd) + "\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError) as exc:
            raise WorkerError(f"probe worker is gone: {exc}") from None
        out: list[str] = []
        end = time.monotonic() + deadline_s
        while True:
            left = end - time.monotonic()
            if left <= 0:
                self.kill()
                raise WorkerError(f"probe worker did not answer within {deadline_s:.0f} s")
            try:
                line = self.lines.get(timeout=min(left, 1.0))
            except queue.Empty:
                continue
            if line is None:
                raise WorkerError(
                    f"probe worker exited (rc {self.proc.wait()}) — killed by the OOM killer?\n" + "\n".join(out[-20:])
                )
            if line.startswith(SENTINEL):
                return json.loads(line[len(SENTINEL) :].strip()), out
            out.append(line)
            if self.on_output is not None:
                try:
                    self.on_output(line)
                except Exception:  # noqa: BLE001 - a broken display must not break the probe
                    pass

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                self.command({"cmd": "exit"}, 10)
            except WorkerError:
                pass
        self.kill()

    def kill(self) -> None:
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, 9)
            except OSError:
                self.proc.kill()
            self.proc.wait()
