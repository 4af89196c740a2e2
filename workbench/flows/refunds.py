"""The flow behind notebook 05's "Try it" form: partial, too much, the rest, in flight."""

from __future__ import annotations

from typing import TYPE_CHECKING

from workbench._exceptions import APIError
from workbench.flows._run import APPROVED_CARD, FlowRun, new_transaction_id
from workbench.money import format_try
from workbench.tracking import wait_for_refund

if TYPE_CHECKING:
    from workbench._client import Client
    from workbench.models import RefundResult

__all__ = ["refunds"]

#: Business seconds the sandbox clock is moved between polls of an in-flight refund.
_SETTLE_STEP_SECONDS = 30


def _refund(
    client: Client, run: FlowRun, payment_id: str, amount: int | None, reason: str, what: str
) -> RefundResult:
    """Refund; if in flight, ask again with the same key and payload until it settles."""
    result = client.payments.refund(payment_id, amount=amount, reason=reason)
    state = result.last_refund.status if result.last_refund else result.status
    run.say(f"{what}: {result.http_status}, refund {state}")
    if not result.in_flight:
        return result

    def same_again() -> RefundResult:
        return client.payments.refund(
            payment_id, amount=amount, reason=reason, idempotency_key=result.idempotency_key
        )

    again = same_again()
    run.say(f"  same Idempotency-Key at once: {again.http_status} (still in flight)")
    done = wait_for_refund(
        client, result, between=lambda: client.sandbox.advance_clock(_SETTLE_STEP_SECONDS)
    )
    final = done.last_refund.status if done.last_refund else done.status
    run.say(f"  clock moves on, the reconciler settles it; same key: {done.http_status}, {final}")
    replay = same_again()
    replayed = replay.response.replayed if replay.response else False
    run.say(f"  same key once more: {replay.http_status}, replayed={replayed}")
    run.outcome["settled_later"] = run.outcome.get("settled_later", 0) + 1
    return done


def refunds(
    client: Client,
    *,
    amount: int = 20_000,
    partial: int = 5_000,
    card_token: str = APPROVED_CARD,
) -> FlowRun:
    """Capture ``amount``, refund ``partial``, try to refund too much, then refund the rest.

    With ``tok_test_refund_async`` each refund answers 202 (in flight); the flow
    asks again under the same Idempotency-Key while the sandbox clock moves on,
    until the reconciler settles it and the answer turns 200.

    Args:
        client: a configured client.
        amount: kuruş charged.
        partial: kuruş of the first refund (``0 < partial < amount``).
        card_token: ``tok_test_success`` (settles at once) or ``tok_test_refund_async``.

    Returns:
        The run; ``outcome`` holds ``status``, ``refund_amount``, ``refundable_amount``,
        ``after_partial`` (refundable after the first refund) and ``over_refund_error``.
    """
    if not 0 < partial < amount:
        raise ValueError("partial must be more than 0 and less than amount")
    run = FlowRun("refunds", {"amount": amount, "partial": partial, "card_token": card_token})
    with run.recording(client):
        charge = client.payments.charge_card(
            transaction_id=new_transaction_id(), amount=amount, card_token=card_token
        )
        run.object_id = charge.id
        run.say(f"charge {format_try(amount)} with {card_token}: {charge.status}")
        first = _refund(
            client,
            run,
            charge.id,
            partial,
            "one item back",
            f"refund {format_try(partial)}",
        )
        left = first.refundable_amount or 0
        run.outcome["after_partial"] = left
        run.say(f"refundable now {format_try(left)}")
        try:
            client.payments.refund(charge.id, amount=left + 100)
            run.outcome["over_refund_error"] = None
        except APIError as err:
            run.outcome["over_refund_error"] = err.code
            run.say(f"refund {format_try(left + 100)} (too much): {err.http_status} {err.code}")
        _refund(client, run, charge.id, None, "order cancelled", "refund the rest")
        payment = client.payments.retrieve(charge.id)
        run.say(
            f"payment {payment.status}: refunded {format_try(payment.refund_amount or 0)}, "
            f"refundable {format_try(payment.refundable_amount or 0)}"
        )
        run.outcome.update(
            status=payment.status,
            refund_amount=payment.refund_amount,
            refundable_amount=payment.refundable_amount,
        )
    return run
