"""The typed probe contract: every registered probe module exposes a `Probe`, whose declared phases,
descriptions and fallback symptoms are consistent; the phase context is a closed set of fields."""

from __future__ import annotations

import pytest

from assistant.kb.model import Symptoms
from probes.contract import PhaseContext, Probe, SetupContext
from probes.registry import SPECS
from probes.resolve import load_probe


@pytest.mark.parametrize("probe_id", sorted(SPECS))
def test_every_probe_module_follows_the_contract(probe_id):
    spec = SPECS[probe_id]
    probe = load_probe(spec)
    assert isinstance(probe, Probe) and type(probe).run_phase is not Probe.run_phase
    for case_id in spec.cases:
        phases = probe.phases(case_id, spec.extra_phases)
        assert phases[0] == "baseline" and len(set(phases)) == len(phases), phases
        assert all(p in probe.descriptions for p in phases), (case_id, phases, probe.descriptions)
    for case_id, fields in probe.fallback_symptoms.items():
        assert case_id in spec.cases, case_id
        Symptoms.model_validate(fields)


def test_a_module_without_the_contract_is_refused():
    from probes.registry import ProbeSpec

    bad = ProbeSpec("x", "probes.tiny", ("x",), "no PROBE here")
    with pytest.raises(TypeError, match="PROBE"):
        load_probe(bad)


def test_phase_context_is_closed_and_round_trips():
    ctx = PhaseContext(case_id="c", probe="p", phase="baseline", workdir="/tmp/w", model_path="/m")
    assert PhaseContext.from_dict(ctx.to_dict()) == ctx
    with pytest.raises(TypeError, match="unknown phase context keys"):
        PhaseContext.from_dict({**ctx.to_dict(), "mp": "/elsewhere"})  # a key nothing declares
    assert ctx.replace(model_path="/r").model_path == "/r" and ctx.model_path == "/m"
    s = SetupContext(workdir="/tmp/w", user_model="/m", tiny_replica=True)
    assert SetupContext.from_dict(s.to_dict()) == s
