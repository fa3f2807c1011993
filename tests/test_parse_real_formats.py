"""Real formats the parser must read: errors inside inline code or a one-line fence (issue 10,
failure mode 3), transformers 5 metric lines."""

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


def test_transformers5_quoted_metric_values_are_read():
    """transformers >= 5 logs `{'loss': '0', ...}` (values as strings); a line from a real GRPO run."""
    line = (
        "{'loss': '-2.98e-08', 'grad_norm': '2.515', 'learning_rate': '7.5e-05', 'num_tokens': '124', "
        "'rewards/format_reward/mean': '1', 'rewards/format_reward/std': '0', 'reward': '0.03125', "
        "'reward_std': '0.4375', 'frac_reward_zero_std': '0', 'entropy': '6.206', 'epoch': '0.25'}"
    )
    series = parse_text(line + "\n").metric_series()
    assert series["loss"] == [-2.98e-08]
    assert series["grad_norm"] == [2.515]
    assert series["frac_reward_zero_std"] == [0.0]


def test_settings_given_as_command_line_flags_are_read():
    cmd = (
        "accelerate launch --num_processes 2 src/open_r1/grpo.py --per_device_train_batch_size 6 "
        "--num_generations 4 --gradient_accumulation_steps 2\n"
    )
    settings = parse_text(cmd).settings
    assert settings["per_device_train_batch_size"] == 6
    assert settings["num_generations"] == 4
    assert settings["gradient_accumulation_steps"] == 2
    assert settings["world_size"] == 2


# ms-swift#1898: ms-swift 2.x logs at import what would fail without vLLM / LMDeploy; the paste was
# cut inside the traceback of the real error (a TypeError in push_to_ms.py)
SWIFT_NOTICES_THEN_CUT_TRACEBACK = (
    "[INFO:swift] No vLLM installed, if you are using vLLM, you will get "
    "`ImportError: cannot import name 'get_vllm_engine' from 'swift.llm'`\n"
    "[INFO:swift] No LMDeploy installed, if you are using LMDeploy, you will get "
    "`ImportError: cannot import name 'prepare_lmdeploy_engine_template' from 'swift.llm'`\n"
    "Traceback (most recent call last):\n"
    '  File "/XXX/swift/swift/utils/import_utils.py", line 64, in _get_module\n'
    "    return importlib.import_module('.' + module_name, self.__name__)\n"
)


def test_exception_quoted_in_an_info_notice_is_not_the_failure():
    report = parse_text(SWIFT_NOTICES_THEN_CUT_TRACEBACK)
    errors = [e for e in [report.primary, *report.chain, *report.other_errors] if e is not None]
    assert errors, "the cut traceback is still reported"
    assert all(e.exception != "ImportError" for e in errors)


@pytest.mark.parametrize(
    "line",
    [
        "[ERROR:swift] `ImportError: cannot import name 'get_vllm_engine' from 'swift.llm'`",
        "qwen2 lora 报错：`ImportError: cannot import name 'get_vllm_engine' from 'swift.llm'`",
        "[INFO:swift] loading failed: ImportError: cannot import name 'get_vllm_engine' from 'swift.llm'",
    ],
    ids=["error-level", "prose", "info-unquoted"],
)
def test_exception_mid_line_outside_a_notice_is_still_read(line):
    primary = parse_text(line + "\n").primary
    assert primary is not None and primary.exception == "ImportError"


def test_quoted_notice_is_cut_from_the_evidence_text():
    """What a notice says *would* fail is not searched by symptom patterns (ms-swift#1898's lines):
    the evidence text keeps the notice up to the quoted exception, and lines that raise keep theirs."""
    report = parse_text(SWIFT_NOTICES_THEN_CUT_TRACEBACK)
    assert "get_vllm_engine" not in report.match_text
    assert "[INFO:swift] No vLLM installed" in report.match_text
    assert "import_utils.py" in report.match_text


@pytest.mark.parametrize(
    "line",
    [
        "[ERROR:swift] `ImportError: cannot import name 'get_vllm_engine' from 'swift.llm'`",
        "[INFO:swift] loading failed: ImportError: cannot import name 'get_vllm_engine' from 'swift.llm'",
    ],
    ids=["error-level", "info-unquoted"],
)
def test_raised_exception_stays_in_the_evidence_text(line):
    assert "get_vllm_engine" in parse_text(line + "\n").match_text


def test_swift_notice_alone_is_no_swift_api_evidence():
    """ms-swift-python-api-major-version's swift.llm pattern has no look-behind for the notice any
    more: the parser's cut keeps the notice from firing it, a raised swift.llm ImportError still does."""
    from assistant.kb.load import load_kb
    from assistant.match.structural import structural

    case = load_kb().cases["ms-swift-python-api-major-version"]
    notice = parse_text(SWIFT_NOTICES_THEN_CUT_TRACEBACK)
    raised = parse_text("ImportError: cannot import name 'get_vllm_engine' from 'swift.llm'\n")
    values = structural(case, notice, {}, set()).values
    assert values["msg"] == 0 and values["text"] == 0
    assert structural(case, raised, {}, set()).values["msg"] == 1.0
