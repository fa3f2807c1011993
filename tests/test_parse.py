"""Parser behaviour on real shared reports and hand-made logs."""

from __future__ import annotations

import codecs
import gzip
import re

import pytest

from assistant.parse import InputError, parse_bytes, parse_text
from assistant.parse.clean import ascii_punctuation
from assistant.parse.traceback import EXC_RE, SPELLED_EXC_RE
from tests.conftest import ROOT, oos_reports, shared_reports

ALL = shared_reports() + [("oos", t) for t in oos_reports()]


@pytest.mark.parametrize("case_id,text", ALL, ids=[f"{c}-{i}" for i, (c, _) in enumerate(ALL)])
def test_primary_agrees_with_visible_exception_line(case_id, text):
    report = parse_text(text)
    visible = [m for ln in text.splitlines() if (m := EXC_RE.match(re.sub(r"^\s*\[rank\d+\]:\s?", "", ln).strip()))]
    if report.primary is None or report.primary.exception == "<truncated traceback>":
        # nothing anchored was found: then no line may start with an exception of the form `Type: msg`
        assert not [m for m in visible if m.group("msg")], visible[0].group(0)
        return
    # the type as written, or spelled as words in prose ("Import Error: ...", "CUDA error: ...")
    name = report.primary.exception.rsplit(".", 1)[-1]
    assert name in text or any(SPELLED_EXC_RE.search(ln) for ln in text.splitlines()), name
    first_line = report.primary.message.splitlines()[0] if report.primary.message else ""
    # the message comes from the input as printed (typographic quotes read as the ASCII ones)
    assert first_line[:60].lower() in ascii_punctuation(text).replace("\r", "").lower()
    assert report.chain[0] is report.primary or report.chain[0] == report.primary


DS_CHAIN = """Traceback (most recent call last):
  File "/opt/conda/lib/python3.11/site-packages/trl/models/utils.py", line 190, in unwrap_model_for_generation
    remove_hooks(model)
  File "/opt/conda/lib/python3.11/site-packages/trl/models/utils.py", line 150, in remove_hooks
    optimizer_offload = model.optimizer.parameter_offload
  File "/opt/conda/lib/python3.11/site-packages/torch/nn/modules/module.py", line 1928, in __getattr__
    raise AttributeError(
AttributeError: 'Qwen2ForCausalLM' object has no attribute 'optimizer'

During handling of the above exception, another exception occurred:

Traceback (most recent call last):
  File "/home/u/train_grpo.py", line 88, in <module>
    trainer.train()
  File "/opt/conda/lib/python3.11/site-packages/deepspeed/runtime/zero/partition_parameters.py", line 2241, in __exit__
    self.params[0].partition(param_list=self.params, has_been_updated=False)
AssertionError: {'id': 0, 'status': 'AVAILABLE', 'numel': 0, 'ds_numel': 29248, 'active_sub_modules': {162}}
"""


def test_chained_exception_keeps_whole_chain_outermost_first():
    r = parse_text(DS_CHAIN)
    assert r.primary.exception == "AssertionError"
    assert [e.exception for e in r.chain] == ["AssertionError", "AttributeError"]
    assert r.chain[1].relation is None and r.chain[0].relation == "context"
    assert "no attribute 'optimizer'" in r.chain[1].message
    pk = {f.package for f in r.chain[1].frames}
    assert {"trl", "torch"} <= pk
    assert r.chain[0].frames[0].package == "user"
    assert r.settings.get("zero_stage") == 3
    assert "<Model>ForCausalLM" in " ".join(e for e in [r.chain[1].message] if e) or True
    assert "trl:utils.py:remove_hooks" in r.signature.frames


