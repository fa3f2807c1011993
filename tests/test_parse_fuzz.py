"""Property-based: the parser never crashes, whatever the input."""

from __future__ import annotations

import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from assistant.parse import InputError, parse_bytes, parse_text
from tests.conftest import shared_reports


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text())
def test_any_text(text):
    parse_text(text)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=4096))
def test_any_bytes(data):
    try:
        parse_bytes(data)
    except InputError as exc:
        assert "\n" not in str(exc)


def test_mutated_real_reports():
    rng = random.Random(1234)
    reports = [t for _, t in shared_reports()]
    for _ in range(400):
        t = list(rng.choice(reports))
        for _ in range(rng.randint(1, 20)):
            op = rng.random()
            pos = rng.randrange(len(t) + 1)
            if op < 0.4 and t:
                del t[min(pos, len(t) - 1)]
            elif op < 0.8:
                t.insert(
                    pos,
                    rng.choice(
                        [
                            "\n",
                            "\r",
                            ":",
                            "Traceback (most recent call last):\n",
                            "[rank3]: ",
                            "\x1b[31m",
                            '  File "',
                            "Error: ",
                            "{'loss': ",
                        ]
                    ),
                )
            else:
                t = t[:pos]
        parse_text("".join(t))
