"""GRPO logged loss ≈ 0: expected behaviour, or identical rewards within every group?

Two real GRPOTrainer runs of 2 steps on the model (CPU: use_cpu=True, 8 completion tokens):

- *varied reward* (-|len - 8| / 8, differs inside each group): with num_iterations=1 the
  importance ratio is 1 and the group-normalised advantages sum to 0, so the logged loss is ≈ 0
  (exactly 0 up to float noise when completion lengths are equal or loss_type="grpo"), while
  grad_norm > 0: the model trains. This is grpo-loss-zero-expected.
- *constant reward* (the bug: a regex that never matches, a saturated reward): every group has
  reward_std 0, frac_reward_zero_std 1, advantages 0, grad_norm 0: nothing trains. This is
  grpo-zero-advantage-identical-group-rewards.

For grpo-zero-advantage-identical-group-rewards the baseline is the constant reward and the
treatment the varied one — unless the user's log shows reward spread inside groups (option
`reward_spread=some`, derived from logged reward_std / frac_reward_zero_std by `explain --probe`
and `probe --from-log`): then the baseline is the varied reward, as in their run, and the case is
not theirs (not-reproduced). The user's `loss_type` and `beta` are used when given. For grpo-loss-zero-expected the baseline is the varied reward (loss ≈ 0
while grad_norm > 0 confirms "expected") and the treatment is the constant-reward contrast.
"""

from __future__ import annotations

from typing import Any

from probes.contract import FunctionProbe, PhaseContext, PhaseOutput

LOSS_ZERO = "grpo-loss-zero-expected"
ZERO_ADV = "grpo-zero-advantage-identical-group-rewards"

DESCRIPTIONS = {
    "baseline": "2 GRPO steps (per case: varied reward for 'expected', constant reward for 'zero advantage')",
    "treatment": "2 GRPO steps with the other reward (the fix for zero advantage / the contrast for 'expected')",
}

FALLBACK_SYMPTOMS = {
    LOSS_ZERO: {"metrics": [{"name": "loss", "op": "eq", "value": 0.0}]},
    ZERO_ADV: {
        "metrics": [
            {"name": "grad_norm", "op": "eq", "value": 0.0, "every_step": True},
            {"name": "reward_std", "op": "eq", "value": 0.0, "every_step": True},
        ]
    },
}

EXPLAIN = (
    "which one you have: loss ≈ 0 with grad_norm > 0 and frac_reward_zero_std < 1 is expected "
    "(grpo-loss-zero-expected: watch reward and grad_norm, not loss); grad_norm 0 with "
    "frac_reward_zero_std 1 / reward_std 0 means every group got identical rewards "
    "(grpo-zero-advantage-identical-group-rewards: make the reward discriminate within a group)"
)

_KEEP = (
    "loss",
    "grad_norm",
    "reward",
    "reward_std",
    "frac_reward_zero_std",
    "kl",
    "entropy",
    "completions/mean_length",
    "completion_length",
    "completions/clipped_ratio",
)


def _stats(metrics: dict[str, list[float]]) -> dict:
    loss = metrics.get("loss", [])
    gn = metrics.get("grad_norm", [])
    frac = metrics.get("frac_reward_zero_std", [])
    rstd = metrics.get("reward_std", [])
    return {
        "loss_first": loss[0] if loss else None,
        "loss_abs_max": max((abs(x) for x in loss), default=None),
        "grad_norm_min": min(gn, default=None),
        "grad_norm_max": max(gn, default=None),
        "frac_reward_zero_std": frac,
        "reward_std": rstd,
    }


def _zero_advantage(s: dict) -> bool:
    gn0 = s["grad_norm_max"] is not None and s["grad_norm_max"] < 1e-9
    frac1 = bool(s["frac_reward_zero_std"]) and all(abs(x - 1) < 1e-9 for x in s["frac_reward_zero_std"])
    std0 = bool(s["reward_std"]) and all(abs(x) < 1e-9 for x in s["reward_std"])
    return gn0 and (frac1 or (not s["frac_reward_zero_std"] and std0))


def _expected_zero(s: dict) -> bool:
    return (
        s["loss_first"] is not None
        and abs(s["loss_first"]) < 1e-6
        and s["grad_norm_min"] is not None
        and s["grad_norm_min"] > 0
    )


#: GRPOConfig settings taken from the user's run when given (--set, --config, the log)
USER_SETTINGS = ("loss_type", "beta")


def _typed(key: str, value: Any) -> Any:
    return float(value) if key == "beta" else str(value)


