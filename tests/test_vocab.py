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
