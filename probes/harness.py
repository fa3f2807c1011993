"""Run a probe: each phase in a subprocess with a timeout, symptom checked with `explain`'s matcher.

Import-light (no torch): the heavy work happens in :mod:`probes.worker`, a subprocess that
imports the libraries once and forks one child per phase, so an OOM, segfault or hang in a
phase never takes the caller down.

Front ends call :func:`run_probe` (one probe) or use :class:`ProbeSession` (several probes
sharing one worker, e.g. the test suite).
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import queue
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from probes.registry import CASE_TO_PROBE, SPECS, ProbeSpec
from probes.result import PhaseResult, PhaseStatus, ProbeResult, Verdict
from probes.worker import SENTINEL

OutputFn = Callable[[str], None]

#: lines of a phase's output kept in ``PhaseResult.output_tail``
TAIL_LINES = 60

#: distribution name -> import name (find_spec needs the latter)
_IMPORT_NAME = {"flash-attn": "flash_attn"}


class ProbeLookupError(LookupError):
    """Unknown case or probe id (front ends turn it into a usage error)."""


# --------------------------------------------------------------------------- resolution


def _load_kb_cases() -> dict:
    try:
        from assistant.kb.load import load_kb

        return load_kb().cases
    except Exception:  # noqa: BLE001 - probes work without a loadable KB
        return {}


def resolve(case_or_probe: str) -> tuple[str, ProbeSpec, Any]:
    """(case id, probe spec, KB case or None) for a case id or a probe id."""
    cases = _load_kb_cases()
    case = cases.get(case_or_probe)
    if case is not None:
        probe_id = case.probe or CASE_TO_PROBE.get(case.id)
        if not probe_id:
            raise ProbeLookupError(f"case {case.id!r} has no probe (see `trl-help probe --list`)")
        if probe_id not in SPECS:
            raise ProbeLookupError(f"case {case.id!r} names unknown probe {probe_id!r}")
        return case.id, SPECS[probe_id], case
    if case_or_probe in CASE_TO_PROBE:
        return case_or_probe, SPECS[CASE_TO_PROBE[case_or_probe]], None
    if case_or_probe in SPECS:
        spec = SPECS[case_or_probe]
        cid = spec.cases[0]
        return cid, spec, cases.get(cid)
    raise ProbeLookupError(f"unknown case or probe id {case_or_probe!r} (see `trl-help probe --list`)")


def list_probes() -> list[dict]:
    """One row per probe: id, title, cases, needs."""
    rows = []
    for s in sorted(SPECS.values(), key=lambda s: s.id):
        needs = [p for p in s.packages if p not in ("torch", "transformers")]
        if s.cuda:
            needs.append("CUDA")
        if s.processes > 1:
            needs.append(f"{s.processes} processes")
        rows.append(
            {
                "probe": s.id,
                "title": s.title,
                "cases": list(s.cases),
                "kind": s.kind,
                "needs": needs,
                "installed": not missing_packages(s),
            }
        )
    return rows


def missing_packages(spec: ProbeSpec) -> list[str]:
    out = []
    for p in spec.packages:
        name = _IMPORT_NAME.get(p, p)
        try:
            found = importlib.util.find_spec(name) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            out.append(p)
    return out


def _symptom_holder(case_id: str, case: Any, module: Any):
    """Something with ``.symptoms`` for find_evidence: the KB case, else the probe's fallback."""
    if case is not None:
        return case, "kb"
    fb = getattr(module, "FALLBACK_SYMPTOMS", {}).get(case_id)
    if not fb:
        return None, "none"
    from types import SimpleNamespace

    from assistant.kb.model import Symptoms

    return SimpleNamespace(id=case_id, symptoms=Symptoms.model_validate(fb)), "probe-fallback"


# --------------------------------------------------------------------------- metrics


def _metrics_from_text(text: str) -> dict[str, list[float]]:
    """Metrics from the parser (when it exists), plus the phases' PROBE_METRICS lines."""
    from probes._base import METRICS_PREFIX

    out: dict[str, list[float]] = {}
    try:
        from assistant.parse import parse_text  # written in parallel; optional

        series = parse_text(text).metric_series()
        for k, v in (series or {}).items():
            out.setdefault(k, []).extend(float(x) for x in v)
    except Exception:  # noqa: BLE001 - parser absent or failing: rely on our own lines
        pass
    for line in text.splitlines():
        if line.startswith(METRICS_PREFIX):
            try:
                data = json.loads(line[len(METRICS_PREFIX) :])
            except json.JSONDecodeError:
                continue
            for k, v in data.get("metrics", {}).items():
                if k not in out:
                    out[k] = [float(x) for x in v]
    return out


# --------------------------------------------------------------------------- worker client


class WorkerError(RuntimeError):
    pass


class _Worker:
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


