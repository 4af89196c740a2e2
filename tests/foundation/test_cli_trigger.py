"""``workbench trigger EVENT`` over real HTTP: each event name makes exactly that event.

One sandbox (its reconciler off, so the test decides when deliveries happen) and one
verifying webhook receiver for the module; before each trigger the merchant's data is
reset, so the sandbox's event list holds only what the trigger made.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from workbench._client import Client
from workbench.cli import main
from workbench.config import DEFAULT_API_KEY, DEFAULT_SECRET_KEY
from workbench.triggers import TRIGGERS
from workbench.webhooks import WebhookListener

ROOT = Path(__file__).resolve().parents[2]
#: Reconciler passes a test runs at most to see the event delivered (one event of an
#: object goes out per pass): a guard against a hang, not a measured figure.
MAX_PASSES = 20
_STARRED = re.compile(r"^\* (evt_\w+)\s+(\S+)\s+(\S+)\s+(\S+)$", re.MULTILINE)


@pytest.fixture(scope="module")
def listener(sandbox_url: str) -> Iterator[WebhookListener]:
    with Client(DEFAULT_API_KEY, DEFAULT_SECRET_KEY, sandbox_url) as client:
        secret = client.sandbox.fixtures().webhook_secret
    assert secret
    with WebhookListener(secret) as hooks:
        yield hooks


@pytest.fixture
def client(sandbox_url: str, listener: WebhookListener) -> Iterator[Client]:
    with Client(DEFAULT_API_KEY, DEFAULT_SECRET_KEY, sandbox_url) as c:
        c.sandbox.reset()
        c.sandbox.set_webhook(listener.url)
        listener.clear()
        yield c


def _invoke(sandbox_url: str, *args: str, environment: str | None = None) -> tuple[int, str]:
    env = {
        "WORKBENCH_BASE_URL": sandbox_url,
        "WORKBENCH_API_KEY": DEFAULT_API_KEY,
        "WORKBENCH_SECRET_KEY": DEFAULT_SECRET_KEY,
        "WORKBENCH_ENVIRONMENT": environment,
    }
    result = CliRunner().invoke(main, ["trigger", *args], env=env, terminal_width=200)
    return result.exit_code, result.output


@pytest.mark.parametrize("event", sorted(TRIGGERS))
def test_each_event_name_makes_exactly_that_event(
    event: str, client: Client, sandbox_url: str, listener: WebhookListener
) -> None:
    code, output = _invoke(sandbox_url, event)
    assert code == 0, output
    assert output.startswith(f"Triggering {event} on {sandbox_url}"), output
    starred = _STARRED.findall(output)
    assert len(starred) == 1, output
    [(event_id, shown_type, _object, _state)] = starred
    assert shown_type == event
    # ... with the dashboard's page of the event (and of its object, when it has one).
    assert f"  {sandbox_url}/dashboard/events/{event_id}\n" in output
    if _object != "-":
        assert "/dashboard/" in output.split(event_id, 1)[1]
    # The sandbox's own list: exactly one event of that type since the reset, the starred one.
    recorded = client.sandbox.events(type=event).items
    assert [e.id for e in recorded] == [event_id]
    # ... and it reaches the store's webhook, signed with the store's secret.
    for _ in range(MAX_PASSES):
        if client.sandbox.deliveries(event_id).state != "pending":
            break
        client.sandbox.tick()
    assert client.sandbox.deliveries(event_id).state == "delivered"
    [arrived] = [e for e in listener.wait_for(event, timeout=30) if e.id == event_id]
    assert arrived.type == event


def test_each_request_it_made_is_printed_with_its_dashboard_page(
    client: Client, sandbox_url: str
) -> None:
    code, output = _invoke(sandbox_url, "payment.captured")
    assert code == 0, output
    pages = re.findall(
        r"^  (POST|GET) (\S+) -> (\d{3})  "
        + re.escape(sandbox_url)
        + r"/dashboard/requests/(\S+)$",
        output,
        re.MULTILINE,
    )
    assert ("POST", "/v1/payments/card", "201") in [page[:3] for page in pages], output
    assert all(uuid.UUID(page[3]).version == 4 for page in pages)
    # Elsewhere than the local sandbox there is no dashboard to link to.
    code, output = _invoke(sandbox_url, "payment.captured", environment="sandbox")
    assert "/dashboard/" not in output


def test_list_names_every_event_with_what_it_does(sandbox_url: str) -> None:
    code, output = _invoke(sandbox_url, "--list")
    assert code == 0, output
    names = [line.split()[0] for line in output.splitlines()]
    assert names == list(TRIGGERS)
    assert "session.expired" in output
    assert "(local sandbox only)" in output


def test_every_event_the_webhooks_page_names_can_be_triggered() -> None:
    """The page's table of events (``subscription.*`` expanded) against the triggers."""
    page = (ROOT / "docs" / "webhooks.md").read_text(encoding="utf-8")
    table = page[page.index("| Event | Sent when |") : page.index("## How a delivery is signed")]
    named = set(re.findall(r"`((?:payment|refund|session)\.\w+)`", table))
    [subscription_row] = [line for line in table.splitlines() if "`subscription.*`" in line]
    named |= {f"subscription.{n}" for n in re.findall(r"`(\w+)`", subscription_row)}
    assert named <= set(TRIGGERS), named - set(TRIGGERS)
    assert set(TRIGGERS) <= named, set(TRIGGERS) - named


