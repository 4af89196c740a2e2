"""Money in integer kuruş, shown in lira: `Decimal` only, never float.

```pycon
>>> format_try(123456)
'1.234,56 TL'
>>> to_kurus("1.234,56")
123456
>>> split_installments(125050, 3)
(41684, 41683, 41683)
```
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation

__all__ = ["format_try", "kurus_to_lira", "split_installments", "to_kurus"]


def _require_int(amount: object) -> int:
    if isinstance(amount, bool) or not isinstance(amount, int):
        raise TypeError(f"amount must be an integer number of kuruş, not {type(amount).__name__}")
    return amount


def kurus_to_lira(amount: int) -> Decimal:
    """Integer kuruş to a `Decimal` lira amount with two places (``12345`` -> ``123.45``)."""
    return (Decimal(_require_int(amount)) / 100).quantize(Decimal("0.01"))


def format_try(amount: int, *, symbol: str = "TL") -> str:
    """Format kuruş the Turkish way: ``.`` groups thousands, ``,`` marks decimals.

    Args:
        amount: integer kuruş (may be negative).
        symbol: written after the number; ``""`` for none.
    """
    value = _require_int(amount)
    sign = "-" if value < 0 else ""
    lira, kurus = divmod(abs(value), 100)
    grouped = f"{lira:,}".replace(",", ".")
    text = f"{sign}{grouped},{kurus:02d}"
    return f"{text} {symbol}" if symbol else text


def to_kurus(lira: str | Decimal | int) -> int:
    """Parse a lira amount into integer kuruş, exactly.

    Accepts ``Decimal``, ``int`` (whole lira) or text in Turkish (``1.234,56``) or
    plain (``1234.56``) notation. Floats are refused: they cannot hold 0.1 exactly.

    Raises:
        TypeError: for a float or another type.
        ValueError: for text that is not an amount or has more than two decimals.
    """
    if isinstance(lira, (float, bool)):
        raise TypeError("lira amounts must be str, int or Decimal, never float")
    if isinstance(lira, int):
        return lira * 100
    if isinstance(lira, str):
        text = lira.strip().removesuffix("TL").removesuffix("₺").strip()
        if "," in text:
            text = text.replace(".", "").replace(",", ".")
        try:
            value = Decimal(text)
        except InvalidOperation:
            raise ValueError(f"not a lira amount: {lira!r}") from None
    elif isinstance(lira, Decimal):
        value = lira
    else:
        raise TypeError(f"cannot read a lira amount from {type(lira).__name__}")
    if not value.is_finite():
        raise ValueError(f"not a lira amount: {lira!r}")
    kurus = value * 100
    if kurus != kurus.to_integral_value():
        raise ValueError(f"{lira!r} has more than two decimal places")
    return int(kurus)


def split_installments(amount: int, count: int) -> tuple[int, ...]:
    """An amount in kuruş split into ``count`` installments that add up to it exactly.

    Every installment is ``amount // count``; the first also carries the remaining
    kuruş, ``amount % count`` (docs/sandbox/decisions.md, hosted pages, the row
    ``#installment-amounts``).

    Args:
        amount: integer kuruş, not negative.
        count: how many installments, at least 1.

    Raises:
        TypeError: for an amount or count that is not an integer.
        ValueError: for a negative amount or a count below 1.
    """
    total = _require_int(amount)
    if isinstance(count, bool) or not isinstance(count, int):
        raise TypeError(f"count must be an integer, not {type(count).__name__}")
    if total < 0:
        raise ValueError(f"cannot split a negative amount: {total}")
    if count < 1:
        raise ValueError(f"count must be at least 1, not {count}")
    each, remainder = divmod(total, count)
    return (each + remainder, *(each for _ in range(count - 1)))
