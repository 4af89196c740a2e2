"""``/docs`` over plain HTTP: the page loads the signing script, served as a file.

tests/browser/test_api_docs.py signs a charge with it in Chromium; these check what the
page and the script are, on each storage backend, without a browser.
"""

from __future__ import annotations

import re

import httpx2

from workbench.sandbox.apidocs.routes import DOCS_ASSETS, SIGNING_SCRIPT


def test_the_page_loads_the_signing_script_between_swagger_ui_and_its_start(
    anon: httpx2.Client,
) -> None:
    page = anon.get("/docs")
    assert page.status_code == 200
    scripts = re.findall(r"<script( src=\"[^\"]+\")?>", page.text)
    assert scripts == [
        f' src="{DOCS_ASSETS}/swagger-ui-bundle.js"',
        f' src="{SIGNING_SCRIPT}"',
        "",  # Swagger UI's start, the one inline script the policy hashes
    ]
    assert '"persistAuthorization": false' in page.text


def test_the_signing_script_is_a_file_under_the_pages_policy(anon: httpx2.Client) -> None:
    script = anon.get(SIGNING_SCRIPT)
    assert script.status_code == 200
    assert script.headers["content-type"].startswith("text/javascript")
    assert "script-src 'self'" in script.headers["content-security-policy"]
    assert "crypto.subtle.sign" in script.text
