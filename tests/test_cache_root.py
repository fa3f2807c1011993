"""An unusable cache directory never stops a run: a temporary one is used, with one warning."""

from __future__ import annotations

import os

from assistant import cache


def test_cache_path_that_is_a_file_falls_back_to_a_temporary_dir(tmp_path, monkeypatch, capsys):
    blocker = tmp_path / "cache"
    blocker.write_text("a file where the cache directory should be")
    monkeypatch.setenv("TRL_HELP_CACHE_DIR", str(blocker / "sub"))
    cache._usable.cache_clear()
    root = cache.cache_root()
    assert root != blocker / "sub" and root.is_dir() and os.access(root, os.W_OK)
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unusable" in err and str(blocker / "sub") in err
    assert cache.cache_root() == root and capsys.readouterr().err == ""  # warned once per process
    cache._usable.cache_clear()


def test_writable_cache_dir_is_used_as_is(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("TRL_HELP_CACHE_DIR", str(tmp_path / "c"))
    cache._usable.cache_clear()
    assert cache.cache_root() == tmp_path / "c"
    assert capsys.readouterr().err == "" and list((tmp_path / "c").iterdir()) == []
    cache._usable.cache_clear()


def test_a_held_build_lock_is_waited_for_with_a_notice_then_an_error(tmp_path, monkeypatch, capsys):
    import subprocess
    import sys
    import time

    import pytest

    from assistant.match import index

    lock = tmp_path / ".index.lock"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time\nfrom filelock import FileLock\n"
            f"held = FileLock({str(lock)!r}); held.acquire(); print('held', flush=True); time.sleep(120)",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        monkeypatch.setattr(index, "LOCK_WAIT_S", 1.0)
        t0 = time.monotonic()
        with pytest.raises(TimeoutError, match="held for over"):
            with index._build_lock(lock):
                pass
        assert time.monotonic() - t0 < 30
        assert "another trl-help process is building the index" in capsys.readouterr().err
    finally:
        holder.kill()
