"""The guide lists every POST route with whether it honours the key.

The list is generated from the sandbox's own OpenAPI document (a route honours the key
when it declares the ``Idempotency-Key`` header), so it cannot drift from the code.
"""

from __future__ import annotations

from tests.paths import ROOT
from tools import docgen

PAGE = ROOT / "docs/_generated/idempotency-routes.md"
REGENERATE = "regenerate with `make docs-gen` and commit the result"


def _rendered() -> str:
    return docgen.idempotency_routes(docgen.openapi_document())


def test_committed_route_list_is_up_to_date() -> None:
    assert PAGE.read_text(encoding="utf-8") == _rendered(), REGENERATE


def test_route_list_has_every_post_route_once() -> None:
    schema = docgen.openapi_document()
    posts = sorted(path for path, item in schema["paths"].items() if "post" in item)
    rows = [line for line in _rendered().splitlines() if line.startswith("| `/")]
    assert [row.split("`")[1] for row in rows] == posts


def test_public_routes_are_keyed_on_the_hash() -> None:
    rows = {
        line.split("`")[1]: line for line in _rendered().splitlines() if line.startswith("| `/")
    }
    for tail in ("cancel", "update-card-session"):
        row = rows[f"/v1/public/subscriptions/{{hash}}/{tail}"]
        assert "| yes | public hash, endpoint, key |" in row


def test_the_idempotency_page_includes_the_list() -> None:
    page = (ROOT / "docs/concepts/idempotency.md").read_text(encoding="utf-8")
    assert '--8<-- "idempotency-routes.md"' in page