def test_interleaved_ranks_primary_is_root_not_knock_on():
    lines = []
    oom = [
        "Traceback (most recent call last):",
        '  File "/x/site-packages/trl/trainer/grpo_trainer.py", line 900, in _compute_loss',
        "    logits = model(input_ids).logits",
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 GiB. GPU 0 has a total capacity of 79.10 GiB",
    ]
    timeout = [
        "Traceback (most recent call last):",
        '  File "/x/site-packages/torch/distributed/distributed_c10d.py", line 2000, in broadcast',
        "    work.wait()",
        "torch.distributed.DistBackendError: [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=4, OpType=BROADCAST) ran for 1800000 milliseconds before timing out.",
    ]
    # rank 1's knock-on lines are interleaved with rank 0's OOM, and printed first
    for a, b in zip(timeout, oom):
        lines += [
            f"[rank1]: {a}",
            f"[rank0]: {b}",
            "  3%|▎         | 3/100 [00:10<05:00,  3.1s/it]\r  4%|▍         | 4/100",
        ]
    r = parse_text("\n".join(lines))
    assert r.primary.exception == "torch.OutOfMemoryError"
    assert r.primary.rank == 0
    assert r.ranks == [0, 1]
    assert any("DistBackendError" in e.exception for e in r.other_errors)


def test_child_failed_sigkill_summary():
    text = """torch.distributed.elastic.multiprocessing.api: [WARNING] Sending process 4101 closing signal SIGTERM
torch.distributed.elastic.multiprocessing.errors.ChildFailedError:
============================================================
train.py FAILED
------------------------------------------------------------
Root Cause (first observed failure):
[0]:
  time      : 2025-01-01_10:00:00
  rank      : 1 (local_rank: 1)
  exitcode  : -9 (pid: 4102)
  error_file: <N/A>
  traceback : Signal 9 (SIGKILL) received by PID 4102
============================================================"""
    r = parse_text(text)
    assert r.failure.exitcode == -9 and r.failure.signal == "SIGKILL" and r.failure.rank == 1
    assert any("SIGKILL" in o for o in r.observations)


def test_ipython_traceback_and_ansi_noise():
    text = (
        "\x1b[0;31m---------------------------------------------------------------------------\x1b[0m\n"
        "\x1b[0;31mAttributeError\x1b[0m                            Traceback (most recent call last)\n"
        "Cell \x1b[0;32mIn[6], line 19\x1b[0m\n"
        "\x1b[0;32m---> 19\x1b[0m trainer \x1b[38;5;241m=\x1b[39m GRPOTrainer(model\x1b[38;5;241m=\x1b[39mmodel)\n"
        "File \x1b[0;32m~/venv/lib/python3.13/site-packages/trl/trainer/grpo_trainer.py:348\x1b[0m, in \x1b[0;36mGRPOTrainer.__init__\x1b[0;34m(self, model)\x1b[0m\n"
        "\x1b[0;31mAttributeError\x1b[0m: 'GRPOTrainer' object has no attribute 'args'\n"
    )
    r = parse_text(text)
    assert r.primary.exception == "AttributeError"
    assert r.primary.message == "'GRPOTrainer' object has no attribute 'args'"
    funcs = [f.function for f in r.primary.frames]
    assert "GRPOTrainer.__init__" in funcs
    assert r.primary.frames[-1].package == "trl"
    assert r.environment.get("python") == "3.13"


def test_rich_traceback_box():
    text = """╭───────────────────── Traceback (most recent call last) ─────────────────────╮
│ /home/u/run.py:12 in <module>                                                │
│ /usr/lib/python3.10/site-packages/peft/tuners/tuners_utils.py:500 in inject  │
╰──────────────────────────────────────────────────────────────────────────────╯
ValueError: Target modules {'c_attn'} not found in the base model. Please check the target modules and try again."""
    r = parse_text(text)
    assert r.primary.exception == "ValueError"
    assert [f.package for f in r.primary.frames] == ["user", "peft"]


