"""A probe run: one worker process (shared by several probes), the model directory, each phase in a
forked child with a timeout, the symptoms checked with `explain`'s matcher, then the verdict."""

from __future__ import annotations

import importlib.util
import json
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from probes.contract import PhaseContext, SetupContext
from probes.resolve import _IMPORT_NAME, ProbeLookupError, load_probe, missing_packages, resolve, symptom_holder
from probes.result import PhaseResult, PhaseStatus, ProbeResult, Verdict
from probes.verdicts import decide, phase_result, tail
from probes.worker_client import OutputFn, Worker, WorkerError


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
        self.worker: Worker | None = None
        self.env: dict = {}
        self._models: dict[tuple, dict] = {}
        self._loaded: set[str] = set()
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
            self.worker = Worker(self.on_output, self.python)
            payload, _ = self.worker.command({"cmd": "env"}, 120)
            self.env = payload.get("env", {})
        todo = [m for m in extra_preload if m not in self._loaded]
        if todo:
            self._status("importing " + ", ".join(todo))
            self.worker.command({"cmd": "preload", "modules": todo}, 300)
            self._loaded |= set(todo)
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
        setup = SetupContext(
            workdir=workdir, user_model=model, tiny_replica=tiny_replica, trust_remote_code=trust_remote_code
        )
        self._status("preparing the model" + (" (tiny replica)" if tiny_replica else ""))
        status, result, lines = self._run("probes._setup", "setup", setup.to_dict(), timeout)
        if result.get("status") != "ok" or status.get("status") != "done":
            pr = PhaseResult(
                name="setup",
                status=PhaseStatus.raised if result else PhaseStatus.crashed,
                exception=result.get("exception"),
                output_tail=tail(lines),
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
        probe = load_probe(spec)
        holder, symptom_source = symptom_holder(cid, case, probe)
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
        if model:  # checked before any phase runs
            where = Path(model)
            if not where.exists():
                raise ProbeLookupError(f"--model {model}: no such directory (probes never download)")
            if not where.is_dir():
                raise ProbeLookupError(f"--model {model}: a file; give the model's directory")
            if not (where / "config.json").is_file():
                raise ProbeLookupError(f"--model {model}: not a model directory (no config.json)")
        if self.python is None:  # this interpreter: ask importlib, without starting the worker
            missing = missing_packages(spec)
            versions = _local_versions()
        else:  # another interpreter (`--versions`): what *it* has installed decides
            self._ensure_worker([])
            versions = dict(self.env.get("versions") or {})
            missing = [p for p in spec.packages if not versions.get(p)]
        if missing:
            hint = {
                "deepspeed": "deepspeed is not installed (pip install deepspeed; on CPU "
                "DS_BUILD_OPS=0 pip install deepspeed)",
                "bitsandbytes": "bitsandbytes is not installed (and needs CUDA)",
            }
            reason = "; ".join(hint.get(m, f"{m} is not installed") for m in missing)
            if spec.cuda and "bitsandbytes" in missing:
                reason += "; this probe needs a CUDA GPU"
            return skipped(reason, {"versions": versions})

        if self.python is None:
            preload = [m for m in spec.preload if importlib.util.find_spec(_IMPORT_NAME.get(m, m))]
        else:
            preload = [m for m in spec.preload if versions.get(m)]
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
        why_not = probe.skip_reason(env)
        if why_not:
            return skipped(why_not, env)

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
        if info.get("source") == "user" and str((options or {}).get("memory_check", "on")).lower() != "off":
            from probes.memory import too_big

            too_much = too_big(str(info.get("model_path")), info.get("config_dtype"), dev)
            if too_much:
                return skipped(too_much, env)

        phases: dict[str, PhaseResult] = {}
        descriptions = probe.descriptions
        for name in probe.phases(cid, spec.extra_phases):
            self._status(f"{spec.id}: {name} — {descriptions.get(name, '')}".rstrip(" —"))
            ctx = PhaseContext(
                case_id=cid,
                probe=spec.id,
                phase=name,
                workdir=tempfile.mkdtemp(prefix=f"{name}-", dir=self._tmp),
                model_path=str(info.get("model_path")),
                model_source=info.get("source"),
                model_type=info.get("model_type"),
                config_dtype=info.get("config_dtype"),
                device=dev,
                trust_remote_code=trust_remote_code,
                timeout=timeout,
                options=options or {},
            )
            status, result, lines = self._run(spec.module, name, ctx.to_dict(), timeout)
            phases[name] = phase_result(name, descriptions.get(name, ""), status, result, lines, holder, notes)

        verdict, vnotes = decide(probe, cid, phases, env)
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


def _local_versions() -> dict:
    from probes.worker import versions

    return versions()


def worker_failed_result(case_id: str, env: dict, exc: Exception) -> ProbeResult:
    """The `error` result of a run whose worker process died or stopped answering."""
    cid, spec, _ = resolve(case_id)
    first = (str(exc).splitlines() or [type(exc).__name__])[0]
    return ProbeResult(
        case_id=cid,
        probe=spec.id,
        verdict=Verdict.error,
        baseline=PhaseResult(name="baseline", status=PhaseStatus.crashed, detail=str(exc)[:2000]),
        treatment=PhaseResult(name="treatment"),
        environment=env,
        notes=[f"probe worker failed: {first}"],
    )


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
            return worker_failed_result(case_id, s.env, exc)
