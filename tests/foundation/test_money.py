"""Money is integer kuruş; lira formatting is Decimal-exact."""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from workbench.money import format_try, kurus_to_lira, split_installments, to_kurus
from workbench.spec import limits


@pytest.mark.parametrize(
    ("kurus", "text"),
    [
        (123456, "1.234,56 TL"),
        (100, "1,00 TL"),
        (5, "0,05 TL"),
        (-250, "-2,50 TL"),
        (100000000, "1.000.000,00 TL"),
        (0, "0,00 TL"),
    ],
)
def test_format_try(kurus: int, text: str) -> None:
    assert format_try(kurus) == text


def test_format_rejects_float_and_bool() -> None:
    with pytest.raises(TypeError):
        format_try(12.5)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        format_try(True)


@pytest.mark.parametrize(
    ("text", "kurus"),
    [
        ("1.234,56", 123456),
        ("1234.56", 123456),
        ("0,1", 10),
        ("150 TL", 15000),
        (Decimal("2.5"), 250),
        (3, 300),
    ],
)
def test_to_kurus(text: str | Decimal | int, kurus: int) -> None:
    assert to_kurus(text) == kurus


@pytest.mark.parametrize("bad", ["abc", "1,234", "0.001", "NaN"])
def test_to_kurus_rejects(bad: str) -> None:
    with pytest.raises(ValueError, match=r"lira amount|decimal places"):
        to_kurus(bad)


def test_to_kurus_refuses_float() -> None:
    with pytest.raises(TypeError):
        to_kurus(0.1)  # type: ignore[arg-type]


@given(st.integers(min_value=-(10**12), max_value=10**12))
def test_round_trip(kurus: int) -> None:
    assert to_kurus(format_try(kurus, symbol="")) == kurus
    assert to_kurus(kurus_to_lira(kurus)) == kurus


@given(
    st.integers(min_value=limits.MIN_AMOUNT, max_value=10**12),
    st.integers(min_value=limits.INSTALLMENTS_MIN, max_value=limits.INSTALLMENTS_MAX),
)
def test_installments_add_up_and_only_the_first_carries_the_remainder(
    amount: int, count: int
) -> None:
    parts = split_installments(amount, count)
    assert len(parts) == count
    assert sum(parts) == amount
    first, *rest = parts
    assert set(rest) <= {amount // count}
    assert first - amount // count == amount % count


def test_installments_of_the_issues_amount() -> None:
    assert split_installments(125_050, 3) == (41_684, 41_683, 41_683)
    assert split_installments(125_050, 12) == (10_430, *[10_420] * 11)
    assert split_installments(125_000, 4) == (31_250,) * 4
    assert split_installments(100, 1) == (100,)


@pytest.mark.parametrize(("amount", "count"), [(-1, 2), (100, 0), (100, -3)])
def test_installments_refuse_a_negative_amount_or_no_installment(amount: int, count: int) -> None:
    with pytest.raises(ValueError, match=r"negative amount|at least 1"):
        split_installments(amount, count)
