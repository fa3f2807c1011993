"""`trl-help kb new --from-issue N --issues FILE`: a Case YAML skeleton from an exported issue.

What can be read from the issue is filled in (id from the title, symptoms from the parsed
exception, frames, the issue URL as a report reference, the issue text as the positive fixture);
everything a maintainer must research is marked TODO. The file loads with the Case model, so
`trl-help kb validate` checks it — but the TODO strings must be replaced before it is merged.
"""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from assistant.kb.model import PACKAGES

_STOP = {
    "a",
    "an",
    "the",
    "when",
    "with",
    "in",
    "on",
    "of",
    "for",
    "to",
    "and",
    "is",
    "it",
    "i",
    "my",
    "error",
    "bug",
    "issue",
    "using",
    "while",
    "after",
    "from",
    "at",
    "by",
    "not",
    "does",
    "doesnt",
    "cannot",
}


def case_id_from_title(title: str, number: int) -> str:
    words = re.findall(r"[a-z0-9]+", title.lower().replace("_", "-"))
    keep = [w for w in words if w not in _STOP][:8] or [f"issue-{number}"]
    cid = "-".join(keep)[:60].strip("-")
    return cid if len(cid) >= 2 else f"issue-{number}"


#: normalised-signature placeholders -> regexes matching what they replaced
_PLACEHOLDERS = {
    "<path>": r"\S+",
    "<hex>": r"0x[0-9a-fA-F]+",
    "<model>": r"\S+",
    "<Model>": r"\w+",
    "<f>": r"[\d.e+-]+",
    "<n>": r"\d+",
    "<uuid>": r"[0-9a-f-]+",
}


class _Dumper(yaml.SafeDumper):
    pass


def _str(dumper: yaml.SafeDumper, s: str):
    style = "|" if "\n" in s else None
    if style:
        s = "\n".join(ln.rstrip() for ln in s.splitlines()) + "\n"  # block scalars cannot keep trailing spaces
    return dumper.represent_scalar("tag:yaml.org,2002:str", s, style=style)


_Dumper.add_representer(str, _str)


def build_case(issue, report) -> dict:
    from assistant.parse.signature import normalise

    head = ""
    if report.primary is not None:
        msg = report.primary.message.strip().splitlines()[0] if report.primary.message.strip() else ""
        head = f"{report.primary.short_type} {re.sub(r'[^A-Za-z ]+', ' ', msg)}"
    cid = case_id_from_title(issue.title or head, issue.number)
    title = issue.title if len(issue.title) >= 8 else f"TODO: title (issue #{issue.number})"
    symptoms: dict = {}
    if report.primary is not None:
        symptoms["exceptions"] = [report.primary.short_type]
        first = report.primary.message.strip().splitlines()[0] if report.primary.message.strip() else ""
        # the literal head of the message, cut before the first user-specific detail
        stable = re.split(r"[\"'`]|/|\b\d", first, maxsplit=1)[0].strip(" :,.(")
        if len(stable) >= 12:
            symptoms["messages"] = [{"pattern": stable, "kind": "literal"}]
        elif first:
            rx = re.escape(normalise(first)[:120])
            for ph, sub in _PLACEHOLDERS.items():
                rx = rx.replace(ph, sub)
            symptoms["messages"] = [{"pattern": rx, "kind": "regex"}]
    if "messages" not in symptoms:
        warn = next((w for w in report.warnings if len(w) >= 12), None)
        symptoms["log_patterns"] = [{"pattern": (warn or "TODO: a stable log line")[:160], "kind": "literal"}]
    frames = [p for p in report.packages_in_frames() if p in PACKAGES]
    labels = [p for p in frames if p in ("trl", "peft", "deepspeed", "accelerate", "vllm", "transformers")] or ["todo"]
    refs = (
        [{"type": "report", "url": issue.url}]
        if issue.url
        else [{"type": "report", "url": "https://github.com/TODO/TODO/issues/" + str(issue.number)}]
    )
    env = ", ".join(f"{k} {v}" for k, v in sorted(report.environment.items())) or "not in the issue"
    return {
        "id": cid,
        "title": title,
        "summary": f"TODO: what happens, in two or three sentences (from issue #{issue.number}).",
        "labels": labels,
        "symptoms": symptoms,
        "context": {"frames": frames, "settings": [], "keywords": []},
        "affected": [],
        "cause": "TODO: why it happens, precisely (read the code path in the traceback; cite the PR that fixed it).",
        "fixes": [
            {
                "title": "TODO: the fix",
                "description": "TODO: what to change and why it removes the failure.",
                "safety": "safe",
            }
        ],
        "probe": None,
        "references": refs,
        "verification": {
            "status": "unconfirmed",
            "checked": [],
            "unconfirmed": [f"TODO: everything; scaffolded from issue #{issue.number} (versions: {env})"],
        },
        "fixtures": {"positive": [{"text": issue.text.strip() + "\n", **({"source": issue.url} if issue.url else {})}]},
    }


def scaffold_case(issues_path: Path, number: int, out_dir: Path | None) -> Path:
    """Write ``<out_dir>/<id>.yaml`` for issue *number* of the export; returns the path."""
    from assistant.cli.errors import UsageError
    from assistant.parse import parse_text
    from assistant.triage.inputs import ExportError, load_issues

    try:
        batch = load_issues(issues_path)
    except ExportError as exc:
        raise UsageError(str(exc)) from None
    issue = next((i for i in batch.issues if i.number == number), None)
    if issue is None:
        bad = next((p for p in batch.problems if f"#{number}" in p), None)
        raise UsageError(bad or f"{issues_path}: issue #{number} is not in the export")
    data = build_case(issue, parse_text(issue.text))
    out_dir = Path(out_dir) if out_dir else Path("kb") / "cases"
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"{data['id']}.yaml"
    if path.exists():
        raise UsageError(f"{path} already exists; edit it or pass --out")
    head = (
        f"# Scaffolded by `trl-help kb new --from-issue {number}` — replace every TODO, add `affected`\n"
        "# ranges, a second positive fixture and negatives, then run `trl-help kb validate`.\n"
    )
    path.write_text(head + yaml.dump(data, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100))
    return path