# --------------------------------------------------------------------------- session


def _phase_names(module: Any, spec: ProbeSpec, case_id: str) -> list[str]:
    fn = getattr(module, "phases", None)
    if callable(fn):
        return list(fn(case_id))
    return ["baseline", "treatment", *spec.extra_phases]


def _tail(lines: list[str], n: int = TAIL_LINES) -> str:
    return "\n".join(lines[-n:])


class ProbeSession:
    """One worker process shared by several probes (imports paid once)."""

    def __init__(
        self,
        *,
        preload: tuple[str, ...] | list[str] = ("torch", "transformers"),
        on_output: OutputFn | None = None,
        on_status: OutputFn | None = None,
        python: str | None = None,
    ):
        self.on_output = on_output
        self.on_status = on_status
        self.python = python
        self.preload = list(dict.fromkeys(preload))
        self.worker: _Worker | None = None
        self.env: dict = {}
        self._models: dict[tuple, dict] = {}
        self._tmp = Path(tempfile.mkdtemp(prefix="trl-help-probe-"))

    # lifecycle
    def __enter__(self) -> ProbeSession:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        if self.worker is not None:
            self.worker.close()
            self.worker = None
        shutil.rmtree(self._tmp, ignore_errors=True)

    def _status(self, msg: str) -> None:
        if self.on_status is not None:
            try:
                self.on_status(msg)
            except Exception:  # noqa: BLE001
                pass

    def _ensure_worker(self, extra_preload: list[str]) -> None:
        if self.worker is None:
            self._status("starting the probe worker (importing torch / transformers …)")
            self.worker = _Worker(self.on_output, self.python)
            payload, _ = self.worker.command({"cmd": "env"}, 120)
            self.env = payload.get("env", {})
        todo = [m for m in extra_preload if m not in getattr(self, "_loaded", set())]
        if todo:
            self._status("importing " + ", ".join(todo))
            self.worker.command({"cmd": "preload", "modules": todo}, 300)
            self._loaded = set(getattr(self, "_loaded", set())) | set(todo)
            payload, _ = self.worker.command({"cmd": "env"}, 120)
            self.env = payload.get("env", self.env)

    def _run(self, module_name: str, phase: str, ctx: dict, timeout: float) -> tuple[dict, dict, list[str]]:
        """(worker status, phase result dict, output lines)."""
        assert self.worker is not None
        rf = self._tmp / f"{module_name.rsplit('.', 1)[-1]}-{phase}-{time.monotonic_ns()}.json"
        cmd = {
            "cmd": "phase",
            "module": module_name,
            "phase": phase,
            "ctx": ctx,
            "timeout": timeout,
            "result_file": str(rf),
        }
        status, lines = self.worker.command(cmd, timeout + 120)
        result: dict = {}
        if rf.is_file():
            try:
                result = json.loads(rf.read_text())
            except json.JSONDecodeError:
                result = {}
        return status, result, lines

    def _model(
        self, model: str | None, tiny_replica: bool, trust_remote_code: bool, timeout: float
    ) -> tuple[dict, PhaseResult | None]:
        key = (model, tiny_replica, trust_remote_code)
        if key in self._models:
            return self._models[key], None
        workdir = tempfile.mkdtemp(prefix="model-", dir=self._tmp)
        ctx = {
            "user_model": model,
            "tiny_replica": tiny_replica,
            "workdir": workdir,
            "trust_remote_code": trust_remote_code,
        }
        self._status("preparing the model" + (" (tiny replica)" if tiny_replica else ""))
        status, result, lines = self._run("probes._setup", "setup", ctx, timeout)
        if result.get("status") != "ok" or status.get("status") != "done":
            pr = PhaseResult(
                name="setup",
                status=PhaseStatus.raised if result else PhaseStatus.crashed,
                exception=result.get("exception"),
                output_tail=_tail(lines),
                seconds=status.get("seconds", 0.0),
            )
            return {}, pr
        info = result.get("info", {})
        self._models[key] = info
        return info, None

    # the probe
    def run(
        self,
        case_id: str,
        *,
        model: str | None = None,
        tiny_replica: bool = False,
        device: str = "auto",
        timeout: float = 180.0,
        trust_remote_code: bool = False,
        options: dict | None = None,
    ) -> ProbeResult:
        t_start = time.perf_counter()
        cid, spec, case = resolve(case_id)
        module = importlib.import_module(spec.module)
        holder, symptom_source = _symptom_holder(cid, case, module)
        notes: list[str] = []

        def skipped(reason: str, env: dict | None = None) -> ProbeResult:
            ph = PhaseResult(name="baseline", description=reason)
            return ProbeResult(
                case_id=cid,
                probe=spec.id,
                verdict=Verdict.skipped,
                baseline=ph,
                treatment=PhaseResult(name="treatment"),
                environment=env or {},
                notes=[f"skipped: {reason}"] + notes,
                seconds=round(time.perf_counter() - t_start, 3),
            )

        if tiny_replica and not model:
            raise ProbeLookupError("--tiny-replica needs --model PATH")
        if model and not Path(model).exists():
            raise ProbeLookupError(f"--model {model}: no such directory (probes never download)")
        missing = missing_packages(spec)
        if missing:
            hint = {
                "deepspeed": "deepspeed is not installed (pip install deepspeed; on CPU "
                "DS_BUILD_OPS=0 pip install deepspeed)",
                "bitsandbytes": "bitsandbytes is not installed (and needs CUDA)",
            }
            reason = "; ".join(hint.get(m, f"{m} is not installed") for m in missing)
            if spec.cuda and "bitsandbytes" in missing:
                reason += "; this probe needs a CUDA GPU"
            return skipped(reason, {"versions": _local_versions()})

        preload = [m for m in spec.preload if importlib.util.find_spec(_IMPORT_NAME.get(m, m))]
        self._ensure_worker(preload)
        env = dict(self.env)
        cuda = bool(env.get("cuda_available"))
        if device == "auto":
            dev = "cuda" if cuda else "cpu"
        elif device == "cuda" and not cuda:
            return skipped("--device cuda was asked for but torch sees no CUDA device", env)
        else:
            dev = device
        if spec.cuda and dev != "cuda":
            return skipped("needs a CUDA GPU (bitsandbytes k-bit layers); this run is on CPU", env)
        env["device"] = dev
        skip_fn = getattr(module, "skip_reason", None)
        if callable(skip_fn):
            reason = skip_fn(env)
            if reason:
                return skipped(reason, env)

        # model directory
        info, failed = self._model(model, tiny_replica, trust_remote_code, timeout)
        if failed is not None:
            return ProbeResult(
                case_id=cid,
                probe=spec.id,
                verdict=Verdict.error,
                baseline=failed,
                treatment=PhaseResult(name="treatment"),
                environment=env,
                notes=["could not prepare the model directory", failed.exception or ""],
                seconds=round(time.perf_counter() - t_start, 3),
            )
        env["model_source"] = info.get("source")
        env["model_path"] = info.get("model_path")
        env["model_type"] = info.get("model_type")
        if info.get("source") == "builtin-tiny":
            notes.append("no --model given: ran on a built-in tiny Qwen2 (2 layers, hidden 64) built locally")
        elif info.get("source") == "tiny-replica":
            notes.append(f"ran on a tiny replica of {model} (same class and module names, 2 layers, small dims)")
        env["symptoms_from"] = symptom_source

        ctx = {
            "case_id": cid,
            "probe": spec.id,
            "model_path": info.get("model_path"),
            "model_source": info.get("source"),
            "config_dtype": info.get("config_dtype"),
            "model_type": info.get("model_type"),
            "device": dev,
            "trust_remote_code": trust_remote_code,
            "timeout": timeout,
            "options": options or {},
        }
        phases: dict[str, PhaseResult] = {}
        descriptions = getattr(module, "DESCRIPTIONS", {})
        for name in _phase_names(module, spec, cid):
            self._status(f"{spec.id}: {name} — {descriptions.get(name, '')}".rstrip(" —"))
            workdir = tempfile.mkdtemp(prefix=f"{name}-", dir=self._tmp)
            status, result, lines = self._run(spec.module, name, {**ctx, "phase": name, "workdir": workdir}, timeout)
            phases[name] = self._phase_result(name, descriptions.get(name, ""), status, result, lines, holder, notes)

        verdict, vnotes = _decide(module, cid, phases, env)
        notes.extend(vnotes)
        extra = {k: v for k, v in phases.items() if k not in ("baseline", "treatment")}
        return ProbeResult(
            case_id=cid,
            probe=spec.id,
            verdict=verdict,
            baseline=phases.get("baseline", PhaseResult(name="baseline")),
            treatment=phases.get("treatment", PhaseResult(name="treatment")),
            extra=extra,
            environment=env,
            notes=notes,
            seconds=round(time.perf_counter() - t_start, 3),
        )

    def _phase_result(
        self, name: str, description: str, status: dict, result: dict, lines: list[str], holder: Any, notes: list[str]
    ) -> PhaseResult:
        text = "\n".join(lines)
        metrics = _metrics_from_text(text)
        for k, v in (result.get("metrics") or {}).items():
            metrics[k] = [float(x) for x in v]
        evidence: list[str] = []
        if holder is not None:
            from assistant.match.symptoms import find_evidence

            evidence = find_evidence(holder, text, metrics)
        wstatus = status.get("status")
        if wstatus == "timeout":
            pstatus = PhaseStatus.timeout
        elif wstatus == "crashed" or not result:
            pstatus = PhaseStatus.crashed
        else:
            pstatus = PhaseStatus(result.get("status", "ok"))
        detected = result.get("detected")
        matched = bool(evidence)
        if detected is None:
            reproduced: bool | None = matched if pstatus in (PhaseStatus.ok, PhaseStatus.raised) else None
        else:
            reproduced = bool(detected)
            if holder is not None and matched != reproduced and result.get("check_matcher", True):
                notes.append(
                    f"{name}: the probe {'saw' if reproduced else 'did not see'} the failure but the "
                    f"case's symptom patterns {'did not match' if not matched else 'matched'} its output"
                )
        detail = result.get("detail", "")
        if pstatus is PhaseStatus.timeout:
            detail = f"timed out after {status.get('seconds')} s"
        elif pstatus is PhaseStatus.crashed:
            sig = status.get("signal")
            detail = (
                f"killed by signal {sig}" + (" (SIGKILL: out of memory?)" if sig == 9 else "")
                if sig
                else f"exited with status {status.get('rc')}"
            )
        return PhaseResult(
            name=name,
            description=description,
            reproduced=reproduced,
            evidence=evidence,
            seconds=float(status.get("seconds", 0.0)),
            status=pstatus,
            exception=result.get("exception"),
            exception_chain=result.get("exception_chain", []),
            detail=detail,
            metrics=metrics,
            info=result.get("info", {}),
            output_tail=_tail(lines),
        )


