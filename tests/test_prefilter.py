"""The symptom-pattern pre-filter never hides a match: every KB pattern on every real text."""

from __future__ import annotations

import json
import re

import pytest

from assistant.match.prefilter import may_match, required_literals
from assistant.match.symptoms import without_backticks
from tests.conftest import ROOT


@pytest.mark.parametrize(
    ("pattern", "groups"),
    [
        ("CUDA out of memory", (("cuda out of memory",),)),
        # two groups, the one with fewer alternatives first
        (r"(int4|int8|gptq)[^\n]{0,200}(zero-?3|stage 3)", (("stage 3", "zero"), ("gptq", "int4", "int8"))),
        (r"(optional )?trainable params: 0", (("trainable params: 0",),)),
        (r"foo|ba", ()),  # an alternative shorter than MIN_LITERAL proves nothing
        (r"foo|bar", (("bar", "foo"),)),
        (r"(?:abc)?\d+", ()),  # an optional group requires nothing
        (r"(?<!\d)(443|1297) ?bytes", (("bytes",), ("1297", "443"))),
        (r"[a-z]+ is not", ((" is not",),)),
    ],
)
def test_required_literals_of_a_pattern(pattern, groups):
    assert required_literals(pattern, "regex") == groups


def _kb_patterns():
    import yaml

    out = []
    for f in sorted((ROOT / "kb" / "cases").glob("*.yaml")):
        d = yaml.safe_load(f.read_text(encoding="utf-8"))
        for key in ("messages", "log_patterns"):
            for p in d["symptoms"].get(key) or []:
                out.append((p["pattern"], p.get("kind", "literal")))
    return out


def _real_texts():
    texts = [p.read_text(encoding="utf-8", errors="replace") for p in (ROOT / "kb" / "fixtures").glob("*/*.txt")]
    for p in (ROOT / "kb" / "eval").glob("*.jsonl"):
        texts += [json.loads(line)["text"] for line in p.read_text(encoding="utf-8").splitlines() if line.strip()]
    texts += [p.read_text(encoding="utf-8", errors="replace") for p in (ROOT / "kb" / "logs").rglob("*.log")]
    return texts


def test_the_prefilter_never_rejects_a_text_the_pattern_matches():
    """Soundness on real text: for every KB pattern (and its backtick-free loose form) and every
    fixture, eval report and healthy log, a regex match implies the pre-filter lets it through."""
    patterns, texts = _kb_patterns(), _real_texts()
    assert len(patterns) > 700 and len(texts) > 900
    lows = [t.lower() for t in texts]
    checked = skipped = 0
    for pattern, kind in patterns:
        forms = [(pattern, kind)]
        if kind == "regex" and "`" in pattern:
            forms.append((without_backticks(pattern), "regex"))
        for form, k in forms:
            try:
                rx = re.compile(form if k == "regex" else re.escape(form), re.IGNORECASE)
            except re.error:  # a loose form that is no regex is never searched (symptoms._loose_regex)
                continue
            for text, low in zip(texts, lows):
                if not may_match(form, k, low):
                    skipped += 1
                    assert rx.search(text) is None, (form, text[:200])
                checked += 1
    assert skipped > 0.9 * checked  # the filter does its job: most pattern/text pairs never run the regex


def test_the_kb_carries_every_patterns_groups_so_a_cold_start_parses_none():
    """The table pickled with the KB holds each pattern (and its loose form) with the groups the
    parser gives: a cold `explain` looks them up instead of parsing ~800 regexes."""
    from assistant.kb.load import load_kb
    from assistant.match import prefilter

    kb = load_kb()
    patterns = _kb_patterns()
    assert all((p, k) in kb.prefilter for p, k in patterns)
    assert all(kb.prefilter[(p, k)] == prefilter._required(p, k) for p, k in patterns)
    prefilter._required.cache_clear()
    prefilter.prime(kb.prefilter)
    for p, k in patterns:
        prefilter.required_literals(p, k)
    assert prefilter._required.cache_info().misses == 0