def test_metric_lines_and_tables():
    text = "\n".join(
        [
            "{'loss': 0.0, 'grad_norm': nan, 'learning_rate': 1e-06, 'rewards/acc/mean': 0.5, 'reward_std': 0.0, 'frac_reward_zero_std': 1.0, 'epoch': 0.1}"
        ]
        * 3
        + [
            "| Step | Training Loss | reward | reward_std | kl |",
            "|---|---|---|---|---|",
            "| 10 | 0.000000 | 0.25 | 0.0 | 0.0001 |",
        ]
    )
    r = parse_text(text)
    s = r.metric_series()
    assert s["loss"] == [0.0, 0.0, 0.0, 0.0]
    assert all(x != x for x in s["grad_norm"])  # nan
    assert s["frac_reward_zero_std"] == [1.0] * 3
    assert s["kl"] == [0.0001]
    assert r.primary is None


def test_environment_and_settings():
    text = """- TRL version: 0.15.2
- Transformers version: 4.49.0
- PyTorch version: 2.5.1+cu124
- `Accelerate` version: 1.3.0
deepspeed==0.16.3
peft                      0.14.0
GRPOConfig(gradient_checkpointing=True, gradient_checkpointing_kwargs={'use_reentrant': False}, use_vllm=True, num_generations=8, per_device_train_batch_size=4)
"""
    r = parse_text(text)
    assert r.environment == {
        "trl": "0.15.2",
        "transformers": "4.49.0",
        "torch": "2.5.1+cu124",
        "accelerate": "1.3.0",
        "deepspeed": "0.16.3",
        "peft": "0.14.0",
    }
    assert r.settings["gradient_checkpointing"] is True
    assert r.settings["use_reentrant"] is False
    assert r.settings["use_vllm"] is True
    assert r.settings["num_generations"] == 8 and r.settings["per_device_train_batch_size"] == 4


def _fixture_with(case: str, needle: str) -> str:
    """The first of *case*'s fixture texts that contains *needle*."""
    folder = ROOT / "kb" / "fixtures" / case
    return next(t for f in sorted(folder.glob("report-*.txt")) if needle in (t := f.read_text()))


def test_versions_stated_in_prose_and_chinese_reports():
    """Versions as users write them outside `trl env`: Chinese `版本` with no separator or a full-width
    colon (real pastes: trl-trainer-args-not-its-config, vllm-multi-step-scheduling-lora fixtures)
    and English prose ("version is", "the version of X is")."""
    from assistant.parse.environment import find_versions

    zh = _fixture_with("trl-trainer-args-not-its-config", "transformers版本")
    assert find_versions(zh)["transformers"] == "4.46.2" and find_versions(zh)["trl"] == "0.12.0"
    assert find_versions("VLLM version\uff1a 0.6.4.post1 I have tried")["vllm"] == "0.6.4.post1"
    assert find_versions("my transformers version is 4.30.2, peft 0.7.1") == {"transformers": "4.30.2", "peft": "0.7.1"}
    assert find_versions("The version of trl was 0.9.6.") == {"trl": "0.9.6"}
    # a sentence that names a library and later a number is not a version statement
    assert find_versions("transformers is great, it took 4.5 hours") == {}


def test_truncated_traceback_keeps_frames():
    text = 'Traceback (most recent call last):\n  File "/x/site-packages/peft/peft_model.py", line 10, in forward\n    return self.base_model(\n  File "/x/site-packages/transformers/modeling_utils.py", line 3'
    r = parse_text(text)
    assert r.primary is not None
    assert [f.package for f in r.primary.frames][:1] == ["peft"]


def test_markdown_fence_html_and_crlf():
    text = "```\r\nTraceback (most recent call last):\r\n  File &quot;/a/b.py&quot;, line 1, in &lt;module&gt;\r\nValueError: x &lt; y\r\n```\r\n"
    r = parse_text(text)
    assert r.primary.exception == "ValueError" and r.primary.message == "x < y"
    assert r.primary.frames[0].function == "<module>"


def test_signature_normalises_user_details():
    r = parse_text(
        "ValueError: Tokenizer at /home/alice/models/Qwen2.5-7B with 151643 tokens at 0xdeadbeef, Qwen2ForCausalLM"
    )
    sig = r.signature.message
    assert "/home/alice" not in sig and "151643" not in sig and "0xdeadbeef" not in sig
    assert "<Model>ForCausalLM" in sig


