"""The TR QR payload: EMVCo merchant-presented mode, as TR Karekod uses it.

Shared by both halves, like `workbench.signing`: the sandbox writes payloads with
`build_payload`, the flows and tests read them with `parse_tlv` and `verify_crc`.

A payload is a run of tag-length-value fields: a two-digit tag, a two-digit length
and the value; some values (tags 26 and 62 here) are themselves TLV runs. The last
field is tag 63, a CRC-16/CCITT-FALSE (polynomial 0x1021, initial value 0xFFFF) over
everything before its value, including the text ``6304``, written as four uppercase
hexadecimal digits.

Fields written by the sandbox (see docs/sandbox/decisions.md, "Hosted checkout"):

| tag | value |
|---|---|
| 00 | ``01`` payload format indicator |
| 01 | ``12`` dynamic code (one payment) |
| 26 | merchant account: 00 ``tr.workbench.sandbox``, 01 merchant id, 02 session id |
| 52 | merchant category code ``5999`` |
| 53 | ``949`` (Turkish lira, ISO 4217 numeric) |
| 54 | amount in lira with a dot and two decimals (``349.00``) |
| 58 | ``TR`` |
| 59 | merchant name (at most 25 characters) |
| 60 | city ``ISTANBUL`` |
| 62 | additional data: 05 reference label (the transactionId, at most 25 characters) |
| 63 | CRC |
"""

from __future__ import annotations

import binascii
import unicodedata
from dataclasses import dataclass

__all__ = [
    "CURRENCY_TRY",
    "GUID",
    "QrFields",
    "build_payload",
    "crc16_ccitt_false",
    "parse_tlv",
    "verify_crc",
]

#: ISO 4217 numeric code of the Turkish lira.
CURRENCY_TRY = "949"
#: Globally unique identifier of the sandbox's merchant account template (tag 26/00).
GUID = "tr.workbench.sandbox"


def crc16_ccitt_false(data: bytes) -> int:
    """CRC-16/CCITT-FALSE: polynomial 0x1021, initial 0xFFFF, no reflection, no final XOR.

    ```pycon
    >>> hex(crc16_ccitt_false(b"123456789"))
    '0x29b1'
    ```
    """
    # binascii's CRC-CCITT is this polynomial, unreflected; starting at 0xFFFF makes it FALSE.
    return binascii.crc_hqx(data, 0xFFFF)


def _field(tag: str, value: str) -> str:
    if len(value) > 99:
        raise ValueError(f"tag {tag}: value longer than 99 characters")
    return f"{tag}{len(value):02d}{value}"


#: Letters that lose their mark but not their letter in ASCII (NFKD leaves these whole).
_UNMARKED = str.maketrans({"ı": "i", "İ": "I", "ø": "o", "Ø": "O", "ß": "ss"})


def _ascii(text: str, limit: int) -> str:
    """Printable ASCII only (a bank app reads no other), cut to ``limit`` characters.

    Accented letters keep their base letter (``"ord-ş-1"`` gives ``"ord-s-1"``,
    ``"Işık"`` gives ``"Isik"``); anything else outside ASCII becomes ``?``.
    """
    plain = unicodedata.normalize("NFKD", text.translate(_UNMARKED))
    plain = "".join(ch for ch in plain if not unicodedata.combining(ch))
    cleaned = "".join(ch if " " <= ch <= "~" else "?" for ch in plain)
    return cleaned[:limit] or "-"


@dataclass(frozen=True, slots=True)
class QrFields:
    """What a TR QR payload carries for one checkout session."""

    merchant_id: str
    merchant_name: str
    session_id: str
    amount: int
    reference: str
    city: str = "ISTANBUL"


def build_payload(fields: QrFields) -> str:
    """The payload text for ``fields``, ending with its CRC (tag 63)."""
    if fields.amount <= 0:
        raise ValueError("a TR QR payment needs a positive amount")
    lira, kurus = divmod(fields.amount, 100)
    if len(f"{lira}.{kurus:02d}") > 13:
        raise ValueError("the amount does not fit tag 54 (13 characters)")
    account = (
        _field("00", GUID)
        + _field("01", _ascii(fields.merchant_id, 40))
        + _field("02", fields.session_id)
    )
    body = (
        _field("00", "01")
        + _field("01", "12")
        + _field("26", account)
        + _field("52", "5999")
        + _field("53", CURRENCY_TRY)
        + _field("54", f"{lira}.{kurus:02d}")
        + _field("58", "TR")
        + _field("59", _ascii(fields.merchant_name, 25))
        + _field("60", _ascii(fields.city, 15))
        + _field("62", _field("05", _ascii(fields.reference, 25)))
        + "6304"
    )
    return f"{body}{crc16_ccitt_false(body.encode('ascii')):04X}"


def parse_tlv(text: str) -> dict[str, str]:
    """Split a TLV run into ``{tag: value}`` (one level).

    Raises:
        ValueError: for a truncated field or a tag that is not two digits.
    """
    fields: dict[str, str] = {}
    index = 0
    while index < len(text):
        tag, length = text[index : index + 2], text[index + 2 : index + 4]
        if len(tag) < 2 or not tag.isdigit() or len(length) < 2 or not length.isdigit():
            raise ValueError(f"malformed field at offset {index}")
        end = index + 4 + int(length)
        if end > len(text):
            raise ValueError(f"tag {tag}: value runs past the end")
        fields[tag] = text[index + 4 : end]
        index = end
    return fields


def verify_crc(payload: str) -> bool:
    """Whether the payload ends with tag 63 holding the right CRC of what precedes it."""
    if len(payload) < 8 or payload[-8:-4] != "6304":
        return False
    expected = f"{crc16_ccitt_false(payload[:-4].encode('ascii')):04X}"
    return payload[-4:] == expected
