"""Signature debugging: find which usual mistake reproduces a signature the server rejected.

An integrator whose server gets SVC-GW-1002 has a signature that differs from the
expected one. `diagnose` recomputes the signature under each of the usual
mistakes and names those that reproduce what the integrator sent.
"""

from __future__ import annotations

import hmac
import json
from dataclasses import dataclass
from urllib.parse import urlsplit

from workbench.signing import canonical_path, canonical_string, sign

__all__ = ["MISTAKES", "Diagnosis", "Mistake", "diagnose"]


@dataclass(frozen=True, slots=True)
class Mistake:
    """A usual signing mistake and how to fix it."""

    name: str
    description: str
    fix: str


MISTAKES: dict[str, Mistake] = {
    m.name: m
    for m in (
        Mistake(
            "empty-body-as-object",
            "the empty body was hashed as '{}'",
            "hash the empty string (b'') when the request has no body",
        ),
        Mistake(
            "empty-body-as-null",
            "the empty body was hashed as 'null'",
            "hash the empty string (b'') when the request has no body",
        ),
        Mistake(
            "body-not-hashed",
            "the body was left out of the hash (the empty string was hashed instead)",
            "hash the exact bytes of the body you send",
        ),
        Mistake(
            "body-reserialized",
            "a different serialization of the same JSON was hashed than the bytes sent",
            "serialize the body once and hash and send those same bytes",
        ),
        Mistake(
            "query-string-included",
            "the query string was included in the path line",
            "sign the route path only, without '?' and what follows",
        ),
        Mistake(
            "full-url-signed",
            "the scheme and host were included in the path line",
            "sign the route path only, without the domain",
        ),
        Mistake(
            "lowercase-method",
            "the HTTP method was not uppercased",
            "write the method in uppercase (POST, GET)",
        ),
        Mistake(
            "trailing-slash",
            "the path was signed with its trailing slash; the canonical path has none "
            "(the server verifies and answers /x/ as /x)",
            "sign the path without the trailing slash; sending the URL with one is fine",
        ),
        Mistake(
            "timestamp-with-offset",
            "the timestamp was signed with an offset (+00:00) instead of 'Z'",
            "sign and send the same text, in UTC ending in 'Z'",
        ),
        Mistake(
            "timestamp-text-differs",
            "the timestamp signed is not the exact X-Timestamp text sent",
            "sign the exact X-Timestamp string you send",
        ),
        Mistake(
            "public-key-as-secret",
            "the public key (pk_) was used as the HMAC key",
            "use the secret key (sk_) as the HMAC key",
        ),
    )
}


@dataclass(frozen=True, slots=True)
class Diagnosis:
    """The outcome of checking a signature.

    Attributes:
        expected: the correct signature for the request.
        matches: whether the given signature is the correct one.
        mistakes: the mistakes whose signature equals the given one (empty if none found).
        canonical: the correct canonical string.
    """

    expected: str
    matches: bool
    mistakes: tuple[Mistake, ...]
    canonical: str


def _variants(
    *, api_key: str | None, secret_key: str, timestamp: str, method: str, url: str, body: bytes
) -> list[tuple[str, str, str, str, str, bytes]]:
    """(mistake, key, timestamp, method, path, body) tuples, one per mistake that applies."""
    path = canonical_path(url)
    upper = method.upper()
    parts = urlsplit(url)
    out: list[tuple[str, str, str, str, str, bytes]] = []
    if body == b"":
        out.append(("empty-body-as-object", secret_key, timestamp, upper, path, b"{}"))
        out.append(("empty-body-as-null", secret_key, timestamp, upper, path, b"null"))
    else:
        out.append(("body-not-hashed", secret_key, timestamp, upper, path, b""))
        try:
            parsed = json.loads(body)
        except ValueError:
            parsed = None
        if parsed is not None:
            for text in (
                json.dumps(parsed),
                json.dumps(parsed, separators=(",", ":")),
                json.dumps(parsed, ensure_ascii=False),
                json.dumps(parsed, separators=(",", ":"), ensure_ascii=False),
                json.dumps(parsed, indent=2),
                json.dumps(parsed, sort_keys=True, separators=(",", ":")),
            ):
                encoded = text.encode("utf-8")
                if encoded != body:
                    out.append(("body-reserialized", secret_key, timestamp, upper, path, encoded))
    if parts.query:
        out.append(
            ("query-string-included", secret_key, timestamp, upper, f"{path}?{parts.query}", body)
        )
    if parts.netloc:
        full = f"{parts.scheme}://{parts.netloc}{path}"
        out.append(("full-url-signed", secret_key, timestamp, upper, full, body))
    out.append(("lowercase-method", secret_key, timestamp, method.lower(), path, body))
    if path != "/":
        out.append(("trailing-slash", secret_key, timestamp, upper, path + "/", body))
    if timestamp.endswith("Z"):
        stem = timestamp[:-1]
        out.append(("timestamp-with-offset", secret_key, stem + "+00:00", upper, path, body))
        out.append(("timestamp-with-offset", secret_key, stem + "+0000", upper, path, body))
        out.append(("timestamp-text-differs", secret_key, stem + ".000Z", upper, path, body))
        out.append(("timestamp-text-differs", secret_key, stem, upper, path, body))
    elif "+" in timestamp or timestamp.count("-") > 2:
        # Sent with an offset: the usual story is a signer that wrote Z.
        head = timestamp[:19]
        out.append(("timestamp-with-offset", secret_key, head + "Z", upper, path, body))
    if api_key:
        out.append(("public-key-as-secret", api_key, timestamp, upper, path, body))
    return out


def diagnose(
    *,
    secret_key: str,
    timestamp: str,
    method: str,
    url: str,
    body: bytes,
    given: str,
    api_key: str | None = None,
) -> Diagnosis:
    """Compare ``given`` with the correct signature and name the mistakes that reproduce it.

    Args:
        secret_key: the secret key the request should be signed with.
        timestamp: the X-Timestamp text that was sent.
        method: the HTTP method that was sent.
        url: the URL (or path) that was requested.
        body: the body bytes that were sent.
        given: the X-Signature that was sent.
        api_key: the public key, to detect it used as the HMAC key.
    """
    path = canonical_path(url)
    upper = method.upper()
    expected = sign(secret_key, timestamp, upper, path, body)
    canonical = canonical_string(timestamp, upper, path, body)
    wanted = given.strip().lower()
    if hmac.compare_digest(expected, wanted):
        return Diagnosis(expected, True, (), canonical)
    found: list[Mistake] = []
    for name, key, ts, meth, pth, data in _variants(
        api_key=api_key,
        secret_key=secret_key,
        timestamp=timestamp,
        method=method,
        url=url,
        body=body,
    ):
        if hmac.compare_digest(sign(key, ts, meth, pth, data), wanted):
            mistake = MISTAKES[name]
            if mistake not in found:
                found.append(mistake)
    return Diagnosis(expected, False, tuple(found), canonical)
