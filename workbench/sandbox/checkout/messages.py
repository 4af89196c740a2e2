"""What the hosted pages tell the buyer in words made in code, marked for translation.

Each is an English gettext message marked with `N_` (Babel extracts ``N_``), translated
when a page is drawn (`rendering.render`). The words are the buyer's, as Turkish banks'
pages put them, never the API's: the merchant's API errors keep their English envelope.
"""

from __future__ import annotations

from typing import Final

__all__ = ["DECLINES", "ENDED", "N_", "Refusal", "refusal"]


def N_(message: str) -> str:
    """Mark ``message`` for extraction; it is translated where the page is drawn."""
    return message


#: The pages that say a checkout cannot be used: reason -> (status, heading, message).
ENDED: Final[dict[str, tuple[int, str, str]]] = {
    "missing": (
        404,
        N_("Checkout not found"),
        N_("There is no checkout at this address. Go back to the shop and start again."),
    ),
    "expired": (
        410,
        N_("This checkout has expired"),
        N_(
            "The time to pay has run out and nothing was charged. "
            "Go back to the shop to start a new checkout."
        ),
    ),
    "completed": (
        410,
        N_("This checkout is already completed"),
        N_("This checkout was already finished; it cannot be used again."),
    ),
    "taken": (
        409,
        N_("This checkout cannot be paid"),
        N_(
            "The shop's order reference for this checkout already belongs to another payment, "
            "so nothing was charged. Go back to the shop to start a new checkout."
        ),
    ),
    "no-challenge": (
        404,
        N_("No challenge here"),
        N_("There is no 3-D Secure challenge waiting at this address."),
    ),
}

#: Why a payment did not go through, by the ``errorCode`` the buyer comes back with.
DECLINES: Final[dict[str, str]] = {
    "SVC-PAY-3001": N_("Your bank declined the card. Try another card."),
    "SVC-PAY-3002": N_("The card's limit is not enough for this payment."),
    "SVC-PAY-3003": N_("The 3-D Secure verification did not succeed."),
}

Refusal = tuple[str | None, str]


def refusal(code: str, message: str) -> Refusal:
    """What to tell the buyer when the service refused a submit: ``(field, message)``.

    Args:
        code: the service's error code.
        message: the service's (English, API) message, which names the field it is about.
    """
    if code == "SVC-VAL-4001" and message.startswith("cardNumber"):
        return "cardNumber", N_("The card number is not valid. Check it and try again.")
    if code == "SVC-VAL-4001" and message.startswith("expiry"):
        return "expiry", N_("The card has expired.")
    if code == "SVC-VAL-4001" and message.startswith("installmentCount"):
        return "installments", N_("This card takes a single payment, not installments.")
    if code == "SVC-PAY-4001":
        return None, N_("The 3-D Secure answer could not be verified. Try the payment again.")
    if code in DECLINES:
        return None, DECLINES[code]
    return None, N_("The payment could not be made.")
