"""The two interfaces the TUI depends on, and their real implementations.

* :class:`assistant.match.engine.Engine` — report → diagnosis, the same engine `explain` and
  `triage` use (:func:`load_engine`); the diagnosis carries everything the views show, so the TUI
  never reads the KB. Tests inject a deterministic one.
* :class:`ProbeRunner` — runs one probe with streaming output and can be cancelled from another
  thread. The real one (:class:`HarnessProbeRunner`) drives :mod:`probes.harness`; when that
  package is missing :func:`default_probe_runner` returns ``None`` and the app says
  "probes unavailable".

Nothing here imports torch or the matcher at import time.
"""

from __future__ import annotations

import importlib.util
import os
import signal
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from assistant.match.engine import Engine

LineFn = Callable[[str], None]


# --------------------------------------------------------------------------- diagnosis


def load_engine(kb_root: str | None = None) -> Engine:
    """The real engine (the matcher `trl-help explain` uses) over the bundled KB or *kb_root*."""
    from assistant.match.engine import Matcher

    return Matcher.load(Path(kb_root) if kb_root else None, progress=False)


# --------------------------------------------------------------------------- probes


class ProbeCancelled(Exception):
    """Raised by :meth:`ProbeRunner.run` when :meth:`ProbeRunner.cancel` stopped it."""


@runtime_checkable
class ProbeRunner(Protocol):
    """Runs a case's probe. ``run`` is called from a worker thread, ``cancel`` from the UI."""

    def has_probe(self, case_id: str) -> bool: ...

    def describe(self, case_id: str) -> str:
        """One line: the probe's id and title (for the dialog's header)."""
        ...

    def phase_count(self, case_id: str) -> int:
        """Steps the progress bar counts (worker start, model, each phase)."""
        ...

    def run(
        self,
        case_id: str,
        *,
        model: str | None,
        tiny_replica: bool,
        device: str,
        timeout: float,
        on_output: LineFn,
        on_status: LineFn,
    ) -> Any:
        """Return a ``probes.result.ProbeResult``-like object (``.verdict``, ``.baseline``,
        ``.treatment``, ``.notes``); raise :class:`ProbeCancelled` when cancelled and
        ``LookupError`` for an unknown case or a bad model path."""
        ...

    def cancel(self) -> None: ...


def probes_available() -> bool:
    try:
        return importlib.util.find_spec("probes.harness") is not None
    except (ImportError, ValueError):
        return False


class HarnessProbeRunner:
    """:class:`ProbeRunner` over :mod:`probes.harness`.

    Uses a :class:`probes.harness.ProbeSession` (rather than ``run_probe``) so that
    :meth:`cancel` can kill the probe's worker process group: the blocking ``run`` then
    returns at once and raises :class:`ProbeCancelled`.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._session: Any = None
        self._cancelled = threading.Event()

    # lookups (import-light: the registry imports no torch)
    def _resolve(self, case_id: str):
        from probes.harness import resolve

        return resolve(case_id)

    def has_probe(self, case_id: str) -> bool:
        try:
            self._resolve(case_id)
        except LookupError:
            return False
        return True

    def describe(self, case_id: str) -> str:
        _, spec, _ = self._resolve(case_id)
        return f"{spec.id} — {spec.title}"

    def phase_count(self, case_id: str) -> int:
        _, spec, _ = self._resolve(case_id)
        return 4 + len(spec.extra_phases)  # worker, model, baseline, treatment, extras

    # running
    def _kill(self) -> None:
        with self._lock:
            session = self._session
        worker = getattr(session, "worker", None)
        if worker is None:
            return
        # each phase runs in a forked child with its own process group: stop those first,
        # or they would run on (holding the output pipe) after the worker is gone
        proc = getattr(worker, "proc", None)
        for pid in _descendants(proc.pid) if proc is not None else []:
            for kill in (os.killpg, os.kill):
                try:
                    kill(pid, signal.SIGKILL)
                    break
                except OSError:
                    continue
        try:
            worker.kill()
        except Exception:  # noqa: BLE001 - already gone
            pass

    def run(
        self,
        case_id: str,
        *,
        model: str | None,
        tiny_replica: bool,
        device: str,
        timeout: float,
        on_output: LineFn,
        on_status: LineFn,
    ) -> Any:
        from probes.harness import ProbeSession, WorkerError

        self._cancelled.clear()
        _, spec, _ = self._resolve(case_id)

        def out(line: str) -> None:
            if self._cancelled.is_set():
                self._kill()
                return
            on_output(line)

        def status(msg: str) -> None:
            if self._cancelled.is_set():
                self._kill()
                return
            on_status(msg)

        session = ProbeSession(preload=spec.preload, on_output=out, on_status=status)
        with self._lock:
            self._session = session
        try:
            with session:
                if self._cancelled.is_set():
                    raise ProbeCancelled()
                try:
                    result = session.run(
                        case_id, model=model or None, tiny_replica=tiny_replica, device=device, timeout=timeout
                    )
                except WorkerError as exc:
                    if self._cancelled.is_set():
                        raise ProbeCancelled() from None
                    return self._worker_failed(case_id, session, exc)
                if self._cancelled.is_set():
                    raise ProbeCancelled()
                return result
        finally:
            with self._lock:
                self._session = None

    @staticmethod
    def _worker_failed(case_id: str, session: Any, exc: Exception) -> Any:
        from probes.session import worker_failed_result

        return worker_failed_result(case_id, session.env, exc)

    def cancel(self) -> None:
        self._cancelled.set()
        self._kill()


def _descendants(pid: int) -> list[int]:
    """Pids of *pid*'s descendants (Linux /proc; empty elsewhere)."""
    children: dict[int, list[int]] = {}
    try:
        entries = list(Path("/proc").iterdir())
    except OSError:
        return []
    for entry in entries:
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(ppid, []).append(int(entry.name))
    out: list[int] = []
    todo = list(children.get(pid, []))
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(children.get(p, []))
    return out


def default_probe_runner() -> ProbeRunner | None:
    """The real runner, or None when the ``probes`` package is not importable."""
    if not probes_available():
        return None
    try:
        import probes.harness  # noqa: F401
    except Exception:  # noqa: BLE001 - a broken probes package = unavailable
        return None
    return HarnessProbeRunner()
