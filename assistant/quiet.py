"""Library chatter (weight-loading bars, tracer warnings) kept off the user's terminal.

The one-time index build and ONNX export run inside `quiet_libraries()`: Python warnings and
transformers' progress bars are switched off and anything written to the stderr file
descriptor is captured; it is shown only if the block fails, or always with `--verbose`
(`TRL_HELP_VERBOSE=1`).
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
import warnings
from collections.abc import Iterator


def verbose() -> bool:
    return bool(os.environ.get("TRL_HELP_VERBOSE"))


@contextlib.contextmanager
def quiet_libraries() -> Iterator[None]:
    if verbose():
        yield
        return
    with warnings.catch_warnings(), tempfile.TemporaryFile(mode="w+b") as sink:
        warnings.simplefilter("ignore")
        try:
            from transformers.utils import logging as hf_logging

            hf_logging.disable_progress_bar()
            hf_logging.set_verbosity_error()
        except ImportError:  # pragma: no cover - transformers is a dependency
            pass
        sys.stderr.flush()
        saved = os.dup(2)
        os.dup2(sink.fileno(), 2)
        failed = True
        try:
            yield
            failed = False
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            if failed:
                sink.seek(0)
                sys.stderr.write(sink.read().decode("utf-8", "replace")[-20_000:])
