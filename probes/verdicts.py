"""From what the worker reported to a verdict: each phase's result (status, symptom evidence found by
`explain`'s matcher, metrics) and the rule that turns baseline and treatment into a verdict."""

from __future__ import annotations

import json
from typing import Any

from probes.contract import Probe
from probes.result import PhaseResult, PhaseStatus, Verdict

#: lines of a phase's output kept in ``PhaseResult.output_tail``
TAIL_LINES = 60


def tail(lines: list[str], n: int = TAIL_LINES) -> str:
    return "\n".join(lines[-n:])


def metrics_from_text(text: str) -> dict[str, list[float]]:
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


def phase_result(
    name: str, description: str, status: dict, result: dict, lines: list[str], holder: Any, notes: list[str]
) -> PhaseResult:
    """A phase's result from the worker's status, the phase's own output dict and its printed lines."""
    text = "\n".join(lines)
    metrics = metrics_from_text(text)
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
        output_tail=tail(lines),
    )


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


def decide(probe: Probe, case_id: str, phases: dict[str, PhaseResult], env: dict) -> tuple[Verdict, list[str]]:
    """The probe's own verdict rule, else the default one."""
    out = probe.decide(case_id, phases, env)
    if out is not None:
        return out
    return default_decide(phases, probe.not_reproduced_note)
