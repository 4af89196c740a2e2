"""`replies.dumps` writes what ``json.dumps`` wrote, byte for byte.

Stored answers are replayed verbatim and hashed by clients, so changing the encoder
must not change a single byte of what the services build (strings in every script,
integers of any size, booleans, nulls, nested lists and objects).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.sandbox.replies import dumps

text = st.text(st.characters(exclude_categories=("Cs",)))
values = st.recursive(
    st.none() | st.booleans() | st.integers() | text,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(text, inner, max_size=4),
    max_leaves=24,
)


def _json(payload: Any) -> bytes:
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


@settings(max_examples=400)
@given(values)
def test_same_bytes_as_json_dumps(payload: Any) -> None:
    assert dumps(payload) == _json(payload)


def test_control_characters_and_scripts() -> None:
    payload = {"m": 'a\nb\t\x00\x1f"\\/ şğüİ ₺ 😀', "n": [2**70, -1, True, None]}
    assert dumps(payload) == _json(payload)


def test_a_lone_surrogate_fails_as_json_does() -> None:
    with pytest.raises(UnicodeEncodeError):
        dumps({"m": "\ud800"})
