"""The hosted pages' catalogues: every string the pages show has its translation.

The strings are extracted exactly as ``make translations`` extracts them (Babel, the
repository's ``babel.cfg``, keyword ``N_``), then compared with each language's ``.po``:
a string without a translation, one still marked fuzzy, a translation whose
placeholders differ from the English, or an entry no page uses any more fails.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from babel.messages.catalog import Catalog
from babel.messages.frontend import CommandLineInterface
from babel.messages.pofile import read_po

from tests.paths import ROOT
from workbench.sandbox.checkout import languages

LOCALES = ROOT / "workbench" / "sandbox" / "checkout" / "locale"
#: Languages with a catalogue: all but English, the language the messages are written in.
TRANSLATED = [code for code in languages.LANGUAGES if code != "en"]


def extract(into: Path) -> Catalog:
    """The pages' strings, extracted with the repository's babel.cfg (as ``make translations``)."""
    pot = into / "messages.pot"
    CommandLineInterface().run(
        ["pybabel", "-q", "extract", "-F", str(ROOT / "babel.cfg"), "-k", "N_",
         "--omit-header", "-o", str(pot), str(ROOT / "workbench" / "sandbox")]
    )  # fmt: skip
    with pot.open("rb") as source:
        return read_po(source)


def problems(template: Catalog, catalogue: Catalog) -> list[str]:
    """What is wrong with ``catalogue`` against the extracted ``template``, one line each."""
    found = []
    wanted = {message.id for message in template if message.id}
    for message in catalogue:
        if not message.id:
            continue
        if message.id not in wanted:
            found.append(f"no page uses it any more: {message.id!r}")
        elif not message.string:
            found.append(f"no translation: {message.id!r}")
        elif message.fuzzy:
            found.append(f"fuzzy (to review): {message.id!r}")
    found += [f"not in the catalogue: {mid!r}" for mid in sorted(wanted) if mid not in catalogue]
    for message, errors in catalogue.check():
        found += [f"{message.id!r}: {error}" for error in errors]
    return found


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Catalog:
    """The strings of every template and every ``N_()`` of the pages' code."""
    return extract(tmp_path_factory.mktemp("extract"))


def _catalogue(code: str) -> Catalog:
    with (LOCALES / code / "LC_MESSAGES" / "messages.po").open("rb") as source:
        return read_po(source, locale=code)


def test_extraction_finds_the_pages_strings(template: Catalog) -> None:
    ids = {message.id for message in template}
    # One of each source: a template's _(), a {% trans %} block, an N_() in code.
    assert {"Card number", "Expiry (MM/YY)", "Pay %(amount)s"} <= ids
    assert any(isinstance(i, str) and i.startswith("No hosted checkout page") for i in ids)
    assert {"Enter the card number.", "This checkout has expired", "Outcome"} <= ids
    assert len(ids) > 80


@pytest.mark.parametrize("code", TRANSLATED)
def test_every_string_has_a_translation(template: Catalog, code: str) -> None:
    found = problems(template, _catalogue(code))
    assert not found, "\n".join(found) + "\n(make translations, then translate the .po)"


def test_a_missing_fuzzy_or_mismatched_translation_is_reported(template: Catalog) -> None:
    doctored = _catalogue("tr")
    doctored["Card number"].string = ""
    doctored["Enter the card number."].flags.add("fuzzy")
    doctored["Pay %(amount)s"].string = "%(tutar)s Öde"
    doctored.add("A string no page shows", "Hiçbir sayfada olmayan")
    del doctored["Checkout"]
    found = "\n".join(problems(template, doctored))
    assert "no translation: 'Card number'" in found
    assert "fuzzy (to review): 'Enter the card number.'" in found
    assert "'Pay %(amount)s': " in found
    assert "no page uses it any more: 'A string no page shows'" in found
    assert "not in the catalogue: 'Checkout'" in found


def test_turkish_uses_the_words_of_turkish_banks() -> None:
    tr = languages.translations("tr")
    assert tr.gettext("Card number") == "Kart numarası"
    assert tr.gettext("Expiry (MM/YY)") == "Son kullanma tarihi (AA/YY)"
    assert tr.gettext("Security code (CVC)").startswith("Güvenlik kodu")
    assert tr.gettext("Name on the card") == "Kart üzerindeki isim"
    assert tr.gettext("Pay %(amount)s") == "%(amount)s Öde"
    assert tr.gettext("3-D Secure verification") == "3D Secure doğrulaması"
