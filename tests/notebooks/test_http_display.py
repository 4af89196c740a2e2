"""What the notebooks show of each call: request and response, folded, with nothing secret."""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.paths import ROOT
from workbench import flows
from workbench._client import Client
from workbench.config import DEFAULT_API_KEY, DEFAULT_SECRET_KEY, Environment
from workbench.notebook.widgets import flow_form

NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
SERVICE_CALL = re.compile(r"\bclient\.(payments|sessions|subscriptions|portal)\.\w+\(")
FULL_SIGNATURE = re.compile(r"X-Signature: [0-9a-f]{9,}")
CUT_SIGNATURE = re.compile(r"X-Signature: [0-9a-f]{8}…")


@pytest.fixture
def shell() -> Iterator[Any]:
    """An IPython shell of this process, as a notebook's kernel runs one (cleared after)."""
    from IPython.core.interactiveshell import InteractiveShell

    instance = InteractiveShell.instance()
    try:
        yield instance
    finally:
        InteractiveShell.clear_instance()


def _html(outputs: list[Any]) -> str:
    return "".join(o.data.get("text/html", "") for o in outputs)


def test_a_charge_shows_its_request_and_response_with_the_signature_cut(client: Client) -> None:
    run = flows.FlowRun("shown", {})
    with run.recording(client):
        charge = client.payments.charge_card(
            transaction_id=flows.new_transaction_id(), amount=12_500, card_token="tok_test_success"
        )
    signature = charge.response.http_response.request.headers["X-Signature"]
    html = run.exchanges()._repr_html_()
    assert html.startswith('<details class="wb-http"><summary>POST /v1/payments/card')
    assert "→ 201 Created</summary>" in html
    for shown in ("X-Api-Key: ", "X-Timestamp: ", "Content-Type: application/json",
                  f"Idempotency-Key: {charge.idempotency_key}", '"cardToken": "tok_test_success"',
                  "HTTP 201 Created", f"X-Request-Id: {charge.request_id}",
                  f'"paymentId": "{charge.payment_id}"'):  # fmt: skip
        assert shown in html
    assert f"X-Signature: {signature[:8]}…" in html
    assert signature not in html
    assert repr(run.exchanges()) == "POST /v1/payments/card → 201 Created"


def test_each_call_links_to_its_page_in_the_local_sandboxs_dashboard(
    client: Client, sandbox_url: str
) -> None:
    run = flows.FlowRun("linked", {})
    with run.recording(client):
        charge = client.payments.charge_card(
            transaction_id=flows.new_transaction_id(), amount=12_500, card_token="tok_test_success"
        )
    page = f"{sandbox_url}/dashboard/requests/{charge.request_id}"
    assert run.calls[0].dashboard_url == page
    assert f'<a href="{page}" target="_blank" rel="noopener">' in run.exchanges()._repr_html_()
    assert run.exchanges().text().endswith(f"Dashboard: {page}")
    # Elsewhere than the local sandbox (the provider's test environment): no dashboard.
    settings = dataclasses.replace(client._settings, environment=Environment.SANDBOX)
    with Client(settings=settings) as remote:
        elsewhere = flows.FlowRun("elsewhere", {})
        with elsewhere.recording(remote):
            remote.payments.retrieve(charge.payment_id)
    assert elsewhere.calls[0].dashboard_url is None
    # The notebooks' call log (what is folded under each cell) links the same way.
    calls = flows.CallLog(client, under_cells=False)
    try:
        again = client.payments.retrieve(charge.payment_id)
    finally:
        calls.close()
    shown = calls.since()._repr_html_()
    assert f'href="{sandbox_url}/dashboard/requests/{again.request_id}"' in shown
    assert "dashboard" not in elsewhere.exchanges()._repr_html_()


def test_the_portal_bearer_is_cut_in_the_path_and_the_body(client: Client) -> None:
    fixtures = client.sandbox.fixtures()
    sub = client.subscriptions.create(
        store_id=fixtures.store_id, customer_id="cus_demo_ayse", amount_minor=9_900,
        interval_count=1, interval_unit="month", card_token="tok_test_success",
    )  # fmt: skip
    run = flows.FlowRun("portal", {})
    with run.recording(client):
        client.portal.retrieve(sub.public_hash)
    text = run.exchanges()._repr_html_() + run.exchanges().text()
    assert sub.public_hash not in text
    assert f"/v1/public/subscriptions/{sub.public_hash[:4]}…" in text
    assert "X-Signature" not in text  # the public routes are not signed


