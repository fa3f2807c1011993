"""The vocabularies shared by parse and kb stay one: every setting the parser reads is one a case
may name, and the package list / embedding width come from assistant.vocab."""

from __future__ import annotations


def test_every_setting_the_parser_reads_is_known_to_the_kb():
    from assistant.kb.model import SETTINGS
    from assistant.parse.environment import BOOL_SETTINGS, INT_SETTINGS

    parsed = set(BOOL_SETTINGS) | set(INT_SETTINGS)
    assert parsed and parsed <= set(SETTINGS), parsed - set(SETTINGS)


def test_embedding_width_is_the_index_width():
    from assistant.match.index import EMBEDDING_DIM
    from assistant.vocab import EMBEDDING_DIM as VOCAB_DIM

    assert EMBEDDING_DIM == VOCAB_DIM == 384


def test_metric_spellings_map_onto_the_metric_names_cases_use():
    from assistant.kb.model import METRICS
    from assistant.parse.metrics import canonical_name
    from assistant.vocab import METRIC_SPELLINGS

    assert set(METRIC_SPELLINGS.values()) == set(METRICS)  # every case metric is readable, no orphan
    for logged, canon in METRIC_SPELLINGS.items():
        assert canonical_name(logged) == canon
    assert canonical_name("completions/clipped_ratio") == "clipped_ratio"
    assert canonical_name("train/loss") == "loss"


def test_one_package_list():
    from assistant.kb.model import PACKAGES as KB_PACKAGES
    from assistant.parse.model import FRAME_PACKAGES
    from assistant.vocab import PACKAGES
    from probes.worker import VERSION_PACKAGES

    assert KB_PACKAGES is PACKAGES and FRAME_PACKAGES is PACKAGES
    assert set(PACKAGES) <= set(VERSION_PACKAGES)
