"""Every returned object has `.id`, and the guide's table of ids and amounts matches the models.

The table (``docs/reference/client/models.md``, "Ids and amounts") is read row by row:
each object's `.id` must read the field the row names, and its amount fields must be
exactly the model's kuruş fields, so the table cannot drift from the code.
"""

from __future__ import annotations

import json
import re
from typing import get_args

import pytest
from pydantic.fields import FieldInfo

from tests.client import samples
from tests.paths import ROOT
from workbench import models
from workbench.models._base import APIObject, Kurus

PAGE = ROOT / "docs" / "reference" / "client" / "models.md"

#: Results that stand for no one object, so no `.id`: lists and pages (their items have
#: one), the control routes' acknowledgements, an attempt numbered within its event.
WITHOUT_ID = {
    "APIObject",
    "CursorPage",
    "SubscriptionPage",
    "SubscriptionChargeList",
    "SandboxEventList",
    "MerchantList",
    "SandboxFixtures",
    "DeliveryAttempt",
    "AuthorizationLifetime",
    "BusinessTime",
    "FailNext",
    "Latency",
    "RateLimit",
    "ReconcilerPass",
    "ResetResult",
    "SettleResult",
    "WebhookTarget",
}


def _result_models() -> dict[str, type[APIObject]]:
    found = {}
    for name in models.__all__:
        value = getattr(models, name)
        if isinstance(value, type) and issubclass(value, APIObject):
            found[name] = value
    return found


def _is_kurus(field: FieldInfo) -> bool:
    if field.annotation is int and any(getattr(m, "strict", False) for m in field.metadata):
        return True
    return Kurus in get_args(field.annotation)


def _id_field(model: type[APIObject]) -> str:
    """The field `.id` reads, found by giving every field its own name as its value."""
    built = model.model_construct(**{name: name for name in model.model_fields})
    value = built.id  # type: ignore[attr-defined]
    assert value in model.model_fields, f"{model.__name__}.id read {value!r}"
    return str(value)


def _table() -> dict[str, tuple[str, list[str]]]:
    """The table's rows: ``| `Name` | `.id`: `field` ...<br>amounts: `a`, `b` |``."""
    text = PAGE.read_text(encoding="utf-8")
    section = text[text.index("## Ids and amounts") :]
    rows = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 2 or not cells[0].startswith("`"):
            continue
        id_part, amounts_part = cells[1].split("<br>")
        id_field = re.match(r"`\.id`: `(\w+)`", id_part)
        assert id_field, line
        if amounts_part == "no amount":
            amounts = []
        else:
            assert amounts_part.startswith("amounts: "), line
            amounts = re.findall(r"`(\w+)`", amounts_part)
        rows[cells[0].strip("`")] = (id_field[1], amounts)
    return rows


def test_every_returned_object_but_lists_and_acknowledgements_has_an_id() -> None:
    found = _result_models()
    assert set(found) >= WITHOUT_ID, sorted(WITHOUT_ID - set(found))
    missing = [n for n, m in found.items() if n not in WITHOUT_ID and not _has_id(m)]
    assert missing == []
    assert [n for n in WITHOUT_ID if _has_id(found[n])] == [], "listed as having no id"


def _has_id(model: type[APIObject]) -> bool:
    return "id" in model.model_fields or isinstance(getattr(model, "id", None), property)


def test_the_guide_table_lists_each_object_with_its_id_and_amount_fields() -> None:
    table = _table()
    found = _result_models()
    assert sorted(table) == sorted(set(found) - WITHOUT_ID)
    for name, (id_field, amounts) in table.items():
        model = found[name]
        assert _id_field(model) == id_field, name
        kurus = [n for n, f in model.model_fields.items() if _is_kurus(f)]
        assert amounts == kurus, name


@pytest.mark.parametrize(
    ("model", "body", "expected"),
    [
        (models.CardCharge, samples.CHARGE, samples.CHARGE["paymentId"]),
        (models.CaptureResult, samples.CAPTURE, samples.CAPTURE["id"]),
        (models.Payment, samples.PAYMENT, samples.PAYMENT["id"]),
        (models.VoidResult, samples.VOID, samples.VOID["id"]),
        (models.ThreeDSecureResult, samples.THREE_DS, samples.THREE_DS["id"]),
        (models.RefundResult, samples.REFUND, samples.REFUND["paymentId"]),
        (models.CheckoutSession, samples.SESSION, samples.SESSION["sessionId"]),
        (models.UpdateCardSession, samples.UPDATE_CARD, samples.UPDATE_CARD["sessionId"]),
        (models.PublicPaymentStatus, samples.PUBLIC_STATUS, samples.PUBLIC_STATUS["paymentId"]),
        (models.Subscription, samples.SUBSCRIPTION, samples.SUBSCRIPTION["id"]),
        (models.ChargeReceipt, samples.RECEIPT, samples.RECEIPT["subscriptionId"]),
        (models.PublicSubscription, samples.PUBLIC_SUB, samples.PUBLIC_SUB["publicHash"]),
        (models.CardToken, samples.CARD_TOKEN, samples.CARD_TOKEN["token"]),
        (models.ChallengeAnswer, samples.CHALLENGE, samples.CHALLENGE["paymentId"]),
    ],
    ids=lambda v: v.__name__ if isinstance(v, type) else None,
)
def test_id_is_the_same_value_as_the_spec_field(
    model: type[APIObject], body: dict[str, object], expected: str
) -> None:
    parsed = model.model_validate(body)
    assert parsed.id == expected  # type: ignore[attr-defined]
    # .id is an attribute, not a field: dumping gives back the wire's own names only.
    assert set(parsed.model_dump(by_alias=True, exclude_unset=True)) == set(body)


def test_the_readme_and_guide_teach_id_not_the_spec_field_names() -> None:
    pages = [ROOT / "README.md", *(ROOT / "docs").rglob("*.md"), *(ROOT / "docs").rglob("*.py")]
    spec_names = re.compile(r"\b\w+\.(payment_id|session_id|refund_id)\b")
    found = [
        f"{page.relative_to(ROOT)}: {match[0]}"
        for page in pages
        for match in spec_names.finditer(page.read_text(encoding="utf-8"))
    ]
    assert found == []


def test_the_notebooks_and_the_helpers_they_call_teach_id() -> None:
    """Code and markdown cells alike, and the package's modules a notebook runs (a reader
    opens them from a cell); a typed event's ``data`` keeps the payload's own names."""
    sources = {
        f"{path.relative_to(ROOT)} cell {cell.get('id')}": "".join(cell["source"])
        for path in sorted((ROOT / "notebooks").glob("*.ipynb"))
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]
    }
    for path in [
        *sorted((ROOT / "workbench" / "flows").glob("*.py")),
        *sorted((ROOT / "workbench" / "scenarios").glob("*.py")),
        ROOT / "workbench" / "tracking.py",
        ROOT / "workbench" / "triggers.py",
    ]:
        sources[str(path.relative_to(ROOT))] = path.read_text(encoding="utf-8")
    assert len(sources) > 100, "no notebook cells read"
    spec_names = re.compile(r"\b(?!data\.)\w+\.(payment_id|session_id|refund_id)\b")
    found = [
        f"{where}: {m[0]}" for where, text in sources.items() for m in spec_names.finditer(text)
    ]
    assert found == []
