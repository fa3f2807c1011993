"""Messages as today's releases word them (read off the released wheels, 2026-12-02): each must be
matched by a symptom pattern of its case, so a report from this year's versions finds the case the
older wording was written for."""

from __future__ import annotations

import pytest

from assistant.match.symptoms import first_match

#: (case id, the message as the release builds it, where it was read)
VARIANTS = [
    (
        "ppo-legacy-api-on-new-trl",
        "ImportError: cannot import name 'AutoModelForCausalLMWithValueHead' from 'trl.models' (/x/trl/models/__init__.py)",
        "trl 1.16.0",
    ),
    ("ppo-legacy-api-on-new-trl", "ModuleNotFoundError: No module named 'trl.trainer.ppo_trainer'", "trl 0.29.0"),
    (
        "trl-core-helpers-removed",
        "ImportError: cannot import name 'WANDB_PADDING' from 'trl.core' (/x/trl/core.py)",
        "trl 0.14.0",
    ),
    (
        "vlm-max-length-truncation-cuts-image-tokens",
        "ValueError: Multimodal features and tokens do not match, tokens: 640, features: 1024",
        "transformers 5.7.0 minicpmv4_6",
    ),
    (
        "vlm-max-length-truncation-cuts-image-tokens",
        "ValueError: Multimodal features and placeholder tokens do not match, tokens: 2, features: 5",
        "transformers 5.14.0 inkling",
    ),
    (
        "trl-vllm-version-mismatch",
        "TypeError: __init__() got an unexpected keyword argument 'worker_extension_cls'",
        "Python 3.9, trl 0.17 + vLLM 0.7.3",
    ),
    (
        "transformers-too-old-for-trl",
        '  File "/x/trl/trainer/sft_trainer.py", line 6, in __init__\n    super().__init__(\n'
        "TypeError: __init__() got an unexpected keyword argument 'processing_class'",
        "Python 3.9, trl 0.12 + transformers 4.45",
    ),
    (
        "trainer-tokenizer-renamed-processing-class",
        '  File "train.py", line 3, in <module>\n    trainer = SFTTrainer(\n'
        "TypeError: __init__() got an unexpected keyword argument 'tokenizer'",
        "Python 3.9, trl 0.16 - 0.24",
    ),
    (
        "reward-func-invalid-return-value",
        "    output = [r if r is not None else torch.nan for r in output]\nTypeError: 'NoneType' object is not iterable",
        "trl 0.27.0 - 1.16.0, async reward function",
    ),
    (
        "rl-framework-older-than-vllm-internals",
        "Unsloth: FAILED getting compilation_config with error = cannot import name 'CompilationLevel' from "
        "'vllm.config' (/venv/lib/python3.10/site-packages/vllm/config/__init__.py)",
        "vLLM 0.11.1",
    ),
    (
        "rl-framework-older-than-vllm-internals",
        "AttributeError: 'LRUCacheWorkerLoRAManager' object has no attribute 'get_dummy_lora_warmup_rank'",
        "vLLM 0.21 + unsloth_zoo 2026.6.1",
    ),
    (
        "dpo-hyperparams-moved-to-config",
        "ValueError: Unknown arguments from config file: ['--rpo_alpha', '1.0', '--max_prompt_length', '512']. "
        "Please remove them, add them to the dataclass, or set `fail_with_unknown_args=False`.",
        "trl 1.16.0 TrlParser",
    ),
    (
        "grpo-prompt-exceeds-vllm-max-model-len",
        "This model's maximum context length is 4096 tokens. However, your prompt contains 5000 input tokens, "
        "which exceeds this limit even without any output tokens. Please reduce the length of the input prompt.",
        "vLLM 0.32.0",
    ),
    (
        "grpo-subclass-older-than-trl",
        "AttributeError: 'MyGRPOTrainer' object has no attribute '_move_model_to_vllm'",
        "trl 0.28.0 - 1.16.0",
    ),
    (
        "accelerate-too-old-optimizer-train",
        "AttributeError: 'StableAdamW' object has no attribute 'train'",
        "transformers 4.57.6 + accelerate 0.33.0",
    ),
    (
        "base-model-tokenizer-no-chat-template",
        '  File "/x/trl/chat_template_utils.py", line 50, in has_generation_markers\n'
        '    return re.search(r"\\{%-?\\s*generation\\s*-?%\\}", chat_template) is not None\n'
        "TypeError: expected string or bytes-like object, got 'NoneType'",
        "trl 1.16.0, assistant_only_loss=True",
    ),
    (
        "evaluation-strategy-removed-transformers-4.51",
        "ValueError: Some specified arguments are not used by the HfArgumentParser: ['--evaluation_strategy', 'steps']",
        "transformers 5.24.0 CLI",
    ),
    (
        "trl-older-than-transformers",
        "TypeError: log() takes 2 positional arguments but 3 were given",
        "Python 3.9, trl 0.12.1 + transformers 4.46",
    ),
    (
        "torch-load-needs-torch-2.6",
        "[transformers] Disabling PyTorch because PyTorch >= 2.6 is required but found 2.5.1+cu121\n"
        "ImportError: AutoModelForCausalLM requires PyTorch >= 2.6, but PyTorch was not found or an older version is installed.",
        "transformers 5.20.0 - 5.24.0",
    ),
    (
        "trl-ref-model-fsdp1-wrap-under-fsdp2",
        '  File "/x/trl/models/utils.py", line 310, in prepare_fsdp\n    model = FSDP(model, **fsdp_kwargs)\n'
        '  File "/x/torch/distributed/fsdp/_init_utils.py", line 656, in _init_core_state\n'
        "    SHARDING_STRATEGY_MAP[state.sharding_strategy],\nKeyError: True",
        "trl 0.19.1 - 0.28.0 on FSDP2, torch 2.13",
    ),
    (
        "ms-swift-cli-argument-renamed",
        "[rank0]: ValueError: remaining_argv: ['--mcore_adapters', 'megatron_output/v1-hf']",
        "ms-swift 3.6",
    ),
]


@pytest.mark.parametrize("case_id,text,where", VARIANTS, ids=[f"{c}:{w}" for c, _, w in VARIANTS])
def test_todays_wording_matches_a_pattern_of_its_case(kb, case_id, text, where):
    case = kb.cases[case_id]
    patterns = list(case.symptoms.messages) + list(case.symptoms.log_patterns)
    assert any(first_match(p, text) for p in patterns), f"{case_id}: no pattern matches {where}'s wording"
