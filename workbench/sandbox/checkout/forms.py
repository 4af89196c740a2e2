"""What the buyer typed on a hosted page, read and checked before anything is charged.

Forms arrive URL-encoded (plain HTML forms, no JavaScript needed). The card number
is held only long enough to be tokenized: it is never logged, stored or echoed back
into a page (`CardForm.__repr__` masks it). What a `FormError` says is an English
gettext message (`messages.N_`), translated into the buyer's language on the page.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from urllib.parse import parse_qsl

from workbench.sandbox.checkout.messages import N_
from workbench.spec import limits

__all__ = ["CardForm", "FormError", "parse_body"]

_EXPIRY = re.compile(r"^\s*(\d{1,2})\s*/\s*(\d{2}|\d{4})\s*$")
_CVC = re.compile(r"^\d{3,4}$")
#: Form bodies larger than this are refused (a card form is a few hundred bytes).
MAX_BODY = 8_192


class FormError(ValueError):
    """A field the buyer must correct; ``field`` names it for the page.

    Attributes:
        field: the form field's name (``form`` for the whole form).
        message: the gettext message (English), with ``%(name)d`` placeholders.
        params: the values of its placeholders.
    """

    def __init__(self, field_name: str, message: str, **params: int) -> None:
        super().__init__(message % params if params else message)
        self.field = field_name
        self.message = message
        self.params = params


def parse_body(body: bytes) -> dict[str, str]:
    """A URL-encoded form body as ``{name: last value}``.

    Raises:
        FormError: for a body too large or not UTF-8.
    """
    if len(body) > MAX_BODY:
        raise FormError("form", N_("The form is too large."))
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        unreadable = N_("The form could not be read. Reload the page and try again.")
        raise FormError("form", unreadable) from None
    return dict(parse_qsl(text, keep_blank_values=True))


@dataclass(frozen=True, slots=True)
class CardForm:
    """The card form: number, expiry, CVC, holder, installments and save-card.

    Attributes:
        number: the digits typed (never shown; see ``__repr__``).
        expiry_month: 1-12.
        expiry_year: four digits.
        holder: the cardholder's name as typed.
        installments: 1-12 (1 when the page offers no picker).
        save_card: the buyer ticked "save this card".
    """

    number: str = field(repr=False)
    expiry_month: int
    expiry_year: int
    holder: str
    installments: int = 1
    save_card: bool = False

    def __repr__(self) -> str:
        return (
            f"CardForm(number='****', expiry={self.expiry_month:02d}/{self.expiry_year}, "
            f"installments={self.installments}, save_card={self.save_card})"
        )

    @classmethod
    def parse(cls, data: dict[str, str], *, installments_allowed: bool) -> CardForm:
        """Check the fields; the CVC is checked for shape and then dropped.

        Args:
            data: the posted form.
            installments_allowed: whether the session offers installments (re-checked
                here whatever the page showed).

        Raises:
            FormError: naming the first field to correct.
        """
        number = data.get("cardNumber", "").replace(" ", "").replace("-", "")
        if not number:
            raise FormError("cardNumber", N_("Enter the card number."))
        if not number.isdigit() or not 12 <= len(number) <= 19:
            raise FormError("cardNumber", N_("The card number should be 12 to 19 digits."))
        match = _EXPIRY.match(data.get("expiry", ""))
        if match is None:
            raise FormError("expiry", N_("Enter the expiry date as MM/YY."))
        month, year = int(match.group(1)), int(match.group(2))
        year = year + 2000 if year < 100 else year
        if not 1 <= month <= 12:
            raise FormError("expiry", N_("The expiry month should be 01 to 12."))
        if not _CVC.match(data.get("cvc", "").strip()):
            raise FormError("cvc", N_("The security code is the 3 or 4 digits on the card."))
        holder = " ".join(data.get("holder", "").split())
        if not holder:
            raise FormError("holder", N_("Enter the name on the card."))
        if len(holder) > 100:
            raise FormError("holder", N_("The name on the card is too long."))
        installments = 1
        raw = data.get("installments", "1").strip() or "1"
        if not raw.isdigit():
            raise FormError("installments", N_("Choose the number of installments."))
        installments = int(raw)
        if not limits.INSTALLMENTS_MIN <= installments <= limits.INSTALLMENTS_MAX:
            raise FormError(
                "installments",
                N_("Installments go from %(least)d to %(most)d."),
                least=limits.INSTALLMENTS_MIN,
                most=limits.INSTALLMENTS_MAX,
            )
        if installments > 1 and not installments_allowed:
            raise FormError("installments", N_("This payment cannot be split into installments."))
        save = data.get("saveCard", "") in ("on", "1", "true", "yes")
        return cls(number, month, year, holder, installments, save)
