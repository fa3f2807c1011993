"""One healthy training run on a tiny local model, printing what a user's terminal shows.

    python scripts/healthy_run.py VARIANT MODEL_DIR WORKDIR

Run by `scripts/make_logs.py`, which captures stdout + stderr into `kb/logs/healthy/`. Every
variant is a run that is fine: real TRL / transformers / PEFT code on a tiny random model, a few
steps, logging every step (metric lines such as `{'loss': 0.0, ...}` included).
"""

from __future__ import annotations

import os
import sys

VARIANTS = (
    "sft",
    "sft-info",
    "sft-lora",
    "sft-lora-gc",
    "sft-gc-reentrant-lora",
    "sft-packing",
    "sft-messages",
    "sft-completion-only",
    "sft-eval",
    "sft-epochs",
    "dpo",
    "dpo-lora",
    "dpo-info",
    "dpo-ipo",
    "grpo",
    "grpo-lora",
    "grpo-info",
    "grpo-loss-grpo",
    "grpo-dr-grpo",
    "grpo-bnpo",
    "grpo-beta",
    "grpo-format-reward-1",
    "grpo-two-rewards",
    "grpo-gen8",
    "grpo-iterations",
    "grpo-scale-none",
    "kto",
    "reward",
    "trainer-clm",
    "trainer-clm-info",
    "sft-map-bars",
)

PROMPTS = [
    "What is 2 + 2?",
    "Name a colour.",
    "Say hello.",
    "Write a short poem.",
    "What is the capital of France?",
    "Count to three.",
    "Give me a number.",
    "Describe a cat.",
]


def _lora(**kw):
    from peft import LoraConfig

    return LoraConfig(r=4, lora_alpha=8, target_modules=["q_proj", "v_proj"], task_type="CAUSAL_LM", **kw)


def _common(workdir: str, info: bool, **kw):
    args = dict(
        output_dir=workdir,
        max_steps=4,
        per_device_train_batch_size=2,
        logging_steps=1,
        report_to="none",
        save_strategy="no",
        use_cpu=True,
        learning_rate=1e-4,
        seed=0,
    )
    if info:
        args["log_level"] = "info"
    args.update(kw)
    return args


def warmup(model_dir: str, out_dir: str) -> None:
    """Teach the random model to end its answers with EOS (a short quiet SFT), so GRPO runs have
    terminated completions as a real model's do; a random model never stops and every completion
    is clipped, which is itself a failure symptom (grpo-max-completion-length-truncates-all)."""
    import logging

    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from transformers.utils import logging as hf_logging
    from trl import SFTConfig, SFTTrainer

    hf_logging.set_verbosity_error()
    logging.disable(logging.WARNING)
    tok = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForCausalLM.from_pretrained(model_dir)
    ds = Dataset.from_dict({"prompt": PROMPTS * 8, "completion": [" Yes."] * 64})
    cfg = SFTConfig(
        **_common(
            out_dir,
            False,
            max_steps=20,
            per_device_train_batch_size=8,
            learning_rate=5e-3,
            disable_tqdm=True,
            logging_strategy="no",
        )
    )
    SFTTrainer(model=model, args=cfg, train_dataset=ds, processing_class=tok).train()
    model.save_pretrained(out_dir)
    tok.save_pretrained(out_dir)


