"""The flow behind notebook 07's "Try it" form: the buyer portal by ``publicHash``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from workbench.flows._run import APPROVED_CARD, FlowRun
from workbench.flows.subscriptions import first_customer
from workbench.money import format_try

if TYPE_CHECKING:
    from workbench._client import Client

__all__ = ["portal"]


def portal(
    client: Client,
    *,
    amount: int = 9_900,
    card_token: str = APPROVED_CARD,
    at_period_end: bool = True,
) -> FlowRun:
    """Create a subscription, then act as its buyer with nothing but its ``publicHash``.

    Args:
        client: a configured client.
        amount: kuruş per month.
        card_token: the card subscribed.
        at_period_end: the buyer cancels at the end of the period (else at once).

    Returns:
        The run; ``outcome`` holds ``public_fields``, ``update_session`` (it has a
        checkout address), ``status`` and ``cancel_at_period_end``.
    """
    run = FlowRun("portal", {"amount": amount, "card_token": card_token,
                             "at_period_end": at_period_end})  # fmt: skip
    with run.recording(client):
        fixtures = client.sandbox.fixtures()
        sub = client.subscriptions.create(
            store_id=fixtures.store_id, customer_id=first_customer(fixtures), amount_minor=amount,
            interval_count=1, interval_unit="month", card_token=card_token,
        )  # fmt: skip
        run.object_id = sub.id
        run.say(f"merchant creates {format_try(amount)} a month: {sub.status}")
        assert sub.public_hash is not None
        view = client.portal.retrieve(sub.public_hash)
        fields = sorted(view.model_dump(by_alias=True, exclude_none=True))
        run.outcome["public_fields"] = fields
        run.say(f"buyer reads the portal (no signature): {view.status}, card …{view.card_last4}")
        session = client.portal.update_card_session(sub.public_hash)
        run.outcome["update_session"] = bool(session.checkout_url)
        run.say("buyer asks to change the card: a card_update_only checkout session")
        cancelled = client.portal.cancel(sub.public_hash, at_period_end=at_period_end)
        run.outcome.update(
            status=cancelled.status, cancel_at_period_end=cancelled.cancel_at_period_end
        )
        run.say(
            f"buyer cancels (atPeriodEnd={at_period_end}): {cancelled.status}, "
            f"cancelAtPeriodEnd={cancelled.cancel_at_period_end}"
        )
    return run
