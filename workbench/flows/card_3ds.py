"""The flow behind notebook 03's "Try it" form: a card charge with 3-D Secure (frictionless,
challenge passed or failed, duplicate callback)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from workbench._exceptions import APIError, DeclineError
from workbench.flows._run import CHALLENGE_CARD, FlowRun, new_transaction_id
from workbench.money import format_try
from workbench.resources.sandbox import CHALLENGE_CODE

if TYPE_CHECKING:
    from workbench._client import Client

__all__ = ["card_3ds"]


def card_3ds(
    client: Client,
    *,
    amount: int = 12_500,
    card_token: str = CHALLENGE_CARD,
    installments: int = 1,
    three_d_secure: bool = True,
    capture: bool = True,
    challenge_code: str = CHALLENGE_CODE,
) -> FlowRun:
    """Charge a card; when a challenge is asked, answer it as the buyer and post the callback twice.

    Args:
        client: a configured client.
        amount: kuruş.
        card_token: a test card (``tok_test_3ds_challenge`` asks for a challenge,
            ``tok_test_3ds_fail`` always fails it, ``tok_test_success`` is frictionless).
        installments: 1 to 12.
        three_d_secure: ask for 3-D Secure.
        capture: capture at once (``False`` authorizes only).
        challenge_code: what the buyer types on the challenge page.

    Returns:
        The run; ``outcome`` holds ``status``, ``challenged``, ``amount`` and, when the
        callback was posted twice, ``duplicate_same`` (the second answer equals the first).
    """
    params = {"amount": amount, "card_token": card_token, "installments": installments,
              "three_d_secure": three_d_secure, "capture": capture}  # fmt: skip
    run = FlowRun("card_3ds", params)
    with run.recording(client):
        try:
            charge = client.payments.charge_card(
                transaction_id=new_transaction_id(),
                amount=amount,
                card_token=card_token,
                installment_count=installments,
                three_d_secure=three_d_secure,
                capture=capture,
            )
        except DeclineError as err:
            run.say(
                f"charge {format_try(amount)} with {card_token}: {type(err).__name__} {err.code}"
            )
            run.outcome.update(status="declined", challenged=False, error=err.code)
            return run
        run.object_id = charge.id
        run.say(f"charge {format_try(amount)} with {card_token}: {charge.status}")
        run.outcome.update(challenged=charge.requires_action, amount=charge.amount)
        if charge.requires_action and charge.correlation_id:
            answer = client.sandbox.answer_challenge(
                charge.id, charge.correlation_id, code=challenge_code
            )
            run.say(f"buyer answers the challenge page: result {answer.result}")
            answers = []
            for attempt in ("3ds-callback", "3ds-callback again (duplicate)"):
                try:
                    done = client.payments.complete_3ds(
                        charge.id, pares=answer.pares, correlation_id=charge.correlation_id
                    )
                    answers.append(("ok", done.status, done.auth_code))
                    run.say(f"{attempt}: {done.status}")
                except APIError as err:
                    answers.append(("error", err.code, None))
                    run.say(f"{attempt}: {type(err).__name__} {err.code}")
            run.outcome["duplicate_same"] = answers[0] == answers[1]
        payment = client.payments.retrieve(charge.id)
        run.say(
            f"payment is {payment.status}; refundable {format_try(payment.refundable_amount or 0)}"
        )
        run.outcome.update(
            status=payment.status,
            refundable_amount=payment.refundable_amount,
            installments=payment.installment_count,
            three_d_secure=payment.three_d_secure,
        )
    return run
