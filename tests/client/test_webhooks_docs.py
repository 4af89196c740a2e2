"""The webhooks page's example payloads are real, verified deliveries of the sandbox.

`collect` drives a fresh sandbox with the client (pay, preauthorize and void, decline,
refund at once and in flight, let a session expire, create, renew, pause, resume and
cancel a subscription), receives every delivery with a `WebhookListener` (so each one
verified), and `render` writes one example per event type with ids and times made
stable. The test fails when docs/webhooks.md differs; rewrite the block with::

    .venv/bin/python -m tests.client.test_webhooks_docs
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from workbench._client import Client
from workbench._exceptions import CardDeclinedError
from workbench.config import DEFAULT_SECRET_KEY
from workbench.spec.limits import SESSION_LIFETIME_SECONDS
from workbench.testing import client_for, running_sandbox
from workbench.webhooks import WebhookEvent, WebhookListener

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "webhooks.md"
BEGIN = "<!-- BEGIN generated webhook examples (python -m tests.client.test_webhooks_docs) -->"
END = "<!-- END generated webhook examples -->"
#: Where the stable example times start.
EPOCH = datetime.fromisoformat("2026-03-14T09:26:53+00:00")
_ID = re.compile(r"\b(pay|rfn|sub|evt|ses|cus|tok)_[0-9a-f]{24}\b")
_UUID = re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b")
_TIME = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?Z")


@contextmanager
def _client(folder: Path) -> Iterator[Client]:
    """A client of a fresh sandbox whose SQLite file is in ``folder``; its reconciler runs
    only when `collect` ticks it, so the deliveries come in a known order."""
    with (
        running_sandbox(db_dir=folder, run_reconciler_in_background=False) as server,
        client_for(server) as client,
    ):
        yield client


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Client]:
    """A client of a fresh sandbox on a free port (not the offline client of conftest)."""
    with _client(tmp_path_factory.mktemp("webhook-docs")) as c:
        yield c


def _order(n: int) -> str:
    return f"order-100{n}"


def collect(client: Client) -> list[WebhookEvent]:
    """Make every kind of event the sandbox sends through the client; return them verified."""
    client.sandbox.reset()
    fixtures = client.sandbox.fixtures()
    secret = fixtures.webhook_secret or ""
    with WebhookListener(secret) as hooks:
        client.sandbox.set_webhook(hooks.url)
        try:
            paid = client.payments.charge_card(
                transaction_id=_order(1),
                amount=125_050,
                card_token="tok_test_success",
                three_d_secure=False,
            )
            client.payments.refund(paid.payment_id, amount=25_050, reason="one item back")
            held = client.payments.charge_card(
                transaction_id=_order(2),
                amount=40_000,
                card_token="tok_test_success",
                three_d_secure=False,
                capture=False,
            )
            client.payments.void(held.payment_id, reason="customer changed their mind")
            with pytest.raises(CardDeclinedError):
                client.payments.charge_card(
                    transaction_id=_order(3),
                    amount=9_900,
                    card_token="tok_test_declined",
                    three_d_secure=False,
                )
            slow = client.payments.charge_card(
                transaction_id=_order(4),
                amount=30_000,
                card_token="tok_test_refund_async",
                three_d_secure=False,
            )
            client.payments.refund(slow.payment_id)
            client.sessions.create(
                transaction_id=_order(5),
                amount=15_000,
                return_url="https://shop.example/return",
            )
            client.sandbox.advance_clock(SESSION_LIFETIME_SECONDS + 60)
            sub = client.subscriptions.create(
                store_id=fixtures.store_id,
                customer_id="cus_demo_ayse",
                amount_minor=9_900,
                interval_count=1,
                interval_unit="month",
            )
            client.sandbox.tick()
            client.sandbox.advance_clock(32 * 24 * 3600)
            client.subscriptions.pause(sub.id)
            client.subscriptions.resume(sub.id)
            client.subscriptions.cancel(sub.id, at_period_end=False, reason="moved away")
            client.sandbox.tick()
        finally:
            client.sandbox.set_webhook(None)
        recorded = client.sandbox.events().items
        hooks.wait_for(count=len(recorded), timeout=30)
        arrived = list(hooks.events)
        assert sorted(e.id for e in arrived) == sorted(e.id for e in recorded)
        # Different objects' events go out concurrently; each object's in the order made.
        order = {e.id: n for n, e in enumerate(recorded)}
        for obj in {e.object_id for e in arrived}:
            mine = [order[e.id] for e in arrived if e.object_id == obj]
            assert mine == sorted(mine), obj
        return sorted(arrived, key=lambda e: order[e.id])


def _stable(events: list[WebhookEvent]) -> list[dict[str, Any]]:
    """The payloads with ids numbered by first appearance and times offset from `EPOCH`.

    The offsets are the sandbox's own (a refund settles 60 s on, a renewal a month on),
    give or take the second the wall clock moved while `collect` ran.
    """
    text = "\n".join(e.raw.decode() for e in events)
    ids: dict[str, str] = {}

    def new_id(match: re.Match[str]) -> str:
        if match.group(0) not in ids:
            n = sum(1 for v in ids.values() if v.startswith(match.group(1))) + 1
            ids[match.group(0)] = f"{match.group(1)}_{n:024x}"
        return ids[match.group(0)]

    uuids: dict[str, str] = {}

    def new_uuid(match: re.Match[str]) -> str:
        return uuids.setdefault(match.group(0), f"00000000-0000-4000-8000-{len(uuids) + 1:012x}")

    first = datetime.fromisoformat(_TIME.search(text).group(0))  # type: ignore[union-attr]

    def new_time(match: re.Match[str]) -> str:
        moment = EPOCH + (datetime.fromisoformat(match.group(0)) - first)
        return moment.strftime("%Y-%m-%dT%H:%M:%SZ")

    text = _TIME.sub(new_time, _UUID.sub(new_uuid, _ID.sub(new_id, text)))
    return [json.loads(line) for line in text.splitlines()]


def render(events: list[WebhookEvent]) -> str:
    """The page block: one section per event type (its first delivery), in order of arrival."""
    payloads = _stable(events)
    out = [BEGIN, ""]
    shown: set[str] = set()
    for payload in payloads:
        if payload["type"] in shown:
            continue
        shown.add(payload["type"])
        out += [
            f"### `{payload['type']}`",
            "",
            "```json",
            json.dumps(payload, indent=2, ensure_ascii=False),
            "```",
            "",
        ]
    out.append(END)
    return "\n".join(out)


def _block(page: str) -> str:
    start, end = page.index(BEGIN), page.index(END) + len(END)
    return page[start:end]


def test_the_page_shows_real_deliveries(client: Client) -> None:
    events = collect(client)
    types = {e.type for e in events}
    assert {"payment.captured", "refund.settled", "subscription.renewed"} <= types
    page = PAGE.read_text(encoding="utf-8")
    # Times are compared as times only: the business clock follows the wall clock, so an
    # offset can differ by the second that passed while collect() ran.
    shown, delivered = (_TIME.sub("<time>", t) for t in (_block(page), render(events)))
    assert shown == delivered, (
        "docs/webhooks.md's examples differ from the sandbox's deliveries: "
        "run .venv/bin/python -m tests.client.test_webhooks_docs"
    )


def test_the_page_shows_no_secret_or_full_signature(client: Client) -> None:
    page = PAGE.read_text(encoding="utf-8")
    secret = client.sandbox.fixtures().webhook_secret
    assert secret
    assert secret not in page
    assert DEFAULT_SECRET_KEY not in page
    assert not re.search(r"\b[0-9a-f]{64}\b", page), "a full signature or digest on the page"


def main() -> None:
    """Rewrite the examples block of docs/webhooks.md from a fresh sandbox."""
    from tempfile import TemporaryDirectory

    with TemporaryDirectory() as tmp, _client(Path(tmp)) as client:
        block = render(collect(client))
    page = PAGE.read_text(encoding="utf-8")
    PAGE.write_text(page.replace(_block(page), block), encoding="utf-8")
    print(f"wrote the examples of {PAGE.relative_to(ROOT)}", file=sys.stderr)


if __name__ == "__main__":
    main()
