"""Test cards: the ``tok_test_*`` tokens, the card numbers that tokenize to them, their masks.

| token | card number | behaviour |
|---|---|---|
| ``tok_test_success`` | 4242 4242 4242 4242 | approved; frictionless when 3DS is on |
| ``tok_test_3ds_challenge`` | 4000 0000 0000 3220 | challenge; passes with code ``123456`` |
| ``tok_test_3ds_fail`` | 4000 0084 0000 1629 | challenge that always fails |
| ``tok_test_insufficient_funds`` | 4000 0000 0000 9995 | declined, SVC-PAY-3002 |
| ``tok_test_declined`` | 4000 0000 0000 0002 | declined, SVC-PAY-3001 |
| ``tok_test_refund_async`` | 5200 8282 8282 8210 | approved; refunds answer 202 and settle later |
| ``tok_test_renewal_fails`` | 4000 0000 0000 0341 | approved directly; every renewal fails |

Any other Luhn-valid number tokenizes as an approved card.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import datetime

import sqlalchemy as sa

from workbench.sandbox import tables
from workbench.sandbox.errors import ServiceError
from workbench.sandbox.storage import AnyRow
from workbench.spec.cards import is_card_number, looks_like_card_number

__all__ = [
    "CARD_BRANDS",
    "CARD_TYPES",
    "CHALLENGE_CODE",
    "CHARGE_DECLINES",
    "QR_CARD_FIELDS",
    "RENEWAL_DECLINES",
    "TEST_CARDS",
    "CardRecord",
    "TestCard",
    "brand_of",
    "find_token",
    "mask",
    "mask_of",
    "new_token",
    "seed_test_tokens",
    "tokenize",
    "tokenize_checked",
]

#: Every ``cardBrand`` a token or payment reports (the spec leaves the list open);
#: ``tr_qr`` only on a TR QR payment, where no card is involved.
CARD_BRANDS = ("visa", "mastercard", "amex", "troy", "unknown", "tr_qr")
#: Every ``cardType``; ``tr_qr`` only on a TR QR payment.
CARD_TYPES = ("credit", "debit", "tr_qr")
#: The card columns of a TR QR payment: brand and type ``tr_qr``, no mask, no bin.
QR_CARD_FIELDS: dict[str, str] = {
    "card_token": "",
    "card_mask": "",
    "card_brand": "tr_qr",
    "card_type": "tr_qr",
    "bin": "",
}

#: The one-time code that passes a ``tok_test_3ds_challenge`` challenge.
CHALLENGE_CODE = "123456"
#: How a card charge on a declining test card ends: ``behaviour -> (code, message)``.
CHARGE_DECLINES: dict[str, tuple[str, str]] = {
    "declined": ("SVC-PAY-3001", "the issuer declined the card"),
    "insufficient_funds": ("SVC-PAY-3002", "the card has insufficient funds"),
}
#: The decline code of a subscription renewal charged on a card: ``behaviour -> code``.
RENEWAL_DECLINES: dict[str, str] = {
    "renewal_fails": "SVC-PAY-3001",
    "declined": "SVC-PAY-3001",
    "insufficient_funds": "SVC-PAY-3002",
}


@dataclass(frozen=True, slots=True)
class TestCard:
    """A test card: its token, number, and how the sandbox treats it."""

    token: str
    number: str
    behaviour: str
    brand: str
    card_type: str
    description: str

    @property
    def bin(self) -> str:
        """The first six digits."""
        return self.number[:6]

    @property
    def last4(self) -> str:
        """The last four digits."""
        return self.number[-4:]

    @property
    def number_length(self) -> int:
        """How many digits the card number has."""
        return len(self.number)


TEST_CARDS: tuple[TestCard, ...] = (
    TestCard(
        "tok_test_success",
        "4242424242424242",
        "success",
        "visa",
        "credit",
        "approved; frictionless when 3DS is on",
    ),
    TestCard(
        "tok_test_3ds_challenge",
        "4000000000003220",
        "3ds_challenge",
        "visa",
        "credit",
        f"3DS challenge that passes with code {CHALLENGE_CODE}",
    ),
    TestCard(
        "tok_test_3ds_fail",
        "4000008400001629",
        "3ds_fail",
        "visa",
        "credit",
        "3DS challenge that always fails",
    ),
    TestCard(
        "tok_test_insufficient_funds",
        "4000000000009995",
        "insufficient_funds",
        "visa",
        "debit",
        "declined: insufficient funds (SVC-PAY-3002)",
    ),
    TestCard(
        "tok_test_declined",
        "4000000000000002",
        "declined",
        "visa",
        "credit",
        "declined by the issuer (SVC-PAY-3001)",
    ),
    TestCard(
        "tok_test_refund_async",
        "5200828282828210",
        "refund_async",
        "mastercard",
        "debit",
        "approved; its refunds answer 202 and settle later",
    ),
    TestCard(
        "tok_test_renewal_fails",
        "4000000000000341",
        "renewal_fails",
        "visa",
        "credit",
        "approved when charged directly; every subscription renewal fails",
    ),
)

_BY_NUMBER = {card.number: card for card in TEST_CARDS}
_BY_TOKEN = {card.token: card for card in TEST_CARDS}

#: What `find_token` gives: a built-in `TestCard` or a ``card_tokens`` row (both have
#: ``token``, ``behaviour``, ``brand``, ``card_type``, ``bin``, ``last4`` and
#: ``number_length``, which is ``None`` on a row stored before schema version 2).
CardRecord = TestCard | AnyRow


def seed_test_tokens(conn: sa.Connection, now: datetime) -> None:
    """Insert the built-in ``tok_test_*`` tokens (shared by every merchant) if missing."""
    present = set(conn.execute(sa.select(tables.card_tokens.c.token)).scalars())
    for card in TEST_CARDS:
        if card.token in present:
            continue
        conn.execute(
            sa.insert(tables.card_tokens).values(
                token=card.token,
                merchant_id=None,
                behaviour=card.behaviour,
                brand=card.brand,
                card_type=card.card_type,
                bin=card.bin,
                last4=card.last4,
                number_length=card.number_length,
                created_at=now,
            )
        )


_FIND_TOKEN = sa.select(tables.card_tokens).where(
    tables.card_tokens.c.token == sa.bindparam("f_token"),
    sa.or_(
        tables.card_tokens.c.merchant_id.is_(None),
        tables.card_tokens.c.merchant_id == sa.bindparam("f_merchant"),
    ),
)


def find_token(conn: sa.Connection, merchant_id: str, token: str) -> CardRecord | None:
    """The token's record if this merchant may use it (built-in or its own).

    A built-in test token is answered from `TEST_CARDS`, whose rows in the database
    (``seed_test_tokens``) never change: one statement fewer on every test charge.
    """
    builtin = _BY_TOKEN.get(token)
    if builtin is not None:
        return builtin
    return conn.execute(_FIND_TOKEN, {"f_token": token, "f_merchant": merchant_id}).first()


def brand_of(number: str) -> str:
    """The brand a card number's prefix names (``"unknown"`` when none does)."""
    if number.startswith("4"):
        return "visa"
    if number[:2] in ("51", "52", "53", "54", "55") or "2221" <= number[:4] <= "2720":
        return "mastercard"
    if number[:2] in ("34", "37"):
        return "amex"
    if number.startswith("9792"):
        return "troy"
    return "unknown"


