"""Which probe confirms a case: ids → spec, KB case and the probe object; what a probe needs installed.

Import-light (no torch): runs in the CLI process.
"""

from __future__ import annotations

import importlib
import importlib.util
from typing import Any

from probes.contract import Probe
from probes.registry import CASE_TO_PROBE, SPECS, ProbeSpec

#: distribution name -> import name (find_spec needs the latter)
_IMPORT_NAME = {"flash-attn": "flash_attn"}


class ProbeLookupError(LookupError):
    """Unknown case or probe id, or a bad model path (front ends turn it into a usage error)."""


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


def load_probe(spec: ProbeSpec) -> Probe:
    """The `Probe` a spec's module exposes as ``PROBE`` (the contract in `probes.contract`)."""
    module = importlib.import_module(spec.module)
    probe = module.__dict__.get("PROBE")
    if not isinstance(probe, Probe):
        raise TypeError(f"{spec.module} does not define PROBE = <a probes.contract.Probe subclass>()")
    return probe


def symptom_holder(case_id: str, case: Any, probe: Probe):
    """Something with ``.symptoms`` for find_evidence: the KB case, else the probe's fallback."""
    if case is not None:
        return case, "kb"
    fb = probe.fallback_symptoms.get(case_id)
    if not fb:
        return None, "none"
    from types import SimpleNamespace

    from assistant.kb.model import Symptoms

    return SimpleNamespace(id=case_id, symptoms=Symptoms.model_validate(fb)), "probe-fallback"
