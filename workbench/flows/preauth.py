"""The flow behind notebook 04's "Try it" form: authorize, then capture (twice) or void."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from workbench.flows._run import APPROVED_CARD, FlowRun, new_transaction_id
from workbench.money import format_try

if TYPE_CHECKING:
    from workbench._client import Client

__all__ = ["preauth"]


def preauth(
    client: Client,
    *,
    amount: int = 45_000,
    card_token: str = APPROVED_CARD,
    then: Literal["capture", "void"] = "capture",
    reason: str = "customer changed the order",
) -> FlowRun:
    """Authorize ``amount`` without capturing, then capture it or void it, each twice.

    Args:
        client: a configured client.
        amount: kuruş.
        card_token: a test card that approves.
        then: ``capture`` or ``void``.
        reason: the void reason (at most 500 characters), carried on ``payment.voided``.

    Returns:
        The run; ``outcome`` holds ``status``, ``amount``, ``refundable_amount``,
        ``repeat_same`` and, for a void, ``event_reason`` read back from the event.
    """
    if then not in ("capture", "void"):
        raise ValueError("then must be 'capture' or 'void'")
    run = FlowRun("preauth", {"amount": amount, "card_token": card_token, "then": then})
    with run.recording(client):
        auth = client.payments.charge_card(
            transaction_id=new_transaction_id(), amount=amount, card_token=card_token,
            capture=False,
        )  # fmt: skip
        run.object_id = auth.id
        run.say(f"authorize {format_try(amount)} (capture=false): {auth.status}")
        if then == "capture":
            first = client.payments.capture(auth.id)
            again = client.payments.capture(auth.id)
            run.say(
                f"capture: {first.status}, refundable {format_try(first.refundable_amount or 0)}"
            )
            run.say(f"capture again: {again.status} (no-op)")
            same = (first.status, first.amount) == (again.status, again.amount)
        else:
            first_v = client.payments.void(auth.id, reason=reason)
            again_v = client.payments.void(auth.id, reason=reason)
            run.say(f"void with a reason: {first_v.status}")
            run.say(f"void again: {again_v.status} (no-op)")
            same = first_v.status == again_v.status
            events = client.sandbox.events(type="payment.voided").items
            mine = [e for e in events if e.data.get("paymentId") == auth.id]
            run.outcome["voided_events"] = len(mine)
            run.outcome["event_reason"] = mine[-1].data.get("reason") if mine else None
            run.say(f"payment.voided events for this payment: {len(mine)}")
        payment = client.payments.retrieve(auth.id)
        run.say(
            f"payment is {payment.status}; refundable {format_try(payment.refundable_amount or 0)}"
        )
        run.outcome.update(
            status=payment.status,
            amount=payment.amount,
            refundable_amount=payment.refundable_amount,
            repeat_same=same,
        )
    return run