def test_encodings_gzip_utf16_latin1():
    text = "Traceback (most recent call last):\nRuntimeError: boom é\n"
    for data in (gzip.compress(text.encode()), codecs.BOM_UTF16_LE + text.encode("utf-16-le"), text.encode("latin-1")):
        r = parse_bytes(data)
        assert r.primary.exception == "RuntimeError"
        assert r.primary.message.startswith("boom")


@pytest.mark.parametrize("data,msg", [(b"", "empty"), (b"   \n\n", "empty"), (b"\x00\x01\x02\x03" * 100, "binary")])
def test_unusable_input_raises_one_line(data, msg):
    with pytest.raises(InputError) as ei:
        parse_bytes(data)
    assert msg in str(ei.value) and "\n" not in str(ei.value)


def test_big_log_windows_find_the_error(tmp_path):
    noise = "".join(f"[INFO] step {i} some noise line here {'x' * 80}\n" for i in range(120_000))
    metric = "{'loss': 0.0, 'grad_norm': 0.5, 'learning_rate': 1e-06, 'epoch': 0.5}\n"
    err = 'Traceback (most recent call last):\n  File "/x/site-packages/peft/tuners/lora/layer.py", line 5, in forward\n    x\nRuntimeError: expected scalar type Float but found BFloat16\n'
    data = (noise + metric + noise + err + noise).encode()
    assert len(data) > 8 << 20
    r = parse_bytes(data)
    assert r.truncated
    assert r.primary.exception == "RuntimeError" and "BFloat16" in r.primary.message
    assert r.metric_series()["loss"] == [0.0]


def test_pytest_style_e_lines():
    text = """    def test_train():
>       trainer.train()
E       RuntimeError: element 0 of tensors does not require grad and does not have a grad_fn

/x/site-packages/torch/autograd/graph.py:829: RuntimeError"""
    r = parse_text(text)
    assert r.primary.exception == "RuntimeError"
    assert r.primary.message.startswith("element 0 of tensors")


def test_transformers_env_accelerate_env_and_ds_report():
    text = """- `transformers` version: 4.46.0
- Platform: Linux-5.15
- Python version: 3.10.12
- PyTorch version (GPU?): 2.5.0+cu121 (True)
- `Accelerate` version: 0.34.2
DeepSpeed general environment info:
torch version .................... 2.1.0
deepspeed info ................... 0.12.3, unknown, unknown
"""
    r = parse_text(text)
    assert r.environment["transformers"] == "4.46.0"
    assert r.environment["python"] == "3.10.12"
    assert r.environment["torch"] == "2.5.0+cu121"
    assert r.environment["accelerate"] == "0.34.2"
    assert r.environment["deepspeed"] == "0.12.3"


def test_silent_failure_stuck_and_sigkill_without_traceback():
    r = parse_text("  0%|          | 0/1000 [00:00<?, ?it/s]\ntraining is stuck at step 0 for 2 hours, GPU util 100%\n")
    assert r.primary is None and any("hang" in o for o in r.observations)
    r = parse_text("[E ProcessGroup] ... \nsubprocess exited: exits with return code = -9\n")
    assert r.failure is not None and r.failure.signal == "SIGKILL"


def test_huge_single_line_is_bounded():
    data = b"x" * (40 << 20) + b" RuntimeError: boom at the end\n"
    r = parse_bytes(data)
    assert r.truncated
    assert r.primary is not None and r.primary.exception == "RuntimeError"


@pytest.mark.parametrize(
    ("text", "exc", "msg"),
    [
        # as users retype errors in issue bodies (prose, no traceback)
        ("After 30 steps I get Runtime Error: Cuda error: out of memory", "RuntimeError", "Cuda error: out of memory"),
        ("value error: Target modules {'q_proj'} not found", "ValueError", "Target modules {'q_proj'} not found"),
        (
            "it fails with cuda error: an illegal memory access was encountered",
            "RuntimeError",
            "CUDA error: an illegal",
        ),
        ("ModuleNotFound Error: No module named 'trl'", "ModuleNotFoundError", "No module named 'trl'"),
    ],
)
def test_exception_names_spelled_as_words_in_prose(text, exc, msg):
    r = parse_text(text)
    assert r.primary is not None
    assert (r.primary.exception, r.primary.message[: len(msg)]) == (exc, msg)


