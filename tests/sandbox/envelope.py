"""The check that a sandbox answer is the service's error envelope (`assert_envelope`)."""

from __future__ import annotations

from typing import Any

import httpx2

__all__ = ["assert_envelope"]


def assert_envelope(response: httpx2.Response, status: int, code: str) -> dict[str, Any]:
    """The response is the error envelope with this status and code."""
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"code", "message", "requestId"}, body
    assert body["code"] == code, body
    assert body["requestId"] == response.headers["X-Request-Id"]
    assert "Traceback" not in response.text
    return dict(body)
