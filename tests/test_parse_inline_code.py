"""Errors pasted inside inline code or a one-line fence (issue 10, failure mode 3): real text."""

from __future__ import annotations

import pytest

from assistant.parse import parse_text

# huggingface/alignment-handbook report kept as a fixture of dpo-ref-model-with-peft-config
ONE_LINE_FENCE = (
    "the following error is raised:\n"
    "```ValueError: You passed both a ref_model and a peft_config. For training PEFT adapters with DPO "
    "there is no need to pass a reference model.```\n"
)


@pytest.mark.parametrize(
    "text,exc,start",
    [
        (ONE_LINE_FENCE, "ValueError", "You passed both a ref_model and a peft_config"),
        ("I get\n`RuntimeError: CUDA error: device-side assert triggered`\n", "RuntimeError", "CUDA error"),
        ("~~~KeyError: 'prompt'~~~\n", "KeyError", "'prompt'"),
    ],
    ids=["one-line-fence", "inline-code", "tilde-fence"],
)
def test_error_inside_inline_code_is_the_primary(text, exc, start):
    primary = parse_text(text).primary
    assert primary is not None and primary.exception.endswith(exc)
    assert primary.message.startswith(start)


def test_language_tag_fence_is_markup_only():
    report = parse_text("```python\nfrom trl import GRPOTrainer\n```\n")
    assert report.primary is None
    assert all("```" not in ln and ln.strip() != "python" for ln in report.text.splitlines())