def _local_versions() -> dict:
    from probes.worker import versions

    return versions()


def default_decide(phases: dict[str, PhaseResult], not_reproduced_note: str = "") -> tuple[Verdict, list[str]]:
    """confirmed / not-reproduced / fix-ineffective / error from baseline and treatment."""
    b, t = phases.get("baseline"), phases.get("treatment")
    notes: list[str] = []
    if b is None or t is None:
        return Verdict.error, ["the probe did not define baseline and treatment"]
    for ph in (b, t):
        if ph.status in (PhaseStatus.timeout, PhaseStatus.crashed):
            return Verdict.error, [f"{ph.name} {ph.status.value}: {ph.detail}"]
    if b.reproduced:
        if t.reproduced:
            return Verdict.fix_ineffective, ["the treatment still shows the symptom"]
        if t.status is PhaseStatus.raised:
            return Verdict.error, [f"the treatment failed differently: {t.exception}"]
        return Verdict.confirmed, notes
    if b.status is PhaseStatus.raised:
        return Verdict.error, [f"the baseline failed differently: {b.exception}"]
    if not_reproduced_note:
        notes.append(not_reproduced_note)
    return Verdict.not_reproduced, notes


def _decide(module: Any, case_id: str, phases: dict[str, PhaseResult], env: dict) -> tuple[Verdict, list[str]]:
    fn = getattr(module, "decide", None)
    if callable(fn):
        out = fn(case_id, phases, env)
        if out is not None:
            return out
    return default_decide(phases, getattr(module, "NOT_REPRODUCED_NOTE", ""))


