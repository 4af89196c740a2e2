"""Signing in to the dashboard: key pair, admin token, one-time link; the session's rules."""

from __future__ import annotations

import time
from dataclasses import replace

import httpx2
import pytest

from tests.sandbox.dashboard.pages import (
    ENGLISH,
    REFUSAL_DELAY,
    Merchant,
    form_token,
    new_merchant,
    sign_in,
)
from workbench.sandbox import SandboxServer
from workbench.sandbox.dashboard.sessions import COOKIE, SESSION_SECONDS, SessionCodec
from workbench.sandbox.dashboard.signin import issue_link
from workbench.testing import running_sandbox

#: Every page of the dashboard a merchant's session reads.
PAGES = [
    "/dashboard",
    "/dashboard/payments",
    "/dashboard/sessions",
    "/dashboard/refunds",
    "/dashboard/subscriptions",
    "/dashboard/payments/pay_x",
    "/dashboard/events",
    "/dashboard/events/evt_x",
    "/dashboard/clock",
    "/dashboard/settings",
    "/dashboard/merchants",
    "/dashboard/live",
]
#: Every form post of a session.
POSTS = [
    "/dashboard/sign-out",
    "/dashboard/merchants",
    "/dashboard/events/evt_x/resend",
    "/dashboard/clock/advance",
    "/dashboard/settings/reveal",
]


def _client(server: SandboxServer) -> httpx2.Client:
    return httpx2.Client(base_url=server.base_url, follow_redirects=False, headers=ENGLISH)


@pytest.mark.parametrize("path", PAGES)
def test_no_page_answers_without_a_session(dashboard_server: SandboxServer, path: str) -> None:
    with _client(dashboard_server) as http:
        answer = http.get(path)
    assert answer.status_code == 303
    assert answer.headers["location"].startswith("/dashboard/sign-in")
    assert "mrc_" not in answer.text


@pytest.mark.parametrize("path", POSTS)
def test_no_form_is_taken_without_a_session(dashboard_server: SandboxServer, path: str) -> None:
    with _client(dashboard_server) as http:
        answer = http.post(path, data={"csrf": "x", "step": "day"})
    assert answer.status_code == 303
    assert answer.headers["location"] == "/dashboard/sign-in"


def test_the_key_pair_signs_in_with_a_strict_http_only_cookie(
    dashboard_server: SandboxServer, merchant: Merchant
) -> None:
    with _client(dashboard_server) as http:
        answer = sign_in(http, merchant.api_key, merchant.secret_key, next="/dashboard/events")
        assert answer.status_code == 303
        assert answer.headers["location"] == "/dashboard/events"
        cookie = next(
            c for c in answer.headers.get_list("set-cookie") if c.startswith(f"{COOKIE}=")
        )
        attributes = {part.strip().lower() for part in cookie.split(";")}
        assert {"httponly", "samesite=strict", "path=/dashboard"} <= attributes
        assert "secure" not in attributes  # plain HTTP on loopback
        home = http.get("/dashboard")
    assert home.status_code == 200
    assert merchant.merchant_id in home.text


def test_sign_in_never_sends_the_browser_to_another_site(
    dashboard_server: SandboxServer, merchant: Merchant
) -> None:
    with _client(dashboard_server) as http:
        for target in ("https://evil.example/", "//evil.example/", "/dashboard//evil.example"):
            answer = sign_in(http, merchant.api_key, merchant.secret_key, next=target)
            assert answer.headers["location"] == "/dashboard"


@pytest.mark.parametrize("wrong", ["secret", "api_key", "blank_secret"])
def test_a_wrong_key_pair_is_refused_after_the_delay(
    dashboard_server: SandboxServer, merchant: Merchant, wrong: str
) -> None:
    api_key, secret = merchant.api_key, merchant.secret_key
    if wrong == "secret":
        secret = secret[:-1] + ("0" if secret[-1] != "0" else "1")
    elif wrong == "api_key":
        api_key = "pk_test_nobody"
    else:
        secret = ""  # a blank field is refused like a wrong one
    with _client(dashboard_server) as http:
        started = time.monotonic()
        answer = sign_in(http, api_key, secret)
        took = time.monotonic() - started
    assert answer.status_code == 401
    assert took >= REFUSAL_DELAY
    assert not any(c.startswith(f"{COOKIE}=") for c in answer.headers.get_list("set-cookie"))
    assert "No merchant has that API key and secret key." in answer.text
    assert merchant.secret_key not in answer.text