def run(variant: str, model_dir: str, workdir: str) -> None:
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer

    info = variant.endswith("-info")
    tok = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForCausalLM.from_pretrained(model_dir)
    texts = [f"{p} The answer is {i}." for i, p in enumerate(PROMPTS)] * 2

    if variant.startswith("sft"):
        from trl import SFTConfig, SFTTrainer

        extra: dict = {}
        peft_config = None
        ds = Dataset.from_dict({"text": texts})
        if variant == "sft-lora":
            peft_config = _lora()
        elif variant == "sft-lora-gc":
            peft_config = _lora()
            extra = dict(gradient_checkpointing=True, gradient_checkpointing_kwargs={"use_reentrant": False})
        elif variant == "sft-gc-reentrant-lora":
            peft_config = _lora()
            extra = dict(gradient_checkpointing=True, gradient_checkpointing_kwargs={"use_reentrant": True})
        elif variant == "sft-packing":
            extra = dict(packing=True, max_length=32)
        elif variant == "sft-messages":
            ds = Dataset.from_dict(
                {
                    "messages": [
                        [{"role": "user", "content": p}, {"role": "assistant", "content": f"Answer {i}."}]
                        for i, p in enumerate(PROMPTS * 2)
                    ]
                }
            )
        elif variant == "sft-completion-only":
            ds = Dataset.from_dict({"prompt": PROMPTS * 2, "completion": [f" Answer {i}." for i in range(16)]})
        elif variant == "sft-eval":
            extra = dict(eval_strategy="steps", eval_steps=2, per_device_eval_batch_size=2)
        elif variant == "sft-epochs":
            extra = dict(max_steps=-1, num_train_epochs=1)
        elif variant == "sft-map-bars":
            ds = Dataset.from_dict({"text": texts * 4}).map(lambda x: {"text": x["text"].strip()})
        cfg = SFTConfig(**_common(workdir, info, **extra))
        kwargs = dict(model=model, args=cfg, train_dataset=ds, processing_class=tok, peft_config=peft_config)
        if variant == "sft-eval":
            kwargs["eval_dataset"] = Dataset.from_dict({"text": texts[:4]})
        SFTTrainer(**kwargs).train()
    elif variant.startswith("dpo"):
        from trl import DPOConfig, DPOTrainer

        ds = Dataset.from_dict({"prompt": PROMPTS * 2, "chosen": [" Yes, gladly."] * 16, "rejected": [" No."] * 16})
        extra = dict(max_length=64)
        if variant == "dpo-ipo":
            extra["loss_type"] = "ipo"
        cfg = DPOConfig(**_common(workdir, info, **extra))
        DPOTrainer(
            model=model,
            args=cfg,
            train_dataset=ds,
            processing_class=tok,
            peft_config=_lora() if variant == "dpo-lora" else None,
        ).train()
    elif variant.startswith("grpo"):
        from trl import GRPOConfig, GRPOTrainer

        def length_reward(completions, **kw):
            return [-abs(len(c) - 8) / 8.0 for c in completions]

        def format_reward(completions, **kw):
            return [1.0 for _ in completions]  # a converged format reward: healthy, constant 1.0

        extra = dict(num_generations=4, max_completion_length=8, per_device_train_batch_size=4)
        rewards: list = [length_reward]
        if variant == "grpo-loss-grpo":
            extra["loss_type"] = "grpo"
        elif variant == "grpo-dr-grpo":
            extra["loss_type"] = "dr_grpo"
        elif variant == "grpo-bnpo":
            extra["loss_type"] = "bnpo"
        elif variant == "grpo-beta":
            extra["beta"] = 0.04
        elif variant == "grpo-format-reward-1":
            rewards = [length_reward, format_reward]
        elif variant == "grpo-two-rewards":
            rewards = [length_reward, lambda completions, **kw: [float(len(c) % 3) for c in completions]]
        elif variant == "grpo-gen8":
            extra.update(num_generations=8, per_device_train_batch_size=8)
        elif variant == "grpo-iterations":
            extra["num_iterations"] = 2
        elif variant == "grpo-scale-none":
            extra["scale_rewards"] = "none"
        cfg = GRPOConfig(**_common(workdir, info, **extra))
        GRPOTrainer(
            model=model,
            reward_funcs=rewards,
            args=cfg,
            processing_class=tok,
            train_dataset=Dataset.from_dict({"prompt": PROMPTS}),
            peft_config=_lora() if variant == "grpo-lora" else None,
        ).train()
    elif variant == "kto":
        from trl.experimental.kto import KTOConfig, KTOTrainer

        ds = Dataset.from_dict({"prompt": PROMPTS * 2, "completion": [" Yes.", " No."] * 8, "label": [True, False] * 8})
        cfg = KTOConfig(**_common(workdir, info, max_length=64))
        KTOTrainer(model=model, args=cfg, train_dataset=ds, processing_class=tok).train()
    elif variant == "reward":
        from transformers import AutoModelForSequenceClassification
        from trl import RewardConfig, RewardTrainer

        rm = AutoModelForSequenceClassification.from_pretrained(model_dir, num_labels=1)
        rm.config.pad_token_id = tok.pad_token_id
        ds = Dataset.from_dict({"chosen": [t + " Good." for t in texts], "rejected": [t + " Bad." for t in texts]})
        RewardTrainer(
            model=rm, args=RewardConfig(**_common(workdir, info, max_length=64)), train_dataset=ds, processing_class=tok
        ).train()
    elif variant.startswith("trainer-clm"):
        from transformers import DataCollatorForLanguageModeling, Trainer, TrainingArguments

        ds = Dataset.from_dict({"text": texts}).map(lambda x: tok(x["text"]), remove_columns=["text"])
        Trainer(
            model=model,
            args=TrainingArguments(**_common(workdir, info)),
            train_dataset=ds,
            data_collator=DataCollatorForLanguageModeling(tok, mlm=False),
        ).train()
    else:
        raise SystemExit(f"unknown variant {variant!r}; one of: {', '.join(VARIANTS)}")


if __name__ == "__main__":
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    if sys.argv[1] == "warmup":
        warmup(sys.argv[2], sys.argv[3])
    else:
        run(*sys.argv[1:4])
