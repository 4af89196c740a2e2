"""Swagger UI at /docs is served under a Content-Security-Policy that frames it in."""

from __future__ import annotations

import base64
import hashlib
import re

import httpx2
import pytest


def _directives(policy: str) -> dict[str, list[str]]:
    parts = (d.split() for d in policy.split(";") if d.strip())
    return {p[0]: p[1:] for p in parts}


@pytest.mark.parametrize("path", ["/docs", "/docs/oauth2-redirect"])
def test_docs_pages_send_a_policy_that_allows_only_their_own_inline_script(
    anon: httpx2.Client, path: str
) -> None:
    r = anon.get(path)
    assert r.status_code == 200
    policy = _directives(r.headers["content-security-policy"])
    assert policy["default-src"] == ["'none'"]
    assert "'unsafe-inline'" not in policy["script-src"]
    assert "'self'" in policy["frame-ancestors"]
    assert "*" not in policy["frame-ancestors"]
    inline = re.findall(r"<script>(.*?)</script>", r.text, re.DOTALL)
    assert inline, "Swagger UI's page starts itself with an inline script"
    for script in inline:
        digest = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
        assert f"'sha256-{digest}'" in policy["script-src"]
    assert r.headers["x-content-type-options"] == "nosniff"


def test_docs_assets_carry_the_policy_too(anon: httpx2.Client) -> None:
    r = anon.get("/docs/static/swagger-ui-bundle.js")
    assert r.status_code == 200
    assert "frame-ancestors" in r.headers["content-security-policy"]
