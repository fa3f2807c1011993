"""Side by side: the probe on the user's versions and on the installed stack."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel


class StackResult(BaseModel):
    """One stack's run: its label, pins and the probe result (or why it could not run)."""

    label: str
    versions: dict[str, str]
    result: dict[str, Any] | None = None
    error: str | None = None

    @property
    def verdict(self) -> str:
        if self.error is not None:
            return "error"
        return str((self.result or {}).get("verdict", "error"))


class Comparison(BaseModel):
    """Both stacks and the conclusion drawn from them."""

    case_id: str
    yours: StackResult
    installed: StackResult

    @property
    def conclusion(self) -> str:
        a, b = self.yours.verdict, self.installed.verdict
        # for the conclusion, a partial reproduction counts as one (the result says which it was)
        a, b = ("confirmed" if v == "reproduced-in-part" else v for v in (a, b))
        if a == "confirmed" and b == "not-reproduced":
            return "upgrading fixes it"
        if a == "confirmed" and b == "confirmed":
            return "upgrading does not fix it: apply the fix"
        if a == "not-reproduced" and b == "not-reproduced":
            return "not reproduced on either stack"
        if a == "error":
            return "your versions could not be probed here"
        return f"your versions: {a}; installed: {b}"

    def to_json(self) -> str:
        import json

        return json.dumps(
            {
                "case_id": self.case_id,
                "conclusion": self.conclusion,
                "yours": self.yours.model_dump(),
                "installed": self.installed.model_dump(),
            },
            indent=2,
        )

    def render_text(self) -> str:
        def short(s: StackResult) -> str:
            vers = ", ".join(f"{k} {v}" for k, v in sorted(s.versions.items()) if v)
            why = f" ({s.error})" if s.error else ""
            return f"{s.label} ({vers}): {s.verdict}{why}"

        return f"{self.case_id}\n  {short(self.yours)}\n  {short(self.installed)}\n  → {self.conclusion}"