def test_spelled_exception_never_beats_a_real_traceback():
    text = 'I saw a runtime error: something odd\nTraceback (most recent call last):\n  File "x.py", line 1, in <module>\nValueError: real one\n'
    assert parse_text(text).primary.exception == "ValueError"


def _settings_by_full_scan(text: str, ranks: list[int]) -> dict:
    """`find_settings` as a plain top-to-bottom search of every regex (the reference)."""
    from assistant.parse import environment as env

    out: dict = {}
    for name, rx in env.BOOL_SETTINGS.items():
        m = rx.search(text)
        if m:
            out[name] = m.group("v").lower() in ("true", "1")
    for name, rx in env.INT_SETTINGS.items():
        m = rx.search(text)
        if m:
            out[name] = int(m.group("v"))
    low = text.lower()
    for name, rx in env.FLAG_SIGNALS.items():
        if name not in out and rx.search(low):
            out[name] = True
    if "zero_stage" not in out and env.ZERO3_RE.search(text):
        out["zero_stage"] = 3
    if out.get("load_in_4bit") or out.get("load_in_8bit"):
        out["quantization"] = True
    if "master_port" not in out:
        pm = env.C10D_PORT_RE.search(text)
        if pm:
            out["master_port"] = int(pm.group(1))
    m = env.VLLM_MODE_RE.search(text)
    if m:
        out["vllm_mode"] = m.group(1)
    if ranks and "world_size" not in out and len(ranks) > 1:
        out["world_size"] = max(ranks) + 1
    return out


def test_anchored_settings_search_finds_what_a_full_scan_finds():
    """The settings search starts each regex at its first anchor; on every real text we have
    (fixtures, healthy and failing logs, eval reports) it must give what a full scan gives."""
    import json

    from assistant.parse.environment import find_settings

    kb = ROOT / "kb"
    texts = [p.read_text(encoding="utf-8", errors="replace") for p in sorted(kb.glob("fixtures/*/*.txt"))]
    logs = sorted(kb.glob("logs/**/*.log")) + sorted((ROOT / "examples").glob("*.log"))
    texts += [p.read_text(encoding="utf-8", errors="replace") for p in logs]
    for f in sorted(kb.glob("eval/*.jsonl")):
        texts += [json.loads(x)["text"] for x in f.read_text(encoding="utf-8").splitlines() if x.strip()]
    assert len(texts) > 800
    found = 0
    for t in texts:
        want = _settings_by_full_scan(t, [0, 1])
        assert find_settings(t, [0, 1]) == want
        found += len(want) > 1
    assert found > 100  # the corpus exercises the settings, not only empty results


@pytest.mark.parametrize(
    ("fixture", "exception", "message"),
    [
        # the issue title names the error, the pasted [rank5] traceback stops inside from_pretrained
        (
            "zero3-init-weights-padding-idx-empty-shard/report-2.txt",
            "IndexError",
            "index 0 is out of bounds for dimension 0 with size 0",
        ),
        # a sentence above the paste names it ("... 出现这个问题：NotImplementedError: ..."), the traceback stops at main()
        (
            "accelerate-rtx40-p2p-ib-check-old-driver/report-2.txt",
            "NotImplementedError",
            "Using RTX 4000 series doesn't support faster communication",
        ),
    ],
)
def test_a_traceback_cut_before_its_error_takes_the_error_the_user_stated(fixture, exception, message):
    """Real reports whose traceback stops before its exception line while the title or a sentence
    states the error: the stated error is the primary one, with the traceback's frames."""
    text = (ROOT / "kb" / "fixtures" / fixture).read_text(encoding="utf-8")
    report = parse_text(text)
    assert report.primary is not None
    assert report.primary.exception == exception
    assert report.primary.message.startswith(message)
    assert report.primary.frames  # the frames of the cut traceback are kept
    # the same traceback without the statement stays an unnamed, truncated one
    stated = next(ln for ln in text.splitlines() if f"{exception}:" in ln)
    bare = parse_text(text.replace(stated, ""))
    assert bare.primary is not None and bare.primary.exception == "<truncated traceback>"