def test_another_merchants_secret_does_not_open_this_one(
    dashboard_server: SandboxServer, merchant: Merchant
) -> None:
    other = new_merchant(dashboard_server.base_url)
    with _client(dashboard_server) as http:
        assert sign_in(http, merchant.api_key, other.secret_key).status_code == 401


def test_the_sign_in_form_needs_its_own_token(
    dashboard_server: SandboxServer, merchant: Merchant
) -> None:
    with _client(dashboard_server) as http:
        http.get("/dashboard/sign-in")
        data = {"api_key": merchant.api_key, "secret_key": merchant.secret_key}
        assert http.post("/dashboard/sign-in", data=data).status_code == 403
        forged = http.post("/dashboard/sign-in", data={**data, "csrf": "forged"})
        assert forged.status_code == 403
    with _client(dashboard_server) as fresh:  # a token without its cookie
        token = form_token(httpx2.get(f"{dashboard_server.base_url}/dashboard/sign-in").text)
        assert fresh.post("/dashboard/sign-in", data={**data, "csrf": token}).status_code == 403


@pytest.mark.parametrize(
    "headers",
    [{"Sec-Fetch-Site": "cross-site"}, {"Origin": "https://evil.example"}, {"Origin": "null"}],
    ids=["fetch-site", "origin", "null-origin"],
)
def test_a_cross_site_post_is_refused_even_with_the_token(
    page: httpx2.Client, headers: dict[str, str]
) -> None:
    token = form_token(page.get("/dashboard/clock").text)
    answer = page.post(
        "/dashboard/clock/advance", data={"csrf": token, "step": "hour"}, headers=headers
    )
    assert answer.status_code == 403
    assert "Refused" in answer.text


def test_a_form_of_the_session_needs_the_sessions_token(page: httpx2.Client) -> None:
    answer = page.post("/dashboard/sign-out", data={"csrf": "not-the-token"})
    assert answer.status_code == 403
    assert page.get("/dashboard").status_code == 200  # still signed in


def test_sign_out_ends_the_session(page: httpx2.Client) -> None:
    token = form_token(page.get("/dashboard").text)
    answer = page.post("/dashboard/sign-out", data={"csrf": token})
    assert answer.status_code == 303
    assert answer.headers["location"] == "/dashboard/sign-in"
    assert page.get("/dashboard").status_code == 303


def _codec(server: SandboxServer, now: float) -> SessionCodec:
    key = server.sandbox.sealer.derive("dashboard sessions")
    return SessionCodec(key, now=lambda: now)


def test_an_expired_or_altered_session_goes_back_to_sign_in(
    dashboard_server: SandboxServer, page: httpx2.Client
) -> None:
    current = page.cookies[COOKIE]
    viewer = _codec(dashboard_server, time.time()).loads(current)
    assert viewer is not None
    old = replace(viewer, issued=int(time.time()) - SESSION_SECONDS - 1)
    expired = _codec(dashboard_server, time.time()).dumps(old)
    with _client(dashboard_server) as http:
        http.cookies.set(COOKIE, expired, path="/dashboard")
        answer = http.get("/dashboard/payments")
        assert answer.status_code == 303
        assert answer.headers["location"] == "/dashboard/sign-in?next=/dashboard/payments"
        _body, mac = current.split(".")
        other = replace(viewer, merchant_id="mrc_demo0001")
        forged_body = _codec(dashboard_server, time.time()).dumps(other).split(".")[0]
        http.cookies.set(COOKIE, f"{forged_body}.{mac}", path="/dashboard")
        assert http.get("/dashboard").status_code == 303


