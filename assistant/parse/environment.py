"""Versions (`trl env`, `transformers env`, `accelerate env`, `ds_report`, pip freeze, paths)
and training settings visible in the text."""

from __future__ import annotations

import re

from assistant.vocab import ALIASES, PACKAGES

_VER = r"v?(?P<ver>\d+\.\d+(?:\.\d+)*(?:(?:\.|-)?(?:dev|rc|post|a|b)\d*)*(?:\+[\w.]+)?)"
_PKGS = {**{p: p for p in PACKAGES}, **ALIASES, "python": "python"}
_PKG = (
    r"(?P<pkg>trl|transformers|peft|deepspeed|accelerate|vllm|torch|pytorch|bitsandbytes|"
    r"unsloth|datasets|flash[-_]attn|python)"
)
_SEP = r"\s*(?:[:=\uff1a]=?|\.{2,}|\s)\s*"
# `- TRL version: 0.15.2`, `- `transformers` version: 4.46`, `trl==0.15.2`, `torch 2.5.1`,
# `PyTorch version (GPU?): 2.5.0+cu121 (True)`, `deepspeed info ....... 0.12.3, unknown`,
# prose `my transformers version is 4.30.2`, and the Chinese forms `transformers版本4.46.2`,
# `VLLM version： 0.6.4.post1` (full-width colon)
VERSION_RE = re.compile(
    r"(?<![\w/.-])`?" + _PKG + r"`?"
    r"(?:(?:\s+(?:version|info)(?:\s*\([^)]*\))?(?:\s+(?:is|was))?)?"
    + _SEP
    + r"|\s*\u7248\u672c\u53f7?\s*[:\uff1a]?\s*)"
    + _VER
    + r"(?!\w|\.\w)",
    re.IGNORECASE,
)
# `the version of transformers is 4.30.2`
VERSION_OF_RE = re.compile(
    r"\bversions?\s+of\s+`?" + _PKG + r"`?\s+(?:is|was|[:=\uff1a])\s*" + _VER + r"(?!\w|\.\w)",
    re.IGNORECASE,
)
PY_PATH_RE = re.compile(r"python(3\.\d+)[/\\](?:site|dist)-packages")


def _version_text(text: str, head: int = 256 * 1024) -> str:
    """Where versions are looked for: all of a short paste; the head of a big log plus its
    lines that say `version` or pin `==` (regex over megabytes of noise is slow)."""
    if len(text) <= head:
        return text
    rest = [ln for ln in text[head:].split("\n") if "version" in ln or "==" in ln or "Version" in ln]
    return text[:head] + "\n" + "\n".join(rest[:5000])


def find_versions(text: str) -> dict[str, str]:
    """Package -> version. Explicit env/freeze lines win over loose mentions (first one kept)."""
    out: dict[str, str] = {}
    text = _version_text(text)
    for m in (*VERSION_RE.finditer(text), *VERSION_OF_RE.finditer(text)):
        pkg = _PKGS[m.group("pkg").lower()]
        ver = m.group("ver").rstrip(".")
        if pkg == "python" and not ver.startswith("3."):
            continue
        if pkg == "torch" and ver.startswith(("0.", "1.0")) and "." not in ver[2:]:
            continue
        out.setdefault(pkg, ver)
    if "python" not in out:
        pm = PY_PATH_RE.search(text)
        if pm:
            out["python"] = pm.group(1)
    return out


