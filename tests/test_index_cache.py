"""The derived index: cached per KB hash + model, rebuilt when kb/ changes, safe under
concurrent builds."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

from tests.conftest import ROOT

BUILD = (
    "import sys; from pathlib import Path\n"
    "from assistant.kb.load import load_kb\n"
    "from assistant.match.index import Index\n"
    "idx = Index.load_or_build(load_kb(Path(sys.argv[1])), progress=False)\n"
    "print('DOCS', len(idx.docs))\n"
)


def _docs(root) -> int:
    """Documents of the one-case KB: title, symptoms and one per positive fixture."""
    from assistant.kb.load import load_kb

    return 2 + len(load_kb(root).positives["lora-gradient-checkpointing-no-grad"])


def _kb(tmp_path):
    root = tmp_path / "kb"
    (root / "cases").mkdir(parents=True)
    case = "lora-gradient-checkpointing-no-grad"
    shutil.copy(ROOT / "kb" / "cases" / f"{case}.yaml", root / "cases")
    shutil.copytree(ROOT / "kb" / "fixtures" / case, root / "fixtures" / case)
    return root


def test_concurrent_builds_share_one_index_and_kb_change_rebuilds(tmp_path):
    root = _kb(tmp_path)
    cache = tmp_path / "cache"
    env = {**os.environ, "TRL_HELP_CACHE_DIR": str(cache), "HF_HUB_OFFLINE": "1"}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", BUILD, str(root)], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        for _ in range(2)
    ]
    outs = [p.communicate(timeout=600) for p in procs]
    assert all(p.returncode == 0 for p in procs), outs
    assert all(f"DOCS {_docs(root)}" in o for o, _ in outs), outs
    dirs = sorted(p.name for p in cache.iterdir() if p.name.startswith("index-"))
    assert len(dirs) == 1
    assert not [p for p in cache.iterdir() if p.name.startswith(".build-")]  # no temp dirs left
    # editing the KB changes its hash: a new index is built next to the old one
    yaml = root / "cases" / "lora-gradient-checkpointing-no-grad.yaml"
    yaml.write_text(yaml.read_text().replace("Turn gradient checkpointing off", "Disable gradient checkpointing"))
    res = subprocess.run([sys.executable, "-c", BUILD, str(root)], env=env, capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr
    assert len([p for p in cache.iterdir() if p.name.startswith("index-")]) == 2  # old one kept as a spare


def test_stale_indexes_are_pruned(tmp_path):
    from assistant.match.index import FORMAT, _prune

    keep = tmp_path / f"index-v{FORMAT}-new"
    keep.mkdir()
    for i, name in enumerate([f"index-v{FORMAT}-a", f"index-v{FORMAT}-b", f"index-v{FORMAT}-c", "index-v1-old"]):
        d = tmp_path / name
        d.mkdir()
        os.utime(d, (1000 + i, 1000 + i))
    _prune(tmp_path, keep=keep, prefix=f"index-v{FORMAT}-")
    left = sorted(p.name for p in tmp_path.iterdir())
    assert left == [f"index-v{FORMAT}-b", f"index-v{FORMAT}-c", f"index-v{FORMAT}-new"]


def test_stale_onnx_exports_and_kb_pickles_are_pruned(tmp_path):
    """One ONNX export (173 MB) and one KB pickle per model/code/KB version used to pile up (8
    exports, 1.4 GB, on a developer machine); the current one and the most recent spares stay."""
    from assistant.cache import prune_siblings

    for i in range(4):
        d = tmp_path / f"onnx-{i}"
        d.mkdir()
        (d / "model.onnx").write_bytes(b"x")
        os.utime(d, (1000 + i, 1000 + i))
        f = tmp_path / f"kb-{i}.pickle"
        f.write_bytes(b"x")
        os.utime(f, (1000 + i, 1000 + i))
    (tmp_path / ".kb-inflight").write_bytes(b"x")  # another process's temp file is left alone
    (tmp_path / "index-v3-x").mkdir()
    prune_siblings(tmp_path / "onnx-0", "onnx-*", spare=1)
    prune_siblings(tmp_path / "kb-1.pickle", "kb-*.pickle", spare=1)
    left = sorted(p.name for p in tmp_path.iterdir())
    assert left == [".kb-inflight", "index-v3-x", "kb-1.pickle", "kb-3.pickle", "onnx-0", "onnx-3"]


def test_a_damaged_index_is_rebuilt_once_with_a_notice(tmp_path):
    """Bit-rot in vectors.npy or a bm25 pickle of the wrong type: rebuilt once, then loaded as is."""
    import pickle

    root = _kb(tmp_path)
    cache = tmp_path / "cache"
    env = {**os.environ, "TRL_HELP_CACHE_DIR": str(cache), "HF_HUB_OFFLINE": "1"}

    def run():
        res = subprocess.run(
            [sys.executable, "-c", BUILD, str(root)], env=env, capture_output=True, text=True, timeout=600
        )
        assert res.returncode == 0, res.stderr
        assert f"DOCS {_docs(root)}" in res.stdout
        return res.stderr

    run()
    (index,) = [p for p in cache.iterdir() if p.name.startswith("index-")]
    vectors = index / "vectors.npy"
    data = bytearray(vectors.read_bytes())
    data[-3] ^= 0x40  # one flipped bit in a float: the file still loads, the scores would change
    vectors.write_bytes(bytes(data))
    assert "damaged; rebuilding" in run()
    assert "building" not in run()  # healed: the next run loads it
    (index / "bm25.pickle").write_bytes(pickle.dumps({"not": "a BM25Index"}))
    assert "damaged; rebuilding" in run()
    assert "building" not in run()


def test_a_damaged_onnx_file_is_rebuilt_with_a_notice(tmp_path, capsys):
    """A truncated/garbage optimised ONNX file: one notice, rebuilt from the export, queries work."""
    from assistant.match.encoder import OnnxEncoder, model_id
    from assistant.match.index import ensure_onnx

    shutil.copy(ensure_onnx(model_id()), tmp_path / "model.onnx")
    (tmp_path / "model.opt.onnx").write_bytes(b"\x08\x07garbage")
    vec = OnnxEncoder(tmp_path / "model.onnx").encode(["ValueError: boom"])
    assert vec.shape[0] == 1 and abs(float((vec[0] ** 2).sum()) - 1.0) < 1e-3
    assert "query encoder is damaged" in capsys.readouterr().err
    OnnxEncoder(tmp_path / "model.onnx")  # healed: loads without a notice
    assert "damaged" not in capsys.readouterr().err


def test_a_change_in_what_load_kb_derives_changes_the_digest(tmp_path, monkeypatch):
    """The KB pickle, the index and memoised answers are keyed by `kb_digest`; the keywords and
    background lines load_kb derives are not in the files, so their version is hashed too (a
    changed derivation must not reuse a KB pickled by an older trl-help)."""
    from assistant.kb import load

    (tmp_path / "cases").mkdir()
    (tmp_path / "cases" / "a.yaml").write_text("id: a\n")
    before = load.kb_digest(tmp_path)
    assert load.kb_digest(tmp_path) == before
    monkeypatch.setattr(load, "KB_DERIVED_VERSION", load.KB_DERIVED_VERSION + 1)
    assert load.kb_digest(tmp_path) != before