def new_token() -> str:
    """A fresh ``tok_`` token that the PAN check cannot mistake for a card number.

    24 random hex characters hold a run of 12 digits about once in 60 draws; such a
    token would then be refused by the charge endpoint as a raw card number.
    """
    while True:
        token = f"tok_{secrets.token_hex(12)}"
        if not looks_like_card_number(token):
            return token


def tokenize(conn: sa.Connection, merchant_id: str, number: str, now: datetime) -> dict[str, str]:
    """Store a card number as a fresh ``tok_`` token of this merchant; the number is not kept.

    The caller has already checked ``number`` is 12-19 digits passing Luhn.
    """
    known = _BY_NUMBER.get(number)
    behaviour = known.behaviour if known else "success"
    brand = known.brand if known else brand_of(number)
    card_type = known.card_type if known else "credit"
    token = new_token()
    conn.execute(
        sa.insert(tables.card_tokens).values(
            token=token,
            merchant_id=merchant_id,
            behaviour=behaviour,
            brand=brand,
            card_type=card_type,
            bin=number[:6],
            last4=number[-4:],
            number_length=len(number),
            created_at=now,
        )
    )
    return {
        "token": token,
        "cardMask": mask(number[:6], number[-4:], len(number)),
        "cardBrand": brand,
        "cardType": card_type,
        "bin": number[:6],
        "last4": number[-4:],
    }


def tokenize_checked(
    conn: sa.Connection,
    merchant_id: str,
    number: str,
    expiry_month: int,
    expiry_year: int,
    now: datetime,
) -> dict[str, str]:
    """What ``POST /v1/cards/tokens`` does: check the card, then `tokenize` it.

    The hosted checkout page tokenizes through this same function, so a card typed on
    the page meets exactly the endpoint's rules. The number is never stored or echoed.

    Raises:
        ServiceError: SVC-VAL-4001 for a number that is not 12-19 digits passing Luhn, or
            an expiry month already past on the merchant's business clock.
    """
    digits = number.replace(" ", "").replace("-", "")
    if not is_card_number(digits):
        raise ServiceError("SVC-VAL-4001", "cardNumber: not a valid card number")
    if (expiry_year, expiry_month) < (now.year, now.month):
        raise ServiceError("SVC-VAL-4001", "expiryYear/expiryMonth: the card has expired")
    return tokenize(conn, merchant_id, digits, now)


def mask(bin_: str, last4: str, length: int | None = 16) -> str:
    """``424242******4242``: first six, one ``*`` per hidden digit, last four.

    The mask keeps the card's length: 5 stars for a 15-digit card, 9 for a 19-digit one
    (``None``, a token stored before its length was, shows 16 digits).
    """
    return f"{bin_}{'*' * ((length or 16) - 10)}{last4}"


def mask_of(card: CardRecord) -> str:
    """The ``cardMask`` of a token's card (`find_token`'s record), as its token showed it."""
    return mask(card.bin, card.last4, card.number_length)
