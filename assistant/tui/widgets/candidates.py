"""The ranked candidate cases, with confidence badges and the version verdict."""

from __future__ import annotations

from textual.widgets import OptionList
from textual.widgets.option_list import Option

from assistant.match.diagnosis import Diagnosis
from assistant.tui.messages import CaseSelected
from assistant.tui.render import candidate_prompt


class CandidateList(OptionList):
    DEFAULT_CSS = """
    CandidateList {
        height: 1fr;
        border: round $primary 50%;
        border-title-color: $text-primary;
        padding: 0;
    }
    CandidateList:focus {
        border: round $primary;
    }
    CandidateList > .option-list--option {
        padding: 0 1;
    }
    """

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.border_title = "Candidates"

    def show(self, d: Diagnosis) -> None:
        related = d.verdict == "no-known-case"
        self.clear_options()
        options: list[Option] = []
        for i, m in enumerate(d.matches):
            options.append(Option(candidate_prompt(i + 1, m, related=related), id=f"case-{i}"))
        self.add_options(options)
        self.border_title = "Nearest related" if related else "Candidates"
        self.highlighted = 0 if options and not related else None

    def clear(self) -> None:
        self.clear_options()
        self.border_title = "Candidates"

    def _on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        event.stop()
        self.post_message(CaseSelected(event.option_index))

    def _on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.post_message(CaseSelected(event.option_index))