def test_the_banner_link_signs_the_demo_merchant_in_once(
    dashboard_server: SandboxServer,
) -> None:
    with dashboard_server.sandbox.db.write() as conn:
        token = issue_link(conn)
    with _client(dashboard_server) as first, _client(dashboard_server) as second:
        answer = first.get(f"/dashboard/sign-in/link?token={token}")
        assert answer.status_code == 303
        assert answer.headers["location"] == "/dashboard"
        assert "mrc_demo0001" in first.get("/dashboard").text
        again = second.get(f"/dashboard/sign-in/link?token={token}")
        assert again.status_code == 404
        assert COOKIE not in second.cookies
        assert second.get("/dashboard").status_code == 303


def test_a_guessed_link_signs_nobody_in(dashboard_server: SandboxServer) -> None:
    with _client(dashboard_server) as http:
        assert http.get("/dashboard/sign-in/link?token=guess").status_code == 404
        assert COOKIE not in http.cookies


def test_sign_in_attempts_are_limited_per_address() -> None:
    with running_sandbox(
        run_reconciler_in_background=False,
        public_rate_limit_per_second=0.01,
        public_rate_limit_burst=3,
    ) as server:
        server.app.state.dashboard.failed_sign_in_delay = 0.0
        merchant = new_merchant(server.base_url)
        with _client(server) as http:
            # A burst of 3 sign-ins, then the right secret too is refused until it refills.
            statuses = [sign_in(http, merchant.api_key, "sk_wrong").status_code for _ in range(3)]
            statuses += [sign_in(http, merchant.api_key, merchant.secret_key).status_code]
    assert statuses == [401, 401, 401, 429]


def test_the_admin_token_opens_every_merchant_on_a_team_host() -> None:
    token = "wbadm_dashboard-test-token"
    with running_sandbox(
        run_reconciler_in_background=False,
        listen_host="0.0.0.0",  # noqa: S104 - a team host, as `--host 0.0.0.0` makes one
        admin_token=token,
        public_rate_limit_per_second=0,
    ) as server:
        server.app.state.dashboard.failed_sign_in_delay = 0.0
        admin = {"Authorization": f"Bearer {token}"}
        made = httpx2.post(
            f"{server.base_url}/sandbox/merchants", json={"name": "team"}, headers=admin
        ).json()
        with _client(server) as http:
            page = http.get("/dashboard/sign-in")
            assert 'data-testid="admin-form"' in page.text
            wrong = http.post(
                "/dashboard/sign-in", data={"csrf": form_token(page.text), "admin_token": "no"}
            )
            assert wrong.status_code == 401
            answer = http.post(
                "/dashboard/sign-in", data={"csrf": form_token(wrong.text), "admin_token": token}
            )
            assert answer.headers["location"] == "/dashboard/merchants"
            assert http.get("/dashboard/payments").headers["location"] == "/dashboard/merchants"
            picker = http.get("/dashboard/merchants")
            assert made["merchantId"] in picker.text
            assert "mrc_demo0001" in picker.text
            picked = http.post(
                "/dashboard/merchants",
                data={"csrf": form_token(picker.text), "merchant_id": made["merchantId"]},
            )
            assert picked.status_code == 303
            home = http.get("/dashboard")
            assert home.status_code == 200
            assert made["merchantId"] in home.text
            # No one-time link on a team host.
            with server.sandbox.db.write() as conn:
                link = issue_link(conn)
            assert http.get(f"/dashboard/sign-in/link?token={link}").status_code == 404


def test_a_refused_sign_in_keeps_where_it_was_going(
    dashboard_server: SandboxServer, merchant: Merchant
) -> None:
    with _client(dashboard_server) as http:
        refused = sign_in(http, merchant.api_key, "sk_wrong", next="/dashboard/clock")
        assert 'name="next" value="/dashboard/clock"' in refused.text
        data = {
            "csrf": form_token(refused.text),
            "api_key": merchant.api_key,
            "secret_key": merchant.secret_key,
            "next": "/dashboard/clock",
        }
        answer = http.post("/dashboard/sign-in", data=data)
    assert answer.headers["location"] == "/dashboard/clock"
