"""The hosted pages in a real browser: what the buyer sees, where they land, what is recorded.

Each test drives the system's Chromium through one flow, then checks the address the
browser lands at (``returnUrl`` with the outcome), the payment through the signed API,
and the webhooks the local receiver verified. Screenshots go to artifacts/screenshots/.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable
from typing import Any

import httpx2
import pytest

from tests.browser.buyer import APPROVED, CHALLENGE, fill_card, landed
from tests.browser.screenshots import Shots
from workbench import Client
from workbench.emvco import parse_tlv, verify_crc
from workbench.sandbox import DEMO_STORE_ID, SandboxServer
from workbench.spec import limits
from workbench.webhooks import WebhookEvent, WebhookListener

pytestmark = pytest.mark.browser


def _events(client: Client, hooks: WebhookListener, *types: str) -> list[WebhookEvent]:
    """Deliver what is due, then wait for one event of each type."""
    client.sandbox.tick()
    for type_ in types:
        hooks.wait_for(type_, timeout=10)
    return list(hooks.events)


def _land(page: Any) -> dict[str, str]:
    page.wait_for_url("**/orders/return?*")
    assert page.get_by_role("heading", name="Back at the merchant").is_visible()
    return landed(page.url)


def test_card_payment_without_challenge(
    new_session: Callable[..., Any], page: Any, client: Client, hooks: WebhookListener, shot: Shots
) -> None:
    session = new_session()
    page.goto(session.checkout_url)
    assert page.get_by_test_id("merchant").inner_text() != ""
    assert page.get_by_test_id("amount").inner_text() == "TRY 1,234.56"
    assert page.get_by_test_id("description").inner_text() == "Kitap siparişi #42"
    assert page.get_by_label("Installments").count() == 0
    assert page.get_by_label("Save this card for my next purchases").count() == 0
    # Readable at phone width: nothing wider than the screen.
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    shot(page, "card-form")
    fill_card(page)
    # Keyboard only: Enter in the last field submits the form.
    page.get_by_label("Name on the card").press("Enter")
    query = _land(page)
    shot(page, "returned")
    assert query["outcome"] == "success"
    assert query["order"] == "42"
    assert query["sessionId"] == session.session_id
    payment = client.payments.retrieve(query["paymentId"])
    assert payment.status == "captured"
    assert payment.amount == 123_456
    assert payment.installment_count == 1
    assert payment.card_mask is not None
    assert payment.card_mask.endswith("4242")
    events = _events(client, hooks, "payment.captured", "session.completed")
    mine = [e for e in events if e.data.get("paymentId") == payment.id]
    assert {e.type for e in mine} == {"payment.captured", "session.completed"}
    assert all("4242424242424242" not in e.raw.decode() for e in events)
    # The session is done: its page says so, clearly, as HTML.
    again = page.goto(session.checkout_url)
    assert again is not None
    assert again.status == 410
    assert page.get_by_role("heading", name="This checkout is already completed").is_visible()
    assert page.get_by_role("link", name="Back to the merchant").is_visible()
    shot(page, "completed")


def _pay_into_challenge(page: Any, session: Any) -> None:
    """Pay ``session``'s page with the challenge card and land on the ACS page."""
    page.goto(session.checkout_url)
    fill_card(page, CHALLENGE)
    page.get_by_role("button", name="Pay TRY 1,234.56").click()
    page.wait_for_url("**/sandbox/acs/**")


def test_3ds_challenge_passed(
    new_session: Callable[..., Any], page: Any, client: Client, hooks: WebhookListener, shot: Shots
) -> None:
    _pay_into_challenge(page, new_session())
    assert page.get_by_role("heading", name="Confirm this payment").is_visible()
    assert page.get_by_test_id("amount").inner_text() == "TRY 1,234.56"
    shot(page, "acs")
    page.get_by_label("One-time code sent to your phone").fill("123456")
    page.get_by_role("button", name="Confirm").click()
    query = _land(page)
    shot(page, "returned")
    assert query["outcome"] == "success"
    assert "errorCode" not in query
    payment = client.payments.retrieve(query["paymentId"])
    assert payment.status == "captured"
    assert payment.three_d_secure is True
    events = _events(client, hooks, "payment.3ds_pending", "payment.captured", "session.completed")
    assert [e.type for e in events if e.data.get("paymentId") == payment.id] == [
        "payment.3ds_pending",
        "payment.captured",
        "session.completed",
    ]


def test_3ds_challenge_failed(
    new_session: Callable[..., Any], page: Any, client: Client, hooks: WebhookListener, shot: Shots
) -> None:
    _pay_into_challenge(page, new_session())
    page.get_by_label("One-time code sent to your phone").fill("000000")
    shot(page, "acs-wrong-code")
    page.get_by_label("One-time code sent to your phone").press("Enter")
    query = _land(page)
    shot(page, "returned")
    assert query["outcome"] == "failed"
    assert query["errorCode"] == "SVC-PAY-3003"
    payment = client.payments.retrieve(query["paymentId"])
    assert payment.status == "failed"
    events = _events(client, hooks, "payment.failed", "session.completed")
    assert "payment.captured" not in {e.type for e in events}


