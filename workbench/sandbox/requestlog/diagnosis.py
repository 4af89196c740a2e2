"""A signature refusal's diagnosis: what the sandbox signed, and the likely mistake.

For SVC-GW-1001 (the timestamp) and SVC-GW-1002 (the signature) the request's page
shows the canonical string the sandbox built from the request as received (timestamp,
method, path, the body's SHA-256) and the mistakes that reproduce the signature sent,
by the rules of ``workbench sign --expect`` (`workbench.signature_debug.diagnose`, the
same function). It is made by the request log's writer, which alone sees the signature
sent (never stored whole) and opens the merchant's secret (never stored at all): the
diagnosis keeps neither, nor the signature the sandbox expected.
"""

from __future__ import annotations

import hashlib
from typing import Any

from workbench.signature_debug import diagnose
from workbench.signing import canonical_path, canonical_string

__all__ = ["SIGNATURE_CODES", "signature_diagnosis"]

#: The refusals that get a diagnosis.
SIGNATURE_CODES = frozenset({"SVC-GW-1001", "SVC-GW-1002"})


def signature_diagnosis(
    *,
    code: str,
    message: str,
    secret_key: str | None,
    api_key: str,
    timestamp: str | None,
    signature: str | None,
    method: str,
    url: str,
    body: bytes,
) -> dict[str, Any]:
    """The diagnosis of a signature refusal, as JSON-ready values (no secret in it).

    Args:
        code: the refusal's code (SVC-GW-1001 or SVC-GW-1002).
        message: the refusal's message (what was wrong with the timestamp, for 1001).
        secret_key: the merchant's secret key (``None``: it could not be opened).
        api_key: the X-Api-Key sent.
        timestamp: the X-Timestamp text sent.
        signature: the X-Signature sent.
        method: the method sent.
        url: the path as received, with its query string if any.
        body: the body bytes received.

    Returns:
        ``code``, ``problem`` (the refusal's message), ``canonical`` (the canonical
        string's four lines), ``bodySha256``, ``signatureSent`` (its first 8 hex
        characters), ``matches`` (whether the signature was right: a 1001 then is the
        timestamp alone), and ``mistakes`` (``name``, ``description``, ``fix`` of each
        usual mistake that reproduces it).
    """
    ts = timestamp or ""
    path = canonical_path(url)
    upper = method.upper()
    result: dict[str, Any] = {
        "code": code,
        "problem": message,
        "canonical": canonical_string(ts, upper, path, body).split("\n"),
        "bodySha256": hashlib.sha256(body).hexdigest(),
        "signatureSent": (signature or "")[:8],
        "matches": False,
        "mistakes": [],
    }
    if secret_key is None or not signature:
        return result
    found = diagnose(
        secret_key=secret_key,
        timestamp=ts,
        method=method,
        url=url,
        body=body,
        given=signature,
        api_key=api_key,
    )
    result["matches"] = found.matches
    result["mistakes"] = [
        {"name": m.name, "description": m.description, "fix": m.fix} for m in found.mistakes
    ]
    return result
