"""The package's module-level import graph (assistant + probes) has no cycle, and the light
paths (parse, kb) import no ML library at module level."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("assistant", "probes")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _graph() -> dict[str, set[str]]:
    modules = {_module_name(p): p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py")}
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for name, path in modules.items():
        for node in ast.parse(path.read_text(encoding="utf-8")).body:  # module level only
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                targets = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            graph[name].update(t for t in targets if t in modules and t != name)
    return graph


def test_no_import_cycle():
    graph = _graph()
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(m: str) -> None:
        state[m] = 1
        stack.append(m)
        for n in sorted(graph[m]):
            if state.get(n) == 1:
                raise AssertionError("import cycle: " + " -> ".join(stack[stack.index(n) :] + [n]))
            if n not in state:
                visit(n)
        stack.pop()
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m)


def test_parse_and_kb_import_no_ml_library_at_module_level():
    heavy = {"torch", "transformers", "sentence_transformers", "trl", "peft", "faiss", "onnxruntime"}
    for pkg in ("assistant/parse", "assistant/kb"):
        for path in (ROOT / pkg).rglob("*.py"):
            for node in ast.parse(path.read_text(encoding="utf-8")).body:
                names = (
                    [a.name for a in node.names]
                    if isinstance(node, ast.Import)
                    else [node.module or ""]
                    if isinstance(node, ast.ImportFrom)
                    else []
                )
                assert not any(n.split(".")[0] in heavy for n in names), (path, names)


def _all_imports(path: Path) -> set[str]:
    """Every module a file imports, at module level or inside functions."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.add(node.module)
    return out


#: what renders a Diagnosis for a reader: it must get everything from the Diagnosis itself
RENDERERS = [
    "assistant/report/text.py",
    "assistant/report/markdown.py",
    "assistant/report/formats.py",
    "assistant/report/candidates.py",
    "assistant/report/version_hint.py",
    "assistant/triage/reply.py",
    "assistant/triage/run.py",
    "assistant/triage/render_markdown.py",
    "assistant/triage/render_table.py",
    "assistant/triage/render_csv.py",
    "assistant/triage/render_json.py",
    "assistant/tui/render.py",
    "assistant/tui/screens/main.py",
]


def test_no_renderer_reads_the_kb():
    for rel in RENDERERS:
        imported = _all_imports(ROOT / rel)
        assert not any(m == "assistant.kb" or m.startswith("assistant.kb.") for m in imported), (rel, imported)
        src = (ROOT / rel).read_text(encoding="utf-8")
        assert ".kb." not in src and "kb.cases" not in src, rel


def test_no_module_imports_usage_error_from_the_cli_entry_point():
    for pkg in PACKAGES:
        for path in (ROOT / pkg).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.ImportFrom) and node.module == "assistant.cli.main":
                    assert "UsageError" not in {a.name for a in node.names}, path


def test_no_code_reads_outside_the_repository():
    outside = ("../shared", '"shared"', "'shared'", 'parent / "shared', "parent / 'shared")
    for pkg in (*PACKAGES, "tests"):
        for path in (ROOT / pkg).rglob("*.py"):
            if path.resolve() == Path(__file__).resolve():
                continue
            src = path.read_text(encoding="utf-8")
            assert not any(s in src for s in outside), path
