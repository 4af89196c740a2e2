"""pandas views of results: one row per object, money also shown in lira."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import pandas as pd
from pydantic import BaseModel

from workbench.money import format_try

__all__ = ["MONEY_COLUMNS", "to_frame"]

#: Columns holding integer kuruş; each gets a ``<name>_try`` twin formatted as lira.
MONEY_COLUMNS = (
    "amount",
    "amount_minor",
    "commission",
    "net_amount",
    "refund_amount",
    "refundable_amount",
)


def _row(obj: BaseModel | Mapping[str, Any]) -> dict[str, Any]:
    if isinstance(obj, BaseModel):
        return obj.model_dump(mode="python")
    return dict(obj)


def _lira(value: Any) -> Any:
    if isinstance(value, int) and not isinstance(value, bool):
        return format_try(value)
    return None


def to_frame(
    objects: Iterable[BaseModel | Mapping[str, Any]], *, lira: bool = True
) -> pd.DataFrame:
    """Result models (or dicts) as a DataFrame, one row each, snake_case columns.

    Amounts stay integer kuruş (nullable ``Int64``); with ``lira=True`` each
    money column gets a ``<name>_try`` twin such as ``1.234,56 TL`` for display.
    Timestamps become timezone-aware UTC columns.
    """
    frame = pd.DataFrame([_row(o) for o in objects])
    for column in MONEY_COLUMNS:
        if column not in frame.columns:
            continue
        frame[column] = frame[column].astype("Int64")
        if lira:
            frame[f"{column}_try"] = [None if pd.isna(v) else _lira(int(v)) for v in frame[column]]
    return frame