def run_phase(phase: str, ctx: PhaseContext) -> PhaseOutput:
    from probes._grpo import constant_reward, length_reward, run_grpo

    case = ctx.case_id
    constant = (phase == "baseline") == (case == ZERO_ADV)
    spread = str(ctx.options.get("reward_spread", "")).lower()
    if phase == "baseline" and spread in ("some", "none"):
        constant = spread == "none"  # the baseline is the user's run: rewards as spread as their log shows
    reward = constant_reward if constant else length_reward
    label = "constant reward" if constant else "varied reward"
    overrides: dict[str, Any] = {k: _typed(k, ctx.options[k]) for k in USER_SETTINGS if k in ctx.options}
    print(f"--- GRPOTrainer, 2 steps, {label}" + (f", {overrides}" if overrides else ""), flush=True)
    out = run_grpo(ctx, ctx.workdir, reward=reward, label=label, **overrides)
    tr = out["trainer"]
    cfg = tr.args
    series = {k: v for k, v in out["metrics"].items() if k in _KEEP}
    s = _stats(series)
    if case == ZERO_ADV:
        detected = _zero_advantage(s)
    else:
        detected = _expected_zero(s) if phase == "baseline" else _zero_advantage(s)
    info = {
        "reward": label,
        "loss_type": getattr(cfg, "loss_type", None),
        "beta": getattr(cfg, "beta", None),
        "num_iterations": getattr(cfg, "num_iterations", None),
        "num_generations": getattr(cfg, "num_generations", None),
        "max_completion_length": getattr(cfg, "max_completion_length", None),
        "train_seconds": round(out["seconds"], 3),
        **s,
    }
    detail = (
        f"{label}: loss {s['loss_first']!r} (|max| {s['loss_abs_max']!r}), grad_norm "
        f"{s['grad_norm_min']!r}…{s['grad_norm_max']!r}, frac_reward_zero_std "
        f"{s['frac_reward_zero_std']}, reward_std {s['reward_std']}"
    )
    print(detail, flush=True)
    return {
        "detected": detected,
        "detail": detail,
        "metrics": series,
        "info": info,
        "check_matcher": not (case == LOSS_ZERO and phase == "treatment"),
    }


def decide(case_id: str, phases: dict, env: dict):
    from probes.result import PhaseStatus, Verdict
    from probes.verdicts import default_decide

    b, t = phases["baseline"], phases["treatment"]
    for ph in (b, t):
        if ph.status is not PhaseStatus.ok:
            return Verdict.error, [f"{ph.name} {ph.status.value}: {ph.exception or ph.detail}"]
    if case_id == ZERO_ADV:
        verdict, notes = default_decide(phases)
        if b.info.get("reward") == "varied reward":
            notes.insert(
                0,
                "your log shows rewards that differ inside groups (reward_std > 0 or frac_reward_zero_std < 1), "
                "so the baseline used a varied reward as your run does",
            )
        if verdict is Verdict.confirmed:
            notes.append(
                "constant reward → grad_norm 0 and frac_reward_zero_std 1 (no group has any "
                "reward spread, so every advantage is 0 and nothing trains); a reward that "
                "varies within groups → grad_norm > 0"
            )
        notes.append(EXPLAIN)
        return verdict, notes
    # grpo-loss-zero-expected
    notes = []
    bi = b.info
    if b.reproduced:
        notes.append(
            f"expected: logged loss {bi.get('loss_first'):.3g} at step 1 while grad_norm > 0 "
            f"({bi.get('grad_norm_min'):.3g}…{bi.get('grad_norm_max'):.3g}): with num_iterations="
            f"{bi.get('num_iterations')} the importance ratio is 1 and group advantages sum to 0, so "
            f"the loss shows ≈ 0 although the policy gets a gradient (loss_type={bi.get('loss_type')}, "
            f"beta={bi.get('beta')})"
        )
        if t.reproduced:
            notes.append(
                "contrast: a constant reward gives grad_norm 0 and frac_reward_zero_std 1 — that "
                "is the real failure (grpo-zero-advantage-identical-group-rewards)"
            )
        notes.append(EXPLAIN)
        return Verdict.confirmed, notes
    if bi.get("grad_norm_min") is not None and bi.get("grad_norm_min") > 0:
        notes.append(
            f"not reproduced: the logged loss is {bi.get('loss_first')!r}, not ≈ 0, on this setup "
            f"(loss_type={bi.get('loss_type')}: with loss_type in dapo/bnpo/dr_grpo the loss is "
            "≈ 0 only when all completions have the same length)"
        )
    elif bi.get("reward") == "constant reward":
        notes.append(
            "not reproduced: your log shows no reward spread inside any group (reward_std 0 / "
            "frac_reward_zero_std 1), and with that the gradient is 0 too — this is not the benign "
            "zero loss but grpo-zero-advantage-identical-group-rewards"
        )
    else:
        notes.append("not reproduced: grad_norm is 0 with a varied reward — check the model/optimizer setup")
    notes.append(EXPLAIN)
    return Verdict.not_reproduced, notes


PROBE = FunctionProbe(
    descriptions=DESCRIPTIONS, fallback_symptoms=FALLBACK_SYMPTOMS, run_phase=run_phase, decide=decide
)
