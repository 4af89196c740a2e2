"""Links into the local sandbox's dashboard, as `workbench trigger` and `listen` print them."""

from __future__ import annotations

import pytest

from workbench.cli._dashboard_links import dashboard_link

BASE = "http://127.0.0.1:8080/"


@pytest.mark.parametrize(
    ("object_id", "page"),
    [
        ("pay_01a2", "payments/pay_01a2"),
        ("rfn_01a2", "refunds/rfn_01a2"),
        ("sub_01a2", "subscriptions/sub_01a2"),
        ("evt_01a2", "events/evt_01a2"),
        ("3f2b8c1e-9d4a-4b7e-8c2f-1a5d6e7f8091", "sessions/3f2b8c1e-9d4a-4b7e-8c2f-1a5d6e7f8091"),
    ],
)
def test_each_kind_links_to_its_page(object_id: str, page: str) -> None:
    assert dashboard_link(BASE, object_id) == f"http://127.0.0.1:8080/dashboard/{page}"


@pytest.mark.parametrize("object_id", ["cus_demo_ayse", "txn_42", "", "mrc_demo0001"])
def test_an_id_without_a_page_has_no_link(object_id: str) -> None:
    assert dashboard_link(BASE, object_id) is None
