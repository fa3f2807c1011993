"""Cross-case checks on a loaded KB: references between cases, probes, fixtures."""

from __future__ import annotations

from pathlib import Path

from assistant.kb.load import KB, Problem, load_kb
from assistant.kb.model import Case


def known_probe_ids() -> set[str]:
    """Probe ids registered in ``probes`` (read from the registry, no heavy imports)."""
    from probes.registry import probe_ids

    return set(probe_ids())


def _matched_message_lines(case: Case, text: str) -> list[str]:
    """The case's message-pattern hits in *text*, parsed and read as the matcher reads it."""
    from assistant.match.structural import error_text, message_lines
    from assistant.parse import parse_text

    report = parse_text(text)
    hits, text_hits = message_lines(case, error_text(report), None, report.match_text or report.text, None)
    return hits + text_hits


def validate(kb: KB, probe_ids: set[str] | None = None) -> list[Problem]:
    """All problems of *kb*: load problems (schema, regexes incl. nested quantifiers) plus
    cross-references, version bounds, healthy-log firing and fixture checks."""
    from assistant.kb.healthy import all_healthy_logs, patterns_firing_on_healthy
    from assistant.kb.releases import load_releases, unreleased_bounds, unsourced_bounds

    problems = list(kb.problems)
    probe_ids = known_probe_ids() if probe_ids is None else probe_ids
    releases = load_releases(kb.root)
    healthy = all_healthy_logs(kb.root)
    for cid, case in kb.cases.items():
        name = str(kb.root / "cases" / f"{cid}.yaml")
        problems.extend(Problem(name, f, m) for f, m in unreleased_bounds(case, releases))
        problems.extend(Problem(name, f, m) for f, m in unsourced_bounds(case))
        problems.extend(Problem(name, f, m) for f, m in patterns_firing_on_healthy(case, healthy))
        for i, rel in enumerate(case.related):
            if rel == cid:
                problems.append(Problem(name, f"related.{i}", "a case cannot relate to itself"))
            elif rel not in kb.cases:
                problems.append(Problem(name, f"related.{i}", f"unknown case id {rel!r}"))
        if case.probe is not None and case.probe not in probe_ids:
            problems.append(Problem(name, "probe", f"unknown probe id {case.probe!r}"))
        for i, fx in enumerate(case.fixtures.negative):
            if fx.confused_with and fx.confused_with not in kb.cases:
                problems.append(
                    Problem(
                        name,
                        f"fixtures.negative.{i}.confused_with",
                        f"unknown case id {fx.confused_with!r}",
                    )
                )
        for i, (text, _) in enumerate(kb.negatives.get(cid, [])):
            if hits := _matched_message_lines(case, text):
                problems.append(
                    Problem(
                        name, f"fixtures.negative.{i}", f"the case's own message patterns match it: {hits[0][:120]!r}"
                    )
                )
        if not kb.positives.get(cid):
            problems.append(Problem(name, "fixtures.positive", "no readable positive fixture"))
    return problems


def validate_path(path: Path | None = None) -> tuple[list[Problem], int]:
    """Load and validate the KB at *path* (a KB root or a single case file):
    (problems, number of cases read)."""
    if path is not None and Path(path).is_file():
        from assistant.kb.load import load_case_file

        _, problems = load_case_file(Path(path))
        return problems, 1
    kb = load_kb(path)
    return validate(kb), len(kb)