_B = r"\s*[:=]\s*[\"']?(?P<v>True|False|true|false|1|0)\b"
#: `name=6`, `name: 6`, `"name": 6`, and the command-line form `--name 6`
_I = r"[\"']?(?:\s*[:=]\s*|[ \t]+)[\"']?(?P<v>\d+)\b"
BOOL_SETTINGS = {
    "gradient_checkpointing": re.compile(r"\bgradient_checkpointing" + _B),
    "use_reentrant": re.compile(r"\buse_reentrant[\"']?" + _B),
    "use_vllm": re.compile(r"\buse_vllm" + _B),
    "load_in_4bit": re.compile(r"\bload_in_4bit" + _B),
    "load_in_8bit": re.compile(r"\bload_in_8bit" + _B),
    "bf16": re.compile(r"\bbf16" + _B),
    "fp16": re.compile(r"\bfp16" + _B),
}
INT_SETTINGS = {
    "num_generations": re.compile(r"\bnum_generations" + _I),
    "per_device_train_batch_size": re.compile(r"\bper_device_train_batch_size" + _I),
    "gradient_accumulation_steps": re.compile(r"\bgradient_accumulation_steps" + _I),
    # `zero_stage=3`, a JSON config's `"stage": 3` (no \\b: a quote follows a space), and DeepSpeed's
    # config print `zero_optimization_stage ...... 0`
    "zero_stage": re.compile(r"(?:\bzero_stage|\"stage\"|\bzero_optimization_stage(?: \.+)?)" + _I),
    "world_size": re.compile(r"\b(?:world_size|num_processes|nproc_per_node|WORLD_SIZE)" + _I),
    "master_port": re.compile(r"(?:\bmaster[_-]port|\bMASTER_PORT|\bmain_process_port)" + _I),
}
#: searched in the lower-cased text (case-insensitive regexes are slow on long logs)
FLAG_SIGNALS: dict[str, re.Pattern[str]] = {
    "gradient_checkpointing": re.compile(
        r"gradient_checkpointing_enable\(|torch[/\\]utils[/\\]checkpoint\.py|use_cache=true` is incompatible with gradient checkpointing"
    ),
    "lora": re.compile(r"loraconfig|get_peft_model|peft_config|\blora_[ab]\b|peftmodel|\blora\b"),
    "deepspeed": re.compile(r"deepspeed"),
    "fsdp": re.compile(r"\bfsdp\b|fullyshardeddataparallel|fully_sharded"),
    "ddp": re.compile(r"distributeddataparallel|nn[/\\]parallel[/\\]distributed\.py"),
    "use_vllm": re.compile(r"site-packages[/\\]vllm[/\\]|\bvllm_mode\b|trl vllm-serve|vllm_client"),
    "quantization": re.compile(
        r"bitsandbytes|load_in_4bit|load_in_8bit|linear4bit|linear8bitlt|\bgptq\b|\bawq\b|"
        # not the keys of DeepSpeed's compression / ZeRO++ config, which every DeepSpeed run prints
        r"(?<!weight_)(?<!activation_)(?<!mixed_)(?<!zero_)quantiz"
        r"(?!e_groups|e_verbose|ation_type|er_kernel|e_weight_in_forward|e_change_ratio|ation_config \.|ed_)"
    ),
    "device_map_auto": re.compile(r"device_map\s*=\s*[\"']auto[\"']"),
    "docker": re.compile(r"\bdocker\b|/dev/shm"),
    "multimodal": re.compile(r"pixel_values|image_grid_thw|-vl-|\bvl\b|vision|processor\(images"),
}
#: per flag: substrings of which every match of its regex contains one, starting at most `back`
#: characters after the match start. The regex then runs from the first of them instead of
#: from the top of a megabyte of log (the same first match, found in a fraction of the time).
FLAG_ANCHORS: dict[str, tuple[tuple[str, ...], int]] = {
    "gradient_checkpointing": (("gradient_checkpointing_enable(", "checkpoint.py", "use_cache=true"), 12),
    "lora": (("lora", "peft"), 4),
    "deepspeed": (("deepspeed",), 0),
    "fsdp": (("fsdp", "fullysharded", "fully_sharded"), 0),
    "ddp": (("distributeddataparallel", "distributed.py"), 12),
    "use_vllm": (("vllm",), 14),
    "quantization": (("bitsandbytes", "load_in_", "linear4bit", "linear8bitlt", "gptq", "awq", "quantiz"), 0),
    "device_map_auto": (("device_map",), 0),
    "docker": (("docker", "/dev/shm"), 0),
    "multimodal": (("pixel_values", "image_grid_thw", "vl", "vision", "processor(images"), 1),
}
_INT_KEYS = {
    "zero_stage": ("zero_stage", '"stage"', "zero_optimization_stage"),
    "world_size": ("world_size", "num_processes", "nproc_per_node", "WORLD_SIZE"),
    "master_port": ("master_port", "master-port", "MASTER_PORT", "main_process_port"),
}
#: the port in torch's c10d message when it cannot listen on it (the user's master port)
C10D_PORT_RE = re.compile(
    r"failed to (?:bind to \[[^\]]*\]|listen on any local network address)\W{0,3}(?:port: )?:?(\d{2,5})"
)
ZERO3_RE = re.compile(r"zero[_-]?3|stage3|Stage3|partition_parameters|ZeRO-?3|zero_stage\W+3", re.I)
#: ZERO3_RE's anchors in the lower-cased text (every match holds one at its start)
ZERO3_ANCHORS = ("zero", "stage3", "partition_parameters")
VLLM_MODE_RE = re.compile(r"vllm_mode\s*[:=]\s*[\"']?(server|colocate)")


def _bool(v: str) -> bool:
    return v.lower() in ("true", "1")


def search_from(rx: re.Pattern[str], text: str, anchors: tuple[str, ...], back: int = 0) -> re.Match[str] | None:
    """`rx.search(text)`, started at the first of *anchors* (less *back*): every match of *rx*
    holds one of them at most *back* characters after its start. None when none occurs."""
    hits = [i for a in anchors if (i := text.find(a)) >= 0]
    return rx.search(text, max(0, min(hits) - back)) if hits else None


def find_settings(text: str, ranks: list[int]) -> dict[str, bool | int | str]:
    """Settings visible in the text; explicit assignments win over inferred flags."""
    out: dict[str, bool | int | str] = {}
    for name, rx in BOOL_SETTINGS.items():
        m = search_from(rx, text, (name,))
        if m:
            out[name] = _bool(m.group("v"))
    for name, rx in INT_SETTINGS.items():
        m = search_from(rx, text, _INT_KEYS.get(name, (name,)))
        if m:
            out[name] = int(m.group("v"))
    low = text.lower()
    for name, rx in FLAG_SIGNALS.items():
        if name not in out and search_from(rx, low, *FLAG_ANCHORS[name]):
            out[name] = True
    if "zero_stage" not in out and search_from(ZERO3_RE, low, ZERO3_ANCHORS):
        out["zero_stage"] = 3
    if out.get("load_in_4bit") or out.get("load_in_8bit"):
        out["quantization"] = True
    if "master_port" not in out and "failed to" in text:
        pm = C10D_PORT_RE.search(text)
        if pm:
            out["master_port"] = int(pm.group(1))
    m = search_from(VLLM_MODE_RE, text, ("vllm_mode",))
    if m:
        out["vllm_mode"] = m.group(1)
    if ranks and "world_size" not in out and len(ranks) > 1:
        out["world_size"] = max(ranks) + 1
    return out
