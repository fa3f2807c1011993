"""Run a probe: the public entry points, gathered from the modules that implement them.

* :mod:`probes.contract` — what a probe module provides (`Probe`, `PhaseContext`, `PhaseOutput`);
* :mod:`probes.resolve` — case / probe id → spec, KB case, probe object; missing packages;
* :mod:`probes.worker_client` — the worker subprocess and its line protocol;
* :mod:`probes.session` — a run: worker, model directory, phases, verdict (`ProbeSession`, `run_probe`);
* :mod:`probes.verdicts` — phase results and the verdict rule (`default_decide`).

Import-light (no torch): the heavy work happens in :mod:`probes.worker`, a subprocess that imports
the libraries once and forks one child per phase, so an OOM, segfault or hang in a phase never takes
the caller down.
"""

from __future__ import annotations

from probes.resolve import ProbeLookupError, list_probes, load_probe, missing_packages, resolve
from probes.session import ProbeSession, run_probe
from probes.verdicts import default_decide
from probes.worker_client import OutputFn, WorkerError

__all__ = [
    "OutputFn",
    "ProbeLookupError",
    "ProbeSession",
    "WorkerError",
    "default_decide",
    "list_probes",
    "load_probe",
    "missing_packages",
    "resolve",
    "run_probe",
]