def test_installments(
    new_session: Callable[..., Any], page: Any, client: Client, hooks: WebhookListener, shot: Shots
) -> None:
    session = new_session(installment_enabled=True, amount=125_050)
    page.goto(session.checkout_url)
    picker = page.get_by_label("Installments")
    plan = page.locator("#installments-plan")
    assert picker.locator("option").count() == limits.INSTALLMENTS_MAX
    assert plan.inner_text() == "One payment of TRY 1,250.50."
    picker.select_option("3")
    assert picker.locator("option:checked").inner_text() == (
        "3 installments: TRY 416.84 + 2 × TRY 416.83 (total TRY 1,250.50)"
    )
    # The select cuts its text at phone width; the plan under it wraps and is read out.
    assert plan.inner_text() == (
        "The first installment is TRY 416.84 (it carries the remaining kuruş), "
        "then 2 of TRY 416.83: TRY 1,250.50 in all."
    )
    assert picker.get_attribute("aria-describedby") == "installments-plan"
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    fill_card(page)
    shot(page, "installments")
    page.get_by_role("button", name="Pay TRY 1,250.50").click()
    query = _land(page)
    assert query["outcome"] == "success"
    payment = client.payments.retrieve(query["paymentId"])
    assert payment.status == "captured"
    assert payment.installment_count == 3
    _events(client, hooks, "payment.captured")

    # Re-checked on the server: a session without the picker refuses a forged count.
    plain = new_session()
    form = {"cardNumber": APPROVED, "expiry": "12/30", "cvc": "123", "holder": "A B",
            "installments": "3"}  # fmt: skip
    refused = page.request.post(f"{plain.checkout_url}/pay?lang=en", form=form, max_redirects=0)
    assert refused.status == 400
    assert "cannot be split into installments" in refused.text()
    assert APPROVED.replace(" ", "") not in refused.text()
    page.goto(plain.checkout_url)
    assert page.get_by_label("Card number").is_visible()  # still payable


def test_qr_payment(
    new_session: Callable[..., Any], page: Any, client: Client, hooks: WebhookListener, shot: Shots
) -> None:
    session = new_session(mode="qr", amount=34_900)
    page.goto(session.checkout_url)
    assert page.get_by_test_id("amount").inner_text() == "TRY 349.00"
    figure = page.get_by_role("img", name="TR QR code for TRY 349.00", exact=False)
    assert figure.locator("svg").is_visible()
    payload = page.get_by_test_id("qr-payload").text_content() or ""
    fields = parse_tlv(payload)
    assert fields["53"] == "949"
    assert fields["54"] == "349.00"
    assert session.session_id in parse_tlv(fields["26"]).values()
    assert verify_crc(payload)
    assert page.get_by_label("Card number").count() == 0
    # The image the browser drew decodes to the same payload.
    assert _decode_qr(page, '[data-testid="qr"] svg') == payload
    shot(page, "qr")
    page.get_by_role("button", name="Pay from a bank app").click()
    query = _land(page)
    assert query["outcome"] == "success"
    payment = client.payments.retrieve(query["paymentId"])
    assert payment.status == "captured"
    assert payment.amount == 34_900
    assert payment.card_brand == "tr_qr"
    events = _events(client, hooks, "payment.captured")
    captured = [e for e in events if e.type == "payment.captured"]
    assert captured[0].data["method"] == "tr_qr"


_PIXELS = """async (selector) => {
  const svg = document.querySelector(selector);
  const image = new Image();
  image.src = "data:image/svg+xml;base64," + btoa(new XMLSerializer().serializeToString(svg));
  await image.decode();
  const canvas = document.createElement("canvas");
  canvas.width = image.width;
  canvas.height = image.height;
  const context = canvas.getContext("2d");
  context.fillStyle = "#fff";
  context.fillRect(0, 0, canvas.width, canvas.height);
  context.drawImage(image, 0, 0);
  const rgba = context.getImageData(0, 0, canvas.width, canvas.height).data;
  const grey = [];
  for (let i = 0; i < rgba.length; i += 4) grey.push(rgba[i]);
  return {width: canvas.width, height: canvas.height, grey: grey};
}"""


def _decode_qr(page: Any, selector: str) -> str:
    """Draw the page's QR SVG on a canvas in the browser and decode the pixels (zxing-cpp)."""
    zxingcpp = pytest.importorskip("zxingcpp", reason="zxing-cpp (a dev dependency) is missing")
    numpy = pytest.importorskip("numpy")
    drawn = page.evaluate(_PIXELS, selector)
    pixels = numpy.array(drawn["grey"], dtype=numpy.uint8).reshape(drawn["height"], drawn["width"])
    # QR codes only: read as any format, about one payload in 750 also yields a Codabar
    # found in the QR's modules, a second "barcode" the page does not show.
    found = zxingcpp.read_barcodes(pixels, formats=zxingcpp.BarcodeFormat.QRCode)
    assert len(found) == 1
    return str(found[0].text)


