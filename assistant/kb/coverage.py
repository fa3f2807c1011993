"""KB coverage of a sample of real issues: ``kb/coverage/sample.jsonl``.

Each line is one issue from the public stream, labelled with the KB case that explains it or
``"none"``. Coverage is the share of issues with a case, overall, by library and by year.
A label naming no case in ``kb/cases`` is a problem (``file:line: message``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

NONE_LABEL = "none"

#: repository -> library it is counted under; every other repository is "other projects"
#: (R1 clones, fine-tuning scripts and frameworks built on the libraries below).
LIBRARY_OF_REPO: dict[str, str] = {
    "huggingface/trl": "trl",
    "huggingface/peft": "peft",
    "huggingface/transformers": "transformers",
    "huggingface/accelerate": "accelerate",
    "vllm-project/vllm": "vllm",
    "deepspeedai/DeepSpeed": "deepspeed",
    "microsoft/DeepSpeed": "deepspeed",
    "unslothai/unsloth": "unsloth",
    "unslothai/unsloth-zoo": "unsloth",
    "huggingface/open-r1": "open-r1",
    "hiyouga/LlamaFactory": "LLaMA-Factory",
    "hiyouga/LLaMA-Factory": "LLaMA-Factory",
    "modelscope/ms-swift": "ms-swift",
    "axolotl-ai-cloud/axolotl": "axolotl",
    "volcengine/verl": "verl",
    "verl-project/verl": "verl",
}
OTHER = "other projects"


class SampleIssue(BaseModel):
    """One labelled issue of the coverage sample."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    url: str = Field(pattern=r"^https://github\.com/[^/\s]+/[^/\s]+/(issues|pull)/\d+$")
    repo: str = Field(pattern=r"^[^/\s]+/[^/\s]+$")
    year: int = Field(ge=2019, le=2100)
    title: str = Field(min_length=1)
    label: str = Field(min_length=1, description="A KB case id, or 'none'.")
    reason: str = Field(min_length=10, description="Why this label: the root cause in one line.")

    @property
    def library(self) -> str:
        return LIBRARY_OF_REPO.get(self.repo, OTHER)

    @property
    def covered(self) -> bool:
        return self.label != NONE_LABEL


@dataclass(frozen=True)
class Row:
    """Covered / total for one group."""

    group: str
    covered: int
    total: int

    @property
    def share(self) -> float:
        return self.covered / self.total if self.total else 0.0


@dataclass
class Coverage:
    """The coverage table and the problems found while reading the sample."""

    overall: Row
    by_library: list[Row]
    by_year: list[Row]
    problems: list[str] = field(default_factory=list)
    cases_used: dict[str, int] = field(default_factory=dict)


def known_case_ids(kb_root: Path) -> set[str]:
    """Case ids of a KB: the stems of ``cases/*.yaml`` (the id is the file stem)."""
    return {p.stem for p in (kb_root / "cases").glob("*.yaml")}


def read_sample(path: Path) -> tuple[list[tuple[int, SampleIssue]], list[str]]:
    """Parse ``sample.jsonl`` into (line number, issue) pairs; problems name the line
    (``path:N: message``)."""
    issues: list[tuple[int, SampleIssue]] = []
    problems: list[str] = []
    seen: dict[str, int] = {}
    for n, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            item = SampleIssue.model_validate(json.loads(raw))
        except json.JSONDecodeError as exc:
            problems.append(f"{path}:{n}: not JSON: {exc.msg}")
            continue
        except ValidationError as exc:
            first = exc.errors()[0]
            loc = ".".join(str(p) for p in first["loc"]) or "<line>"
            problems.append(f"{path}:{n}: {loc}: {first['msg']}")
            continue
        if item.url in seen:
            problems.append(f"{path}:{n}: duplicate of line {seen[item.url]} ({item.url})")
            continue
        seen[item.url] = n
        issues.append((n, item))
    return issues, problems


def _rows(issues: Iterable[SampleIssue], key: Callable[[SampleIssue], object]) -> list[Row]:
    groups: dict[str, list[SampleIssue]] = {}
    for it in issues:
        groups.setdefault(str(key(it)), []).append(it)
    return [Row(g, sum(i.covered for i in items), len(items)) for g, items in groups.items()]


def compute(items: list[tuple[int, SampleIssue]], case_ids: set[str], path: Path | str = "sample.jsonl") -> Coverage:
    """Coverage of the labelled issues; a label naming no case in *case_ids* is a problem
    (``path:N: ...``) and the issue counts as not covered."""
    problems: list[str] = []
    counted: list[SampleIssue] = []
    used: dict[str, int] = {}
    for n, it in items:
        if it.covered and it.label not in case_ids:
            problems.append(f"{path}:{n}: label {it.label!r} is no case id (see `trl-help kb list`)")
            counted.append(it.model_copy(update={"label": NONE_LABEL}))
            continue
        if it.covered:
            used[it.label] = used.get(it.label, 0) + 1
        counted.append(it)
    by_lib = sorted(_rows(counted, lambda i: i.library), key=lambda r: (r.group == OTHER, -r.total, r.group))
    by_year = sorted(_rows(counted, lambda i: i.year), key=lambda r: r.group)
    overall = Row("all", sum(i.covered for i in counted), len(counted))
    return Coverage(overall, by_lib, by_year, problems, dict(sorted(used.items(), key=lambda kv: -kv[1])))


def load_coverage(kb_root: Path) -> Coverage:
    """Read ``<kb>/coverage/sample.jsonl`` and compute its coverage against ``<kb>/cases``."""
    path = kb_root / "coverage" / "sample.jsonl"
    items, problems = read_sample(path)
    cov = compute(items, known_case_ids(kb_root), path)
    cov.problems = problems + cov.problems
    return cov


def _pct(r: Row) -> str:
    return f"{100 * r.share:.0f} %"


def render_markdown(cov: Coverage) -> str:
    """The coverage table as markdown (what `kb/README.md` shows)."""
    recent = [r for r in cov.by_year if r.group.isdigit() and int(r.group) >= 2025]
    rec = Row("2025–2026", sum(r.covered for r in recent), sum(r.total for r in recent))
    out = [
        f"Coverage: **{cov.overall.covered} / {cov.overall.total} = {_pct(cov.overall)}** "
        f"(2025–2026: {rec.covered} / {rec.total} = {_pct(rec)})",
        "",
        "| library | covered | issues | coverage |",
        "|---|---:|---:|---:|",
    ]
    out += [f"| {r.group} | {r.covered} | {r.total} | {_pct(r)} |" for r in cov.by_library]
    out += ["", "| year | covered | issues | coverage |", "|---|---:|---:|---:|"]
    out += [f"| {r.group} | {r.covered} | {r.total} | {_pct(r)} |" for r in cov.by_year]
    return "\n".join(out)


def as_json(cov: Coverage) -> dict:
    """A JSON-ready dict of the coverage."""

    def rows(rs: list[Row]) -> list[dict]:
        return [{"group": r.group, "covered": r.covered, "total": r.total} for r in rs]

    return {
        "overall": {"covered": cov.overall.covered, "total": cov.overall.total},
        "by_library": rows(cov.by_library),
        "by_year": rows(cov.by_year),
        "cases_used": cov.cases_used,
        "problems": cov.problems,
    }