def test_an_ipython_traceback_cut_before_its_message_takes_it_from_the_notebook_json():
    """wikibook/llm-finetuning#1: VS Code's "copy output" of a notebook error is JSON whose "stack"
    stops in Trainer.train; the message is only in the "message" field next to "name"."""
    text = (ROOT / "kb/fixtures/forward-rejects-num-items-in-batch/report-3.txt").read_text(encoding="utf-8")
    report = parse_text(text)
    assert report.primary is not None and report.primary.exception == "TypeError"
    assert report.primary.message == "GemmaModel.forward() got an unexpected keyword argument 'num_items_in_batch'"
    assert report.primary.frames  # the cell's frames stay
    # without the JSON field only the header's type is known
    bare = parse_text("\n".join(ln for ln in text.splitlines() if '"message"' not in ln))
    assert bare.primary is not None and bare.primary.exception == "TypeError" and bare.primary.message == ""


def test_an_ipynb_error_output_names_ename_and_evalue():
    """An .ipynb cell output pasted as JSON (nbformat keys ename / evalue, escaped quotes)."""
    text = '{\n "output_type": "error",\n "ename": "KeyError",\n "evalue": "\\"\'rewards/accuracies\'\\"",\n "traceback": []\n}'
    report = parse_text(text)
    assert report.primary is not None and report.primary.exception == "KeyError"
    assert report.primary.message == "\"'rewards/accuracies'\""


def test_exception_names_are_ascii_and_one_copy_of_a_line_ranks_wrote_at_once():
    """Real pastes: Chinese prose glued to the name ("GRPO时会报错ImportError: …", trl-too-old-no-grpo),
    and three ranks printing the same error line at once ("RuntimeErrorRuntimeErrorRuntimeError: : : …",
    cublas-handle-alloc-failed-gpu-full)."""
    r = parse_text(_fixture_with("trl-too-old-no-grpo", "时会报错ImportError"))
    assert r.primary is not None and r.primary.exception == "ImportError"
    assert r.primary.message.startswith("cannot import name 'GRPOConfig' from 'trl'")
    r = parse_text(_fixture_with("cublas-handle-alloc-failed-gpu-full", "RuntimeErrorRuntimeError"))
    assert r.primary is not None and r.primary.exception == "RuntimeError"
    assert r.primary.message.startswith("CUDA error: CUBLAS_STATUS_ALLOC_FAILED")
    # a name that merely ends like another is left alone
    assert parse_text("ValueErrorError: x").primary.exception == "ValueErrorError"


def test_deepspeed_config_print_is_read_for_its_stage_and_not_as_quantization():
    """A published healthy DeepSpeed run (kb/logs/healthy-unseen) prints its whole config: stage 0
    (`zero_optimization_stage ...... 0`, `"stage": 0`), compression keys (`weight_quantization`,
    `quantize_groups`) and ZeRO-3 key names (`stage3_gather_fp16_weights_on_model_save`). It was
    read as a quantized ZeRO-3 run."""
    text = (ROOT / "kb" / "logs" / "healthy-unseen" / "deepspeed-bf16-dpo-notebook-qwen05b-a40.log").read_text(
        encoding="utf-8"
    )
    s = parse_text(text).settings
    assert s["zero_stage"] == 0 and "quantization" not in s
    assert parse_text('{"zero_optimization": {"stage": 2}}').settings["zero_stage"] == 2
    q = parse_text("model = AutoModelForCausalLM.from_pretrained(p, quantization_config=bnb)").settings
    assert q.get("quantization") is True
