"""Driving the dashboard over HTTP as a browser would: forms, their tokens, a session.

Shared by the dashboard's tests (its conftest builds the fixtures on them).
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx2

__all__ = ["REFUSAL_DELAY", "Merchant", "form_token", "new_merchant", "sign_in", "signed_in_client"]

#: The tests read the pages in English (the pages' default is Turkish).
ENGLISH = {"Accept-Language": "en"}
#: Seconds a refused sign-in waits in the dashboard tests' sandboxes (1 s by default).
REFUSAL_DELAY = 0.2

_CSRF = re.compile(r'name="csrf" value="([^"]+)"')


@dataclass(frozen=True)
class Merchant:
    """A merchant made for one test (`POST /sandbox/merchants`)."""

    merchant_id: str
    store_id: str
    api_key: str
    secret_key: str = field(repr=False)
    webhook_secret: str = field(repr=False)
    customers: tuple[str, ...] = ()


def new_merchant(base_url: str, name: str = "dashboard test") -> Merchant:
    """Make a merchant of the test's own."""
    made = httpx2.post(f"{base_url}/sandbox/merchants", json={"name": name}).json()
    return Merchant(
        made["merchantId"],
        made["storeId"],
        made["apiKey"],
        made["secretKey"],
        made["webhookSecret"],
        tuple(made["customers"]),
    )


def form_token(html: str) -> str:
    """The CSRF token of the (first) form of a page."""
    found = _CSRF.search(html)
    assert found is not None, "the page has no form token"
    return found.group(1)


def sign_in(http: httpx2.Client, api_key: str, secret_key: str, **extra: Any) -> httpx2.Response:
    """Post the sign-in form as its page gives it; the answer (not followed)."""
    page = http.get("/dashboard/sign-in")
    data = {"csrf": form_token(page.text), "api_key": api_key, "secret_key": secret_key}
    return http.post("/dashboard/sign-in", data={**data, **extra})


@contextlib.contextmanager
def signed_in_client(base_url: str, merchant: Merchant) -> Iterator[httpx2.Client]:
    """A client with the merchant's dashboard session, reading English pages."""
    with httpx2.Client(base_url=base_url, follow_redirects=False, headers=ENGLISH) as http:
        answer = sign_in(http, merchant.api_key, merchant.secret_key)
        assert answer.status_code == 303, answer.text
        yield http
