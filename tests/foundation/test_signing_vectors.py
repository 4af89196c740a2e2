"""Every vector of the spec's signing-vectors.json, byte for byte."""

from __future__ import annotations

from typing import Any

import pytest

from tests.vectors import COPY, SHARED, load_vectors, vectors_path
from workbench import signing

VECTORS = load_vectors()
IDS = [v["name"] for v in VECTORS]


def test_vectors_come_from_the_spec_when_it_is_beside_the_checkout() -> None:
    if not SHARED.is_file():
        pytest.skip(f"{SHARED} not present; using the committed copy {COPY}")
    assert vectors_path() == SHARED
    assert COPY.read_bytes() == SHARED.read_bytes(), "tests/data copy drifted from the spec"


@pytest.mark.parametrize("vector", VECTORS, ids=IDS)
def test_body_hash(vector: dict[str, Any]) -> None:
    assert signing.body_sha256(vector["body"].encode("utf-8")) == vector["body_sha256"]


@pytest.mark.parametrize("vector", VECTORS, ids=IDS)
def test_canonical_string(vector: dict[str, Any]) -> None:
    path = signing.canonical_path(vector["url"])
    canonical = signing.canonical_string(
        vector["timestamp"], vector["method"], path, vector["body"].encode("utf-8")
    )
    assert canonical == vector["canonical"]
    assert not canonical.endswith("\n")
    assert canonical.count("\n") == 3


@pytest.mark.parametrize("vector", VECTORS, ids=IDS)
def test_signature(vector: dict[str, Any]) -> None:
    headers = signing.sign_request(
        api_key="pk_test_x",
        secret_key=vector["secret_key"],
        method=vector["method"],
        url=vector["url"],
        body=vector["body"].encode("utf-8"),
        timestamp=vector["timestamp"],
    )
    assert headers.signature == vector["signature"]
    assert headers.timestamp == vector["timestamp"]
    assert headers.as_dict()["X-Signature"] == vector["signature"]


@pytest.mark.parametrize("vector", VECTORS, ids=IDS)
def test_verify_accepts_vector_at_its_own_time(vector: dict[str, Any]) -> None:
    now = signing.parse_timestamp(vector["timestamp"])
    signing.verify(
        vector["secret_key"],
        signature=vector["signature"],
        timestamp=vector["timestamp"],
        method=vector["method"],
        path=signing.canonical_path(vector["url"]),
        body=vector["body"].encode("utf-8"),
        now=now,
    )


def test_signed_headers_repr_hides_the_signature() -> None:
    vector = VECTORS[0]
    headers = signing.sign_request(
        api_key="pk_test_abcdefghijkl",
        secret_key=vector["secret_key"],
        method="POST",
        url=vector["url"],
        body=vector["body"].encode(),
        timestamp=vector["timestamp"],
    )
    assert vector["signature"] not in repr(headers)
    assert "pk_test_abcdefghijkl" not in repr(headers)
