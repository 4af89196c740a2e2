"""``returnUrl`` is read as a browser reads it, when accepted and when the buyer is sent back.

``http://shop.example\\@evil.example/back`` was accepted as ``shop.example`` and then
sent as ``http://shop.example%5C@evil.example/back``, host ``evil.example`` to a browser.
A backslash and user info are refused now; what is accepted is sent back as the WHATWG
parser reads it, its query as written (``?@shop.example/`` was rewritten as
``?%40shop.example%2F=``) and its fragment kept. Generated URLs check that the address
sent is read with the same host by the WHATWG parser and by Python's ``urlsplit``, with
the query and fragment kept.
"""

from __future__ import annotations

import uuid
from urllib.parse import urlsplit

import httpx2
import pytest
from ada_url import URL
from hypothesis import given
from hypothesis import strategies as st
from pydantic import TypeAdapter, ValidationError

from tests.sandbox.envelope import assert_envelope
from workbench.sandbox.bodies import ReturnUrl
from workbench.sandbox.checkout.flow import result_url

CARD = {"cardNumber": "4242424242424242", "expiry": "12/30", "cvc": "123", "holder": "Ayse"}
_RETURN_URL: TypeAdapter[str] = TypeAdapter(ReturnUrl)


@pytest.mark.parametrize(
    "url",
    [
        "http://shop.example\\@evil.example/back",
        "https://shop.example\\evil.example/",
        "https://shop.example/back\\..\\x",
        "http://user:pass@shop.example/back",
        "http://shop.example@evil.example/back",
        "http://@shop.example/back",
        "http:///u@shop.example/",
    ],
)
def test_a_backslash_or_user_info_is_refused(url: str) -> None:
    with pytest.raises(ValidationError):
        _RETURN_URL.validate_python(url)


@pytest.mark.parametrize(
    ("url", "sent"),
    [
        (
            "https://shop.example/back?@shop.example/#frag",
            "https://shop.example/back?@shop.example/&outcome=success&sessionId=s1#frag",
        ),
        ("https://shop.example/back", "https://shop.example/back?outcome=success&sessionId=s1"),
        (
            "https://shop.example/a@b?x=1&",
            "https://shop.example/a@b?x=1&outcome=success&sessionId=s1",
        ),
        (
            "https://çiçek.example/sipariş?no=ş#ü",
            "https://xn--iek-1lab.example/sipari%C5%9F?no=%C5%9F&outcome=success&sessionId=s1#%C3%BC",
        ),
    ],
)
def test_the_redirect_keeps_the_query_and_the_fragment(url: str, sent: str) -> None:
    assert _RETURN_URL.validate_python(url) == url
    assert result_url(url, outcome="success", sessionId="s1", paymentId=None) == sent


_HOSTS = st.sampled_from(
    ["shop.example", "çiçek.example", "127.0.0.1", "[::1]", "xn--iek-1lab.example"]
)
# Every printable ASCII character but the backslash and space, and a few Turkish letters.
_TEXT = st.text(
    st.sampled_from([chr(c) for c in range(0x21, 0x7F) if chr(c) != "\\"] + list("çşığüö")),
    max_size=20,
)


@given(
    scheme=st.sampled_from(["http", "https"]),
    host=_HOSTS,
    port=st.none() | st.integers(1, 65535),
    rest=_TEXT,
)
def test_the_address_sent_back_has_the_host_the_url_was_accepted_for(
    scheme: str, host: str, port: int | None, rest: str
) -> None:
    url = f"{scheme}://{host}{'' if port is None else f':{port}'}{rest}"
    try:
        _RETURN_URL.validate_python(url)
    except ValidationError:
        return
    accepted = URL(url)
    sent = result_url(url, outcome="success")
    assert sent.isascii()
    read = URL(sent)
    assert (read.protocol, read.hostname, read.port) == (
        accepted.protocol,
        accepted.hostname,
        accepted.port,
    )
    assert read.username == read.password == ""
    # Python's reading agrees with the browser's on where the buyer goes.
    split = urlsplit(sent)
    assert split.hostname == read.hostname.strip("[]").lower()
    assert split.username is None
    # The query as written, then the outcome; the fragment as written.
    assert read.search.startswith(accepted.search)
    assert read.search.endswith("outcome=success")
    assert read.hash == accepted.hash


def test_a_session_refuses_a_backslash_and_sends_back_query_and_fragment(
    client: httpx2.Client, anon: httpx2.Client
) -> None:
    body = {"transactionId": uuid.uuid4().hex, "amount": 10_000, "currency": "TRY"}
    refused = client.post(
        "/v1/payments/sessions",
        json={**body, "returnUrl": "http://shop.example\\@evil.example/back"},
    )
    assert assert_envelope(refused, 400, "SVC-VAL-4001")["message"].startswith("returnUrl")
    made = client.post(
        "/v1/payments/sessions",
        json={**body, "returnUrl": "https://shop.example/back?@shop.example/#frag"},
    )
    assert made.status_code == 201, made.text
    session = made.json()
    paid = anon.post(f"{session['checkoutUrl']}/pay", data=CARD, follow_redirects=False)
    assert paid.status_code == 303, paid.text
    location = paid.headers["location"]
    assert location.startswith("https://shop.example/back?@shop.example/&outcome=success&")
    assert location.endswith(f"&sessionId={session['sessionId']}#frag")
    assert URL(location).hostname == "shop.example"