def test_an_unknown_event_is_a_usage_error(sandbox_url: str) -> None:
    code, output = _invoke(sandbox_url, "payment.exploded")
    assert code == 2
    assert "'payment.exploded' is not an event the sandbox sends" in output
    assert "workbench trigger --list" in output
    assert output.count("\n") == 1, output


def test_production_is_refused_before_any_request() -> None:
    code, output = _invoke("http://127.0.0.1:9", "payment.captured", environment="production")
    assert code == 1
    assert "not in production" in output


def test_a_control_route_trigger_needs_the_local_sandbox() -> None:
    code, output = _invoke("http://127.0.0.1:9", "refund.settled", environment="sandbox")
    assert code == 1
    assert "needs the local sandbox's control routes" in output


def test_a_sandbox_that_does_not_answer_is_named() -> None:
    code, output = _invoke("http://127.0.0.1:9", "payment.captured")
    assert code == 1
    assert "http://127.0.0.1:9 did not answer" in output
    assert "Traceback" not in output


def test_overrides_make_the_objects_with_those_values_and_the_event_carries_them(
    client: Client, sandbox_url: str
) -> None:
    order = f"ord-{uuid.uuid4().hex[:10]}"
    code, output = _invoke(
        sandbox_url,
        "payment.authorized",
        "--override",
        "amount=25050",
        "--override",
        f"transactionId={order}",
        "--add",
        "installments=3",
        "--add",
        "customerId=cus_demo_mehmet",
    )
    assert code == 0, output
    [event] = client.sandbox.events(type="payment.authorized").items
    assert event.data["amount"] == 25_050
    assert event.data["transactionId"] == order
    payment = client.payments.retrieve(event.data["paymentId"])
    assert (payment.amount, payment.installment_count) == (25_050, 3)
    assert "charge" not in output or "250,50" in output  # the steps name the amount given


def test_a_subscription_is_made_for_the_customer_amount_and_reason_given(
    client: Client, sandbox_url: str
) -> None:
    code, output = _invoke(
        sandbox_url,
        "subscription.cancelled",
        "--override",
        "amount=9900",
        "--override",
        "customerId=cus_demo_zeynep",
        "--override",
        "reason=moving abroad",
    )
    assert code == 0, output
    [event] = client.sandbox.events(type="subscription.cancelled").items
    assert (event.data["amountMinor"], event.data["customerId"]) == (9_900, "cus_demo_zeynep")
    assert event.data["reason"] == "moving abroad"


@pytest.mark.parametrize(
    ("args", "names"),
    [
        (("payment.captured", "--override", "amount=12.5"), "amount is a whole number"),
        (("payment.captured", "--override", "amount=50"), "amount is 100.."),
        (("payment.captured", "--override", "colour=red"), "'colour' is not a field"),
        (("payment.captured", "--add", "amount=1000"), "give it with --override"),
        (("payment.captured", "--override", "installments=3"), "give it with --add"),
        (("payment.captured", "--add", "installments=13"), "installments is 1..12"),
        (("payment.captured", "--override", "amount"), "--override 'amount': give FIELD=VALUE"),
        (("subscription.created", "--add", "installments=2"), "has no place for installments"),
        (("session.completed", "--override", "transactionId=renewal 1"), "transactionId may not"),
        (("payment.captured", "--add", "customerId=cus_nobody"), "cus_nobody is not a customer"),
        (("refund.settled", "--add", "installments=2"), "tok_test_refund_async, a debit card"),
        (("payment.exploded",), "'payment.exploded' is not an event the sandbox sends"),
    ],
)
def test_a_value_the_event_cannot_take_is_one_line_exit_2_and_nothing_made(
    args: tuple[str, ...], names: str, client: Client, sandbox_url: str
) -> None:
    code, output = _invoke(sandbox_url, *args)
    assert code == 2, output
    assert output.startswith("workbench trigger: "), output
    assert output.count("\n") == 1, output
    assert names in output
    assert client.sandbox.events().items == []
    assert list(client.subscriptions.list()) == []
