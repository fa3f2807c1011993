"""Load KB cases from YAML, reporting every problem as ``file: field: message``."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

import yaml
from pydantic import ValidationError

from assistant.kb.model import Case

try:  # the C loader is ~10x faster; fall back when libyaml is absent
    _Loader: type = yaml.CSafeLoader
except AttributeError:  # pragma: no cover
    _Loader = yaml.SafeLoader


def default_kb_dir() -> Path:
    """The KB shipped with the package (``kb/`` next to ``assistant/``, or inside the wheel)."""
    here = Path(__file__).resolve().parent
    for candidate in (here.parent.parent / "kb", here.parent / "_kb"):
        if (candidate / "cases").is_dir():
            return candidate
    return here.parent.parent / "kb"


@dataclass(frozen=True)
class Problem:
    """One validation problem, printed as ``file: field: message``."""

    file: str
    field: str
    message: str

    def __str__(self) -> str:
        return f"{self.file}: {self.field}: {self.message}"


class KBProblemsError(ValueError):
    """The KB has problems (`trl-help kb validate` lists them): the user's KB to fix, exit 2."""


@dataclass
class KB:
    """Loaded cases plus their resolved fixture texts."""

    root: Path
    cases: dict[str, Case] = field(default_factory=dict)
    positives: dict[str, list[str]] = field(default_factory=dict)
    negatives: dict[str, list[tuple[str, str | None]]] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)
    digest: str = ""
    #: per case, the context keywords no healthy log contains (see assistant.kb.healthy)
    keywords: dict[str, tuple[str, ...]] = field(default_factory=dict)
    #: shapes of the lines healthy runs print (see assistant.kb.healthy.background_lines)
    background: frozenset[str] = frozenset()
    #: every symptom pattern's required literal groups (assistant.match.prefilter), computed once
    #: per KB version and pickled with it: parsing ~800 regexes costs ~0.2 s on a cold start
    prefilter: dict[tuple[str, str], tuple[tuple[str, ...], ...]] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.cases)


def _loc(err) -> str:
    return ".".join(str(p) for p in err.get("loc", ())) or "<root>"


def load_case_file(path: Path) -> tuple[Case | None, list[Problem]]:
    """Parse one case file; never raises for bad content."""
    name = str(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        return None, [Problem(name, "<file>", f"cannot read: {exc.strerror}")]
    try:
        data = yaml.load(raw.decode("utf-8"), Loader=_Loader)
    except UnicodeDecodeError:
        return None, [Problem(name, "<file>", "not UTF-8 text")]
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark else "<yaml>"
        return None, [Problem(name, where, f"invalid YAML: {getattr(exc, 'problem', exc)}")]
    if not isinstance(data, dict):
        return None, [Problem(name, "<root>", "expected a mapping of case fields")]
    try:
        case = Case.model_validate(data)
    except ValidationError as exc:
        return None, [Problem(name, _loc(e), e["msg"].removeprefix("Value error, ")) for e in exc.errors()]
    if case.id != path.stem:
        return None, [Problem(name, "id", f"id {case.id!r} must equal the file stem {path.stem!r}")]
    return case, []


def _fixture_text(kb_root: Path, case_id: str, fx, where: str, problems: list[Problem], name: str):
    if fx.text is not None:
        return fx.text
    p = kb_root / "fixtures" / case_id / fx.file
    try:
        return p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        problems.append(Problem(name, where, f"fixture file {p} unreadable: {exc}"))
        return None


#: what load_kb derives beyond the files (background lines, keywords less those healthy logs print)
#: is part of the digest: bump it when that derivation changes, so no KB, index or answer cached by an
#: older trl-help is reused (the files alone would hash the same)
KB_DERIVED_VERSION = 1


def kb_digest(root: Path) -> str:
    """Content hash of every case, fixture and log file and of `KB_DERIVED_VERSION` (keys the KB pickle,
    the index and memoised answers)."""
    h = hashlib.sha256(f"derived-v{KB_DERIVED_VERSION}".encode())
    for sub in ("cases", "fixtures", "logs"):
        base = root / sub
        if not base.is_dir():
            continue
        for p in sorted(base.rglob("*")):
            if p.is_file():
                h.update(str(p.relative_to(root)).encode())
                h.update(p.read_bytes())
    return h.hexdigest()[:16]


def load_kb_cached(root: Path | None = None) -> KB:
    """`load_kb`, memoised on disk per KB content hash (YAML + validation of 114 cases costs
    ~1 s; the pickle loads in milliseconds). Only problem-free KBs are cached."""
    import os
    import pickle
    import tempfile

    root = Path(root) if root else default_kb_dir()
    digest = kb_digest(root)
    from assistant.cache import cache_root

    path = cache_root() / f"kb-{digest}.pickle"
    try:
        kb = pickle.loads(path.read_bytes())
        if isinstance(kb, KB) and kb.digest == digest:
            kb.root = root
            return kb
    except (OSError, pickle.UnpicklingError, EOFError, AttributeError, TypeError, ValueError):
        pass
    kb = load_kb(root, digest=digest)
    if not kb.problems:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".kb-")
            with os.fdopen(fd, "wb") as fh:
                pickle.dump(kb, fh, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(tmp, path)
            from assistant.cache import prune_siblings

            prune_siblings(path, "kb-*.pickle", spare=4)  # other KB versions (--kb, older releases)
        except OSError:
            pass
    return kb


def load_kb(root: Path | None = None, digest: str | None = None) -> KB:
    """Load every ``cases/*.yaml`` under *root*; problems are collected, not raised."""
    root = Path(root) if root else default_kb_dir()
    kb = KB(root=root)
    case_dir = root / "cases"
    if not case_dir.is_dir():
        kb.problems.append(Problem(str(case_dir), "<dir>", "no cases/ directory"))
        return kb
    for path in sorted(case_dir.glob("*.y*ml")):
        case, problems = load_case_file(path)
        kb.problems.extend(problems)
        if case is None:
            continue
        if case.id in kb.cases:
            kb.problems.append(Problem(str(path), "id", f"duplicate id {case.id!r}"))
            continue
        kb.cases[case.id] = case
        name = str(path)
        pos = []
        for i, fx in enumerate(case.fixtures.positive):
            t = _fixture_text(root, case.id, fx, f"fixtures.positive.{i}", kb.problems, name)
            if t is not None:
                pos.append(t)
        neg = []
        for i, fx in enumerate(case.fixtures.negative):
            t = _fixture_text(root, case.id, fx, f"fixtures.negative.{i}", kb.problems, name)
            if t is not None:
                neg.append((t, fx.confused_with))
        kb.positives[case.id] = pos
        kb.negatives[case.id] = neg
    from assistant.kb.healthy import background_lines, foreground_keywords, healthy_logs

    logs = healthy_logs(root)
    kb.background = background_lines(logs)
    kb.keywords = {cid: foreground_keywords(case, logs) for cid, case in kb.cases.items()}
    from assistant.match.prefilter import table_for

    kb.prefilter = table_for(kb.cases.values())
    kb.digest = digest or kb_digest(root)
    return kb
