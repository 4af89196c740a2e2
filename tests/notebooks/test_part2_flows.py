"""The subscription, buyer-portal and hosted-checkout flows against a live sandbox."""

from __future__ import annotations

import pytest

from workbench import flows
from workbench._client import Client


def test_lifecycle_renews_charges_now_and_cancels(client: Client) -> None:
    run = flows.subscriptions(client, amount=19_900, renewals=2)
    assert run.outcome["created_status"] == "active"
    assert run.outcome["charges"] == ["captured", "captured"]
    assert run.outcome["after_charge_now"] == "active"
    assert run.outcome["cancel_at_period_end"] is True
    assert run.outcome["cycle_number"] == 4
    assert run.outcome["final_status"] == "cancelled"
    assert "charging" in run.states()


def test_trial_comes_first(client: Client) -> None:
    run = flows.subscriptions(client, trial_days=14, interval_unit="week", renewals=1)
    assert run.outcome["created_status"] == "trialing"
    assert run.states()[:2] == ["trialing", "active"]


def test_failing_card_goes_past_due(client: Client) -> None:
    run = flows.subscriptions(client, card_token="tok_test_renewal_fails", renewals=1)
    assert run.outcome["after_renewals"] == "past_due"
    assert run.outcome["cycle_number"] == 0
    assert set(run.outcome["charges"]) == {"declined"}
    assert run.states()[:2] == ["active", "past_due"]


@pytest.mark.parametrize(("at_period_end", "status"), [(True, "active"), (False, "cancelled")])
def test_portal_as_the_buyer(client: Client, at_period_end: bool, status: str) -> None:
    run = flows.portal(client, at_period_end=at_period_end)
    assert run.outcome["status"] == status
    assert run.outcome["cancel_at_period_end"] is at_period_end
    assert run.outcome["update_session"] is True
    assert "merchantName" in run.outcome["public_fields"]
    assert "customerId" not in run.outcome["public_fields"]


@pytest.mark.parametrize("mode", ["payment", "qr"])
def test_checkout_completes_and_the_webhook_arrives(client: Client, mode: str) -> None:
    run = flows.checkout(client, mode=mode, amount=34_900)
    assert run.outcome["session_status"] == "active"
    assert run.outcome["page_status"] == 200
    assert run.outcome["redirect"] == {"outcome": "success"}
    assert run.outcome["status"] == "captured"
    assert run.outcome["session_event"] is True
    assert run.outcome["events"] == ["payment.captured", "session.completed"]
    assert run.outcome["again_status"] != 200


def test_checkout_decline_goes_back_with_the_code(client: Client) -> None:
    run = flows.checkout(client, card_token="tok_test_declined")
    assert run.outcome["redirect"] == {"outcome": "failed", "errorCode": "SVC-PAY-3001"}
    assert run.outcome["status"] == "declined"
    assert run.outcome["events"] == ["payment.declined", "session.completed"]


def test_show_page_is_text_when_headless(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("WORKBENCH_INTERACTIVE", raising=False)
    shown = flows.show_page("http://127.0.0.1:1/checkout/x")
    assert repr(shown) == "hosted page: http://127.0.0.1:1/checkout/x"
    monkeypatch.setenv("WORKBENCH_INTERACTIVE", "1")
    assert type(flows.show_page("http://127.0.0.1:1/checkout/x")).__name__ == "IFrame"


def test_checkout_records_the_qr_payload_and_the_events(client: Client) -> None:
    run = flows.checkout(client, mode="qr", amount=12_345)
    table = flows.qr_fields(run.outcome["qr_payload"])
    values = dict(zip(table["tag"], table["value"], strict=True))
    assert values["53"] == "949"
    assert values["54"] == "123.45"
    assert values["63"] == "matches: True"
    assert values["26.02"] == run.object_id
    assert run.outcome["events"] == ["payment.captured", "session.completed"]


def test_qr_fields_reads_a_payload_without_a_sandbox() -> None:
    from workbench.emvco import QrFields, build_payload

    payload = build_payload(QrFields("mrc_x", "Shop", "s-1", 100, "order-1"))
    table = flows.qr_fields(payload)
    assert list(table.columns) == ["tag", "meaning", "value"]
    assert "62.05" in set(table["tag"])
    broken = payload[:-1] + ("0" if payload[-1] != "0" else "1")
    assert flows.qr_fields(broken).iloc[-1]["value"] == "matches: False"


def test_the_buyer_lands_on_the_demo_return_page(client: Client) -> None:
    session = client.sessions.create(
        transaction_id=flows.new_transaction_id(), amount=5_000,
        return_url=flows.return_url(client),
    )  # fmt: skip
    number = flows.card_number_for(client.sandbox.fixtures(), "tok_test_success")
    landing = flows.pay_by_card(session.checkout_url, card_number=number)
    assert landing.status == 200
    assert landing.path == flows.DEMO_RETURN_PATH
    assert landing.query["outcome"] == "success"
    assert landing.query["sessionId"] == session.session_id
    assert landing.heading.startswith("Thank you")
    payment = client.payments.retrieve(landing.query["paymentId"])
    assert payment.status == "captured"
    assert f"paymentId={payment.id}" in repr(landing)


def test_demo_return_path_is_the_sandbox_page() -> None:
    from workbench.sandbox.merchant_return import RETURN_PATH

    assert flows.DEMO_RETURN_PATH == RETURN_PATH


def test_card_number_for_an_unknown_token_says_so(client: Client) -> None:
    with pytest.raises(ValueError, match="tok_nope"):
        flows.card_number_for(client.sandbox.fixtures(), "tok_nope")
