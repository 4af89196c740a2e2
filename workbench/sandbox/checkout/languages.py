"""The buyer's language on the hosted pages: which one, its catalogue, its amounts and dates.

The rules, in the order they apply (docs/sandbox/decisions.md, "Hosted pages' language"):

1. ``?lang=tr`` or ``?lang=en`` in the address: the buyer's choice from the switcher.
   The pages carry it on in every address they send the buyer to (the form's submit,
   the 3-D Secure challenge and its return), and the page that takes it sets the cookie
   `COOKIE`, so the demo merchant return page, whose address the merchant chose, follows.
2. That cookie: the choice made earlier in the same browser.
3. ``Accept-Language``: the first of the browser's languages (by ``q``) that the pages
   speak, ``tr-TR`` counting as ``tr``.
4. Turkish, the language of the market the service sells in.

Strings are gettext messages in English, translated by the catalogue
``locale/<lang>/LC_MESSAGES/messages.po`` (extracted with Babel: ``make translations``).
The ``.po`` file is what ships; it is compiled in memory on the first page in that
language (`translations`), so nothing compiled can lag behind it, and a sandbox that
serves no hosted page never reads it. Amounts and dates are written from CLDR's data
through Babel (`amount`, `moment`).
"""

from __future__ import annotations

import gettext
import io
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from functools import cache
from importlib import resources
from typing import Final

__all__ = [
    "COOKIE",
    "DEFAULT",
    "LANGUAGES",
    "Language",
    "amount",
    "choose",
    "from_accept_language",
    "moment",
    "translations",
]


@dataclass(frozen=True, slots=True)
class Language:
    """A language of the pages.

    Attributes:
        code: the ``lang`` value (``tr``, ``en``): query parameter, cookie, ``<html lang>``.
        name: its own name, as the switcher shows it (``Türkçe``, ``English``).
        amount_format: the CLDR number pattern for an amount in lira.
    """

    code: str
    name: str
    amount_format: str


#: The pages' languages, the default first. Turkish writes "1.234,56 TL" as Turkish banks,
#: iyzico and PayTR do (CLDR's own Turkish form is "₺1.234,56"); English writes the ISO
#: code, "TRY 1,234.56", CLDR's English symbol for the lira. Separators are CLDR's.
LANGUAGES: Final[dict[str, Language]] = {
    "tr": Language("tr", "Türkçe", "#,##0.00 'TL'"),
    "en": Language("en", "English", "¤¤ #,##0.00"),
}
DEFAULT: Final = "tr"
#: The cookie that keeps the switcher's choice (`choose`, rule 2).
COOKIE: Final = "workbench_lang"
_DOMAIN: Final = "messages"
_MAX_ACCEPT: Final = 1024


def from_accept_language(header: str | None) -> str | None:
    """The first language of an ``Accept-Language`` header the pages speak, by ``q``.

    ``q=0`` means "not this one"; a malformed ``q`` counts as 0. Ties keep the header's
    order (so ``en, tr`` is English).
    """
    if not header:
        return None
    ranked: list[tuple[float, int, str]] = []
    for position, item in enumerate(header[:_MAX_ACCEPT].split(",")):
        tag, _, params = item.strip().partition(";")
        quality = 1.0
        for param in params.split(";"):
            name, _, value = param.strip().partition("=")
            if name.strip().lower() == "q":
                try:
                    quality = float(value)
                except ValueError:
                    quality = 0.0
        primary = tag.strip().lower().split("-", 1)[0]
        if primary in LANGUAGES and 0.0 < quality <= 1.0:
            ranked.append((-quality, position, primary))
    return min(ranked)[2] if ranked else None


def choose(query: str | None, cookie: str | None, accept_language: str | None) -> str:
    """The page's language by the module's rules: query, cookie, ``Accept-Language``, Turkish."""
    for chosen in (query, cookie):
        if chosen is not None and chosen.lower() in LANGUAGES:
            return chosen.lower()
    return from_accept_language(accept_language) or DEFAULT


@cache
def translations(code: str) -> gettext.NullTranslations:
    """The language's catalogue, compiled from its ``.po`` file on first use.

    English is the language the messages are written in: it has no catalogue.
    Untranslated and fuzzy messages are left out (they show in English); the catalogue
    test keeps there being none.
    """
    if code not in LANGUAGES:
        raise ValueError(f"no hosted pages in {code!r}")
    po = resources.files(__package__).joinpath(f"locale/{code}/LC_MESSAGES/{_DOMAIN}.po")
    if not po.is_file():
        return gettext.NullTranslations()
    from babel.messages.mofile import write_mo  # the first page in this language only
    from babel.messages.pofile import read_po
    from babel.support import Translations

    with po.open("rb") as source:
        catalog = read_po(source, locale=code, domain=_DOMAIN)
    compiled = io.BytesIO()
    write_mo(compiled, catalog, use_fuzzy=False)
    compiled.seek(0)
    return Translations(compiled, domain=_DOMAIN)


def amount(kurus: int, code: str) -> str:
    """Integer kuruş as the language writes lira: ``1.234,56 TL``, ``TRY 1,234.56``."""
    if isinstance(kurus, bool) or not isinstance(kurus, int):
        raise TypeError("amounts are integer kuruş")
    from babel.numbers import format_currency

    lira = (Decimal(kurus) / 100).quantize(Decimal("0.01"))
    return format_currency(lira, "TRY", LANGUAGES[code].amount_format, locale=code)


def moment(when: datetime, code: str) -> str:
    """A date and time in UTC, in the language's long date and short time (CLDR)."""
    from babel.dates import format_date, format_time, get_datetime_format

    utc = when.astimezone(UTC) if when.tzinfo else when.replace(tzinfo=UTC)
    pattern = str(get_datetime_format("long", locale=code)).replace("'", "")
    time = format_time(utc, "short", tzinfo=UTC, locale=code)
    return pattern.replace("{0}", time).replace("{1}", format_date(utc, "long", locale=code))
