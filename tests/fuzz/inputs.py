"""Hostile inputs for the whole pipeline, generated from a seed (same seed, same inputs).

Kinds, each built on the KB's real reports where it can:
- `mutated`: a real report with characters deleted and hostile tokens inserted (terminal escapes,
  C1 controls, lone surrogates, NUL, `[rankN]:` prefixes, traceback headers, metric dicts);
- `unicode`: random code points from every plane, surrogates and controls included;
- `huge-line`: a real report with one line of 100 KB–1 MB (regex-hostile repetitions);
- `chain`: many chained exceptions and deep frames;
- `log`: training-log lines with odd metric values (nan, inf, 1e308, negative zero);
- `spliced`: two reports cut and joined, or a report cut mid-line.
"""

from __future__ import annotations

import random
from collections.abc import Iterator

KINDS = ("mutated", "unicode", "huge-line", "chain", "log", "spliced")
#: how often each kind is drawn (huge lines are rare: each one costs ~0.1 s)
WEIGHTS = (40, 15, 1, 8, 16, 20)

TOKENS = [
    "\n",
    "\r",
    "\r\n",
    ":",
    "\x00",
    "\x1b[31m",
    "\x1b]0;title\x07",
    "\x1b]52;c;Y2xpcGJvYXJk\x1b\\",
    "\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\",
    "\x1bc",
    "\x1bP1$r\x1b\\",
    "\x9b31m",
    "\x85",
    "\ud83d",
    "\udfff",
    "\ufeff",
    "\u202e",
    "Traceback (most recent call last):\n",
    "During handling of the above exception, another exception occurred:\n",
    "[rank3]: ",
    "[rank0]:[W1122 10:00:00.000] ",
    '  File "/x/site-packages/trl/trainer/grpo_trainer.py", line 1, in f\n',
    "Error: ",
    "RuntimeError: ",
    "{'loss': ",
    "nan",
    "`",
    "</details>",
    "@huggingface/trl-team ",
    '=HYPERLINK("http://x")',
    "\t",
    " " * 200,
]

HOSTILE_LINES = ["a_" * 50_000, "Error " * 40_000, "x" * 300_000, "\\w" * 60_000, "([" * 30_000, "0." * 50_000]


def _unicode(rng: random.Random, n: int) -> str:
    out = []
    for _ in range(n):
        r = rng.random()
        if r < 0.5:
            out.append(chr(rng.randrange(32, 127)))
        elif r < 0.6:
            out.append(chr(rng.randrange(0, 32)))
        elif r < 0.65:
            out.append(chr(rng.randrange(0xD800, 0xE000)))  # lone surrogates
        elif r < 0.7:
            out.append(chr(rng.randrange(0x80, 0xA0)))  # C1 controls
        else:
            out.append(chr(rng.randrange(0xA0, 0x110000)))
    return "".join(out)


def _mutate(rng: random.Random, text: str) -> str:
    t = list(text)
    for _ in range(rng.randint(1, 30)):
        pos = rng.randrange(len(t) + 1)
        op = rng.random()
        if op < 0.35 and t:
            del t[min(pos, len(t) - 1) : min(pos + rng.randint(1, 40), len(t))]
        else:
            t.insert(pos, rng.choice(TOKENS))
    return "".join(t)


def _chain(rng: random.Random, reports: list[str]) -> str:
    parts = []
    for i in range(rng.randint(2, 300)):
        frames = "".join(f'  File "/x/m{k}.py", line {k}, in f{k}\n    x()\n' for k in range(rng.randint(0, 50)))
        parts.append(f"Traceback (most recent call last):\n{frames}ValueError: level {i} {_unicode(rng, 20)}\n")
        parts.append(rng.choice(["\nThe above exception was the direct cause of the following exception:\n\n", "\n"]))
    return "".join(parts) + rng.choice(reports)


def _log(rng: random.Random) -> str:
    vals = ["nan", "inf", "-inf", "1e308", "-0.0", "0.0", "1.5", "-3", "'x'", "None", "[1, 2]", "{}"]
    lines = []
    for i in range(rng.randint(1, 400)):
        r = rng.random()
        if r < 0.5:
            keys = rng.sample(["loss", "grad_norm", "learning_rate", "reward", "reward_std", "kl", "epoch"], 3)
            lines.append("{" + ", ".join(f"'{k}': {rng.choice(vals)}" for k in keys) + "}")
        elif r < 0.8:
            lines.append(f"\r{rng.randint(0, 100)}%|####| {i}/1000 [00:01<00:02, {rng.random():.2f}it/s]")
        else:
            lines.append(f"[rank{rng.randint(0, 7)}]: WARNING {_unicode(rng, 30)}")
    return "\n".join(lines)


def generate(seed: int, reports: list[str]) -> Iterator[tuple[str, str]]:
    """(kind, text) forever, from *seed*, built on *reports*."""
    rng = random.Random(seed)
    while True:
        kind = rng.choices(KINDS, WEIGHTS)[0]
        base = rng.choice(reports)
        if kind == "mutated":
            text = _mutate(rng, base)
        elif kind == "unicode":
            text = _unicode(rng, rng.randint(0, 3000))
        elif kind == "huge-line":
            line = rng.choice(HOSTILE_LINES) * rng.randint(1, 3)
            cut = rng.randrange(len(base) + 1)
            text = base[:cut] + "\n" + line + "\n" + base[cut:]
        elif kind == "chain":
            text = _chain(rng, reports)
        elif kind == "log":
            text = _log(rng) + ("\n" + base if rng.random() < 0.5 else "")
        else:
            other = rng.choice(reports)
            text = base[: rng.randrange(len(base) + 1)] + other[rng.randrange(len(other) + 1) :]
        yield kind, text