def test_each_cell_shows_the_calls_it_made_folded_under_it(client: Client, shell: Any) -> None:
    from IPython.utils.capture import capture_output

    shell.user_ns.update(client=client, flows=flows)
    shell.run_cell("calls = flows.CallLog(client)")
    with capture_output() as first:
        shell.run_cell(
            "charge = client.payments.charge_card(transaction_id=flows.new_transaction_id(),"
            " amount=2_000, card_token='tok_test_success', capture=False)\n"
            "client.sandbox.tick()"
        )
    with capture_output() as second:
        shell.run_cell("client.payments.capture(charge.payment_id); None")
    with capture_output() as quiet:
        shell.run_cell("x = 1")
    shell.run_cell("calls = flows.CallLog(client)")  # the first cell run again
    with capture_output() as again:
        shell.run_cell("client.payments.retrieve(charge.payment_id); None")
    shell.run_cell("calls.close()")
    with capture_output() as closed:
        shell.run_cell("client.payments.retrieve(charge.payment_id); None")

    first_html = _html(first.outputs)
    assert first_html.count("<details") == 1, "one call, the control call left out"
    assert "POST /v1/payments/card → 201 Created" in first_html
    assert "/sandbox/" not in first_html
    second_html = _html(second.outputs)
    assert second_html.count("<details") == 1
    assert "/capture → 200 OK" in second_html
    assert quiet.outputs == []
    assert _html(again.outputs).count("<details") == 1, "shown once, not once per CallLog"
    assert closed.outputs == []


def test_many_calls_fold_once_more_under_their_count(client: Client) -> None:
    run = flows.FlowRun("many", {})
    with run.recording(client):
        charge = client.payments.charge_card(
            transaction_id=flows.new_transaction_id(), amount=1_000, card_token="tok_test_success"
        )
        for _ in range(3):
            client.payments.retrieve(charge.payment_id)
    html = run.exchanges()._repr_html_()
    assert html.startswith('<details class="wb-http"><summary>4 requests and their responses')
    assert html.count("<details") == 5


def test_the_form_shows_every_exchange_it_made(client: Client, shell: Any) -> None:
    from IPython.utils.capture import capture_output

    form = flow_form("preauth", client)
    with capture_output() as shown:  # what the form's output area receives in a kernel
        form.button.click()
    assert form.last is not None
    html = _html(shown.outputs)
    assert html.count('<details class="wb-http"><summary>') >= len(form.last.calls) == 4
    for call in form.last.calls:
        assert f"{call.method} {call.path} → {call.status}" in html


def test_the_checkout_summary_ends_in_the_state_the_webhook_told(client: Client) -> None:
    run = flows.checkout(client)
    assert "states: active → completed" in run.summary()
    assert str(run.state_path()).endswith("--webhook--> completed")


def _stored(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_every_cell_that_calls_the_service_shows_its_exchanges(path: Path) -> None:
    missing = []
    for cell in _stored(path)["cells"]:
        source = "".join(cell["source"])
        if cell["cell_type"] != "code" or not SERVICE_CALL.search(source):
            continue
        html = "".join(
            "".join(o.get("data", {}).get("text/html", "")) for o in cell.get("outputs", [])
        )
        if '<details class="wb-http">' not in html:
            missing.append(source.splitlines()[0])
    assert missing == []


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_stored_exchanges_hold_no_signature_or_bearer_whole(path: Path) -> None:
    text = json.dumps(_stored(path), ensure_ascii=False)
    assert not FULL_SIGNATURE.search(text)
    for value in re.findall(r'\\"publicHash\\": \\"([^\\"]*)\\"', text):
        assert re.fullmatch(r".{4}…", value), value
    if "X-Signature" in text:
        assert CUT_SIGNATURE.search(text)


def test_a_call_made_with_plain_httpx_is_shown_with_the_others(client: Client) -> None:
    import httpx2

    from workbench.signing import format_timestamp, sign_request

    calls = flows.CallLog(client, under_cells=False)
    try:
        body = b'{"transactionId":"order-x","amount":100,"cardToken":"tok_test_success"}'
        headers = sign_request(
            api_key=DEFAULT_API_KEY, secret_key=DEFAULT_SECRET_KEY, method="POST",
            url="/v1/payments/card", body=body + b" ", timestamp=format_timestamp(),
        ).as_dict()  # fmt: skip
        answer = httpx2.post(
            client.base_url + "/v1/payments/card",
            content=body,
            headers={**headers, "Content-Type": "application/json"},
        )
        calls.record(answer)
        charge = client.payments.charge_card(
            transaction_id=flows.new_transaction_id(), amount=1_000, card_token="tok_test_success"
        )
    finally:
        calls.close()
    html = calls.since(0)._repr_html_()
    assert "POST /v1/payments/card → 401 Unauthorized SVC-GW-1002" in html
    assert headers["X-Signature"] not in html
    assert f"X-Signature: {headers['X-Signature'][:8]}…" in html
    table = calls.table()
    assert list(table["error"]) == ["SVC-GW-1002", ""]
    assert list(table["state"]) == ["", "(new) → captured"], "the states stay on their steps"
    assert list(calls.table(charge.payment_id)["step"]) == [2]