# --------------------------------------------------------------------------- entry points


def run_probe(
    case_id: str,
    *,
    model: str | None = None,
    tiny_replica: bool = False,
    device: str = "auto",
    timeout: float = 180.0,
    on_output: OutputFn | None = None,
    on_status: OutputFn | None = None,
    trust_remote_code: bool = False,
    python: str | None = None,
    options: dict | None = None,
) -> ProbeResult:
    """Run the probe for *case_id* (a KB case id or a probe id) and return its result.

    *on_output* receives every output line of the phases as they run; *on_status* a short
    line when a phase starts. Raises :class:`ProbeLookupError` for an unknown id or a bad
    ``--model`` path; everything that goes wrong inside the probe is an ``error`` verdict.
    *options* are probe settings (``trl-help probe --set KEY=VALUE``), e.g. target_modules,
    per_device_train_batch_size / num_generations / num_processes for the batch check.
    """
    _, spec, _ = resolve(case_id)
    with ProbeSession(preload=spec.preload, on_output=on_output, on_status=on_status, python=python) as s:
        try:
            return s.run(
                case_id,
                model=model,
                tiny_replica=tiny_replica,
                device=device,
                timeout=timeout,
                trust_remote_code=trust_remote_code,
                options=options,
            )
        except WorkerError as exc:
            cid, spec, _ = resolve(case_id)
            ph = PhaseResult(name="baseline", status=PhaseStatus.crashed, detail=str(exc)[:2000])
            return ProbeResult(
                case_id=cid,
                probe=spec.id,
                verdict=Verdict.error,
                baseline=ph,
                treatment=PhaseResult(name="treatment"),
                environment=s.env,
                notes=[f"probe worker failed: {str(exc).splitlines()[0]}"],
            )