def test_card_update_from_the_buyer_portal(
    page: Any, client: Client, server: SandboxServer, shot: Shots
) -> None:
    secret = client.sandbox.fixtures().webhook_secret or ""
    subscription = client.subscriptions.create(
        store_id=DEMO_STORE_ID, customer_id="cus_demo_ayse", amount_minor=19_900,
        interval_count=1, interval_unit="month",
    )  # fmt: skip
    assert subscription.card_last4 == "4242"
    assert subscription.public_hash is not None
    update = client.portal.update_card_session(subscription.public_hash)
    with WebhookListener(secret) as store_hooks:
        client.sandbox.set_webhook(store_hooks.url)
        try:
            page.goto(update.checkout_url)
            assert page.get_by_role("heading", name="Update your card").is_visible()
            assert page.get_by_test_id("amount").count() == 0
            assert page.get_by_label("Installments").count() == 0
            shot(page, "card-update")
            fill_card(page, "5200 8282 8282 8210")
            page.get_by_role("button", name="Save the new card").click()
            page.wait_for_url(f"**/v1/public/subscriptions/{subscription.public_hash}?*")
            query = landed(page.url)
            shot(page, "returned")
            assert query == {"outcome": "success", "sessionId": update.session_id}
            assert '"cardLast4":"8210"' in (page.text_content("body") or "").replace(" ", "")
            after = client.subscriptions.retrieve(subscription.id)
            assert after.card_last4 == "8210"
            assert after.card_brand == "mastercard"
            _events(client, store_hooks, "subscription.card_updated", "session.completed")
            assert "payment.captured" not in {e.type for e in store_hooks.events}
        finally:
            client.sandbox.set_webhook(None)


def test_expired_session(
    new_session: Callable[..., Any], page: Any, client: Client, hooks: WebhookListener, shot: Shots
) -> None:
    session = new_session()
    client.sandbox.advance_clock(limits.SESSION_LIFETIME_SECONDS + 1)
    response = page.goto(session.checkout_url)
    assert response is not None
    assert response.status == 410
    assert page.get_by_role("heading", name="This checkout has expired").is_visible()
    assert "nothing was charged" in (page.text_content("main") or "")
    assert page.get_by_label("Card number").count() == 0
    assert "Traceback" not in page.content()
    shot(page, "expired")
    late = page.request.post(
        f"{session.checkout_url}/pay",
        form={"cardNumber": APPROVED, "expiry": "12/30", "cvc": "123", "holder": "A B"},
        max_redirects=0,
    )
    assert late.status == 410
    assert late.headers["content-type"].startswith("text/html")
    events = _events(client, hooks, "session.expired")
    assert [e.type for e in events] == ["session.expired"]
    missing = page.goto(session.checkout_url.rsplit("/", 1)[0] + f"/{uuid.uuid4()}")
    assert missing is not None
    assert missing.status == 404
    assert page.get_by_role("heading", name="Checkout not found").is_visible()


def test_double_submit_charges_once(
    new_session: Callable[..., Any],
    page: Any,
    client: Client,
    hooks: WebhookListener,
    shot: Shots,
    server: SandboxServer,
) -> None:
    # In the browser: a double click on Pay.
    session = new_session()
    page.goto(session.checkout_url)
    fill_card(page)
    page.get_by_role("button", name="Pay TRY 1,234.56").dblclick()
    query = _land(page)
    assert query["outcome"] == "success"
    shot(page, "returned")

    # Outside it: the same form posted by two buyers' tabs at once, then once more.
    other = new_session()
    form = {"cardNumber": APPROVED, "expiry": "12/30", "cvc": "123", "holder": "A B"}
    answers: list[httpx2.Response] = []
    barrier = threading.Barrier(4)

    def submit() -> None:
        barrier.wait()
        answers.append(httpx2.post(f"{other.checkout_url}/pay", data=form, timeout=30))

    threads = [threading.Thread(target=submit) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    answers.append(httpx2.post(f"{other.checkout_url}/pay", data=form, timeout=30))
    assert {a.status_code for a in answers} == {303}
    assert len({a.headers["location"] for a in answers}) == 1
    paid = landed(answers[0].headers["location"])
    assert client.payments.retrieve(paid["paymentId"]).status == "captured"

    events = _events(client, hooks, "payment.captured")
    client.sandbox.tick()
    for sess in (session, other):
        mine = [e for e in hooks.events if e.data.get("sessionId") == sess.session_id]
        assert [e.type for e in mine] == ["session.completed"]
    captured = [e.data["transactionId"] for e in events if e.type == "payment.captured"]
    assert sorted(captured) == sorted({*captured})
    assert len(captured) == 2
