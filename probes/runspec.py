"""The user's run, as a probe should reproduce it: settings read from their log, their config
file and `--set`, each value remembering where it came from (defaults are the probe's own).

Precedence: ``--set`` over ``--config`` over the log; a probe falls back to its defaults for
anything left unset and says so.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

Source = Literal["log", "config", "--set"]

#: config-file keys (TRL/transformers YAML or JSON, accelerate config, DeepSpeed JSON) -> probe setting
_ALIASES = {
    "train_micro_batch_size_per_gpu": "per_device_train_batch_size",
    "num_processes": "num_processes",
    "stage": "zero_stage",
}


class RunSpec(BaseModel):
    """Settings of the user's run that a probe may use, with their sources."""

    settings: dict[str, str | int | float | bool] = Field(default_factory=dict)
    sources: dict[str, Source] = Field(default_factory=dict)

    def options(self) -> dict[str, str]:
        """As probe options (`--set` style strings)."""
        return {k: str(v) for k, v in self.settings.items()}

    def describe(self, used: list[str] | None = None) -> str:
        """`per_device_train_batch_size=6 (from the log), ...` for the keys in *used* (all by default)."""
        keys = [k for k in (used if used is not None else sorted(self.settings)) if k in self.settings]
        return ", ".join(f"{k}={self.settings[k]} (from {_where(self.sources[k])})" for k in keys)


def _where(source: Source) -> str:
    return {"log": "the log", "config": "your config", "--set": "--set"}[source]


def _flatten(data: dict, out: dict) -> None:
    for key, value in data.items():
        if isinstance(value, dict):
            _flatten(value, out)
        elif isinstance(value, (str, int, float, bool)):
            out[_ALIASES.get(key, key)] = value


def read_config(path: Path) -> dict[str, str | int | float | bool]:
    """Scalar settings of a YAML or JSON config (nested sections flattened, known aliases mapped)."""
    text = Path(path).read_text(encoding="utf-8")
    if Path(path).suffix.lower() == ".json":
        data = json.loads(text)
    else:
        import yaml

        data = yaml.safe_load(text)
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a mapping of settings at the top level")
    out: dict[str, str | int | float | bool] = {}
    _flatten(data, out)
    return out


def build_run_spec(
    log_settings: dict | None = None, config: Path | None = None, sets: dict[str, str] | None = None
) -> RunSpec:
    """Merge the three sources (later ones win: log < config < --set)."""
    spec = RunSpec()
    layers: list[tuple[Source, dict]] = [
        ("log", log_settings or {}),
        ("config", read_config(config) if config else {}),
        ("--set", sets or {}),
    ]
    for source, values in layers:
        for key, value in values.items():
            spec.settings[key] = value
            spec.sources[key] = source
    return spec
