"""Tokenizer checks on the user's tokenizer as it is (seconds; no model weights loaded).

tokenizer-missing-pad-token
    baseline   batch-encode with padding=True (what GRPO/DPO collators do) → ValueError
               "Asking to pad but the tokenizer does not have a padding token" when pad is unset.
    treatment  tokenizer.pad_token = tokenizer.eos_token, then the same call.
base-model-tokenizer-no-chat-template
    baseline   apply_chat_template on a conversational prompt (what TRL does for
               [{"role", "content"}] datasets) → ValueError "Cannot use chat template functions …".
    treatment  set a ChatML template (or the instruct model's) on the tokenizer, the same call.
"""

from __future__ import annotations

from probes._base import load_tokenizer
from probes.contract import FunctionProbe, PhaseContext, PhaseOutput

PAD = "tokenizer-missing-pad-token"
CHAT = "base-model-tokenizer-no-chat-template"

DESCRIPTIONS = {
    "baseline": "your tokenizer as it is: padding=True batch / apply_chat_template",
    "treatment": "with the fix: pad_token = eos_token / a chat template set",
}

FALLBACK_SYMPTOMS = {
    PAD: {
        "exceptions": ["ValueError"],
        "messages": [{"pattern": "Asking to pad but the tokenizer does not have a padding token"}],
    },
    CHAT: {
        "exceptions": ["ValueError"],
        "messages": [
            {
                "pattern": r"Cannot use (chat template functions|apply_chat_template\(\)) because "
                r"tokenizer\.chat_template is not set",
                "kind": "regex",
            }
        ],
    },
}

CHATML = (
    "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\n' + message['content']"
    " + '<|im_end|>' + '\n' }}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}"
    "{% endif %}"
)

NOTES = {
    PAD: "fix: tokenizer.pad_token = tokenizer.eos_token (and model.config.pad_token_id = "
    "tokenizer.pad_token_id for reward models), pass it as processing_class",
    CHAT: "fix: use the instruct model's tokenizer/chat_template, set tokenizer.chat_template, or use "
    "plain-string prompts for a base model",
}


def run_phase(phase: str, ctx: PhaseContext) -> PhaseOutput:
    case = ctx.case_id
    tok = load_tokenizer(ctx)
    info = {
        "tokenizer_class": type(tok).__name__,
        "pad_token": tok.pad_token,
        "eos_token": tok.eos_token,
        "has_chat_template": bool(getattr(tok, "chat_template", None)),
    }
    print(f"tokenizer {info}", flush=True)
    if case == PAD:
        if phase == "treatment" and tok.pad_token is None:
            tok.pad_token = tok.eos_token
            print(f"set pad_token = eos_token ({tok.eos_token!r})", flush=True)
        enc = (
            tok(["a short prompt", "a somewhat longer prompt than the first"], padding=True, padding_side="left")
            if _accepts_padding_side(tok)
            else tok(["a short prompt", "a somewhat longer prompt than the first"], padding=True)
        )
        detail = f"padded batch of 2 to length {len(enc['input_ids'][0])} with pad_token {tok.pad_token!r}"
        print(detail, flush=True)
        return {"detail": detail, "info": info}
    if case == CHAT:
        if phase == "treatment" and not getattr(tok, "chat_template", None):
            tok.chat_template = CHATML
            print("set a ChatML chat_template", flush=True)
        text = tok.apply_chat_template(
            [{"role": "user", "content": "What is 2 + 2?"}], tokenize=False, add_generation_prompt=True
        )
        detail = f"chat template renders: {text[:120]!r}"
        print(detail, flush=True)
        return {"detail": detail, "info": info}
    raise ValueError(f"tokenizer-checks has no check for case {case!r}")


def _accepts_padding_side(tok) -> bool:
    import inspect

    try:
        return "padding_side" in inspect.signature(tok.__call__).parameters
    except (TypeError, ValueError):
        return False


NOT_REPRODUCED = {
    PAD: "not reproduced: your tokenizer has a pad token",
    CHAT: "not reproduced: your tokenizer has a chat template",
}


def decide(case_id: str, phases: dict, env: dict):
    from probes.verdicts import default_decide

    verdict, notes = default_decide(phases, NOT_REPRODUCED.get(case_id, ""))
    if verdict.value == "confirmed":
        notes.append(NOTES.get(case_id, ""))
    return verdict, notes


PROBE = FunctionProbe(
    descriptions=DESCRIPTIONS, fallback_symptoms=FALLBACK_SYMPTOMS, run_phase=run_phase, decide=decide
)
