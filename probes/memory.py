"""Will the user's model fit? A memory estimate made before any phase loads it.

A probe phase loads the model (on CPU in float32), adds LoRA or a second copy for a reference
model, and trains a step on a tiny batch. The estimate is the weight files' size scaled to the
load dtype, times `PHASE_FACTOR`; it is compared with the memory this process may still use (the
lower of MemAvailable and the cgroup limit). Without it a 1B model under a 5 GB limit died in
every phase with an mmap error after minutes of loading.
"""

from __future__ import annotations

from pathlib import Path

#: peak of a phase relative to the loaded weights (LoRA grads, activations of a tiny batch, the
#: tokenizer, and the copy from_pretrained holds while it loads)
PHASE_FACTOR = 1.5
#: bytes per element by config dtype (the files' dtype)
_ELEMENT = {"float32": 4, "float16": 2, "bfloat16": 2, "float64": 8, "int8": 1}
_WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth")


def weights_bytes(model_dir: str | Path) -> int:
    """Size of the weight files in *model_dir* (training_args.bin and optimizer states excluded)."""
    total = 0
    for p in Path(model_dir).iterdir():
        if (
            p.is_file()
            and p.suffix in _WEIGHT_SUFFIXES
            and not p.name.startswith(("training_args", "optimizer", "scheduler", "rng_state"))
        ):
            total += p.stat().st_size
    return total


def estimate_bytes(model_dir: str | Path, config_dtype: str | None, device: str) -> int:
    """Peak memory one phase needs for this model: on CPU the probes load float32."""
    size = weights_bytes(model_dir)
    file_elem = _ELEMENT.get(str(config_dtype or "float32").replace("torch.", ""), 4)
    load_elem = 4 if device == "cpu" else file_elem
    return int(size * load_elem / file_elem * PHASE_FACTOR)


def available_bytes() -> int | None:
    """Memory this process may still allocate: MemAvailable, capped by a cgroup v2 limit; None if unknown."""
    avail: int | None = None
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                avail = int(line.split()[1]) * 1024
                break
    except (OSError, ValueError):
        pass
    try:
        limit = Path("/sys/fs/cgroup/memory.max").read_text().strip()
        if limit != "max":
            used = int(Path("/sys/fs/cgroup/memory.current").read_text().strip())
            room = int(limit) - used
            avail = room if avail is None else min(avail, room)
    except (OSError, ValueError):
        pass
    return avail


def too_big(model_dir: str | Path, config_dtype: str | None, device: str) -> str | None:
    """A one-line reason when the model will not fit in CPU memory here, else None (CUDA memory is
    not checked: the worker reports torch's own out-of-memory error)."""
    if device != "cpu":
        return None
    need, have = estimate_bytes(model_dir, config_dtype, device), available_bytes()
    if have is None or need <= have:
        return None
    gib = 1 << 30
    return (
        f"the model needs about {need / gib:.1f} GiB of memory per phase on CPU (float32) and "
        f"{have / gib:.1f} GiB is available: run with --tiny-replica (same architecture, 2 layers, "
        "small dims) or on a machine with more memory (--set memory_check=off to try anyway)"
    )
