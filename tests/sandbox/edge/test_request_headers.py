"""The edge reads request headers through one dict (`request_headers`), as Starlette would."""

from __future__ import annotations

from starlette.datastructures import Headers

from workbench.sandbox.context import request_header, request_headers

RAW = [
    (b"host", b"127.0.0.1:8765"),
    (b"x-api-key", b"pk_first"),
    (b"content-type", b"application/json"),
    (b"x-api-key", b"pk_second"),
    (b"x-note", "caf\u00e9".encode("latin-1")),
]


def test_a_repeated_header_gives_its_first_value_as_starlette_does() -> None:
    scope = {"type": "http", "headers": list(RAW)}

    assert request_header(scope, b"x-api-key") == "pk_first"
    assert request_header(scope, b"x-api-key") == Headers(scope=scope).get("x-api-key")
    assert request_headers(scope)[b"x-api-key"] == b"pk_first"


def test_every_header_reads_as_starlette_reads_it_and_a_missing_one_is_none() -> None:
    scope = {"type": "http", "headers": list(RAW)}
    starlette = Headers(scope=scope)

    for name, _ in RAW:
        assert request_header(scope, name) == starlette.get(name.decode("latin-1"))
    assert request_header(scope, b"x-signature") is None


def test_headers_given_as_any_iterable_of_pairs_are_read() -> None:
    scope = {"type": "http", "headers": iter(RAW)}  # the ASGI spec asks only for an iterable

    assert request_headers(scope)[b"host"] == b"127.0.0.1:8765"
    assert request_header(scope, b"x-api-key") == "pk_first"  # read again: still all there
    assert list(scope["headers"]) == RAW
