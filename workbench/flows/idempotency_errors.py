"""The flow behind notebook 08's "Try it" form: replays, a reused key with another payload,
the transactionId fence, the error envelope, and the client's retries through a rate limit."""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING

from workbench._exceptions import APIError
from workbench.flows._run import APPROVED_CARD, FlowRun, new_transaction_id
from workbench.money import format_try

if TYPE_CHECKING:
    from workbench._client import Client

__all__ = ["idempotency_errors"]


def idempotency_errors(
    client: Client,
    *,
    amount: int = 9_900,
    card_token: str = APPROVED_CARD,
    bad_installments: int = 13,
    rate_limited: bool = True,
) -> FlowRun:
    """Show what the service does with repeated and wrong requests.

    Args:
        client: a configured client (its retries are used in the last step).
        amount: kuruş of the charge repeated.
        card_token: a test card that approves.
        bad_installments: an installment count outside 1..12, to get a validation error.
        rate_limited: make the sandbox answer the next request 429 once, to show a retry.

    Returns:
        The run; ``outcome`` holds ``replay_same_payment``, ``replayed``,
        ``conflict_code``, ``fence_same_payment``, ``validation_code``,
        ``envelope_keys`` and ``retries``.
    """
    params = {"amount": amount, "card_token": card_token, "bad_installments": bad_installments,
              "rate_limited": rate_limited}  # fmt: skip
    run = FlowRun("idempotency_errors", params)
    key = str(uuid.uuid4())
    transaction_id = new_transaction_id()
    with run.recording(client):
        first = client.payments.charge_card(
            transaction_id=transaction_id, amount=amount, card_token=card_token,
            idempotency_key=key,
        )  # fmt: skip
        run.object_id = first.id
        run.say(f"charge {format_try(amount)} under an Idempotency-Key: {first.http_status}")
        again = client.payments.charge_card(
            transaction_id=transaction_id, amount=amount, card_token=card_token,
            idempotency_key=key,
        )  # fmt: skip
        replayed = bool(again.response and again.response.replayed)
        same_request = first.request_id == again.request_id
        run.outcome.update(
            replay_same_payment=again.id == first.id,
            replayed=replayed,
            replay_same_request_id=same_request,
        )
        run.say(
            f"same key, same payload: {again.http_status}, same payment, replayed={replayed}, "
            f"same X-Request-Id={same_request}"
        )
        try:
            client.payments.charge_card(
                transaction_id=transaction_id, amount=amount + 100, card_token=card_token,
                idempotency_key=key,
            )  # fmt: skip
            run.outcome["conflict_code"] = None
        except APIError as err:
            run.outcome["conflict_code"] = err.code
            run.say(f"same key, another amount: {err.http_status} {err.code}")
        fenced = client.payments.charge_card(
            transaction_id=transaction_id, amount=amount, card_token=card_token
        )
        run.outcome["fence_same_payment"] = fenced.id == first.id
        run.say(
            f"same transactionId, new key: {fenced.http_status}, "
            f"same payment={fenced.id == first.id}"
        )
        try:
            client.payments.charge_card(
                transaction_id=new_transaction_id(), amount=amount, card_token=card_token,
                installment_count=bad_installments,
            )  # fmt: skip
            run.outcome["validation_code"] = None
        except APIError as err:
            envelope = run.last.response if run.last else {}
            keys = sorted(envelope) if isinstance(envelope, dict) else []
            run.outcome.update(validation_code=err.code, envelope_keys=keys,
                               has_request_id=bool(err.request_id))  # fmt: skip
            run.say(
                f"installmentCount={bad_installments}: {err.http_status} {err.code}: {err.message}"
            )
            run.say(f"  error envelope fields: {', '.join(keys)}")
        if rate_limited:
            client.sandbox.fail_next("429")
            retried = client.payments.charge_card(
                transaction_id=new_transaction_id(), amount=amount, card_token=card_token
            )
            retries = retried.response.retries if retried.response else 0
            run.outcome["retries"] = retries
            run.say(
                f"next request answered 429 once: the client waited and retried "
                f"({retries} retry, same key), then {retried.http_status} {retried.status}"
            )
    return run
