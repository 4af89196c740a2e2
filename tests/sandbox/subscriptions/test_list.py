"""The keyset-paginated list: every item exactly once, every filter, merchant-bound cursors."""

from __future__ import annotations

import base64
import threading
from datetime import timedelta
from typing import Any

import httpx2
import pytest

from tests.sandbox.clients import signed_client
from tests.sandbox.envelope import assert_envelope
from tests.sandbox.subscriptions.api import AYSE, MEHMET, ZEYNEP, create, post, sub_body
from tests.sandbox.subscriptions.clock import advance, parse
from workbench.sandbox import DEMO_STORE_ID, SandboxServer
from workbench.spec import limits


def walk(client: httpx2.Client, limit: int, **filters: Any) -> list[dict[str, Any]]:
    """Every item of the listing, following nextCursor to the end."""
    items: list[dict[str, Any]] = []
    params: dict[str, Any] = {"limit": limit, **filters}
    for _ in range(1_000):
        response = client.get("/v1/subscriptions", params=params)
        assert response.status_code == 200, response.text
        page = response.json()
        assert len(page["items"]) <= limit
        items.extend(page["items"])
        if page["nextCursor"] is None:
            return items
        params = {**params, "cursor": page["nextCursor"]}
    raise AssertionError("the cursor never ended")


@pytest.fixture
def population(client: httpx2.Client) -> dict[str, dict[str, Any]]:
    """30 subscriptions over three customers, three statuses, and two creation days."""
    made: dict[str, dict[str, Any]] = {}
    for n in range(30):
        if n == 15:
            advance(client, 2 * 86_400)
        sub = create(client, (AYSE, MEHMET, ZEYNEP)[n % 3], amountMinor=1_000 + n)
        if n % 5 == 0:
            sub["status"] = post(client, sub["id"], "pause").json()["status"]
        elif n % 7 == 0:
            cancel = post(client, sub["id"], "cancel", {"atPeriodEnd": False})
            sub["status"] = cancel.json()["status"]
        made[sub["id"]] = sub
    return made


def matches(sub: dict[str, Any], filters: dict[str, str]) -> bool:
    if "storeId" in filters and sub["storeId"] != filters["storeId"]:
        return False
    if "customerId" in filters and sub["customerId"] != filters["customerId"]:
        return False
    if "status" in filters and sub["status"] != filters["status"]:
        return False
    if "from" in filters and sub["createdAt"] < filters["from"]:
        return False
    return not ("to" in filters and sub["createdAt"] >= filters["to"])


def filter_sets(made: dict[str, dict[str, Any]]) -> list[dict[str, str]]:
    stamps = sorted(s["createdAt"] for s in made.values())
    middle = stamps[15]  # the first subscription of the second day
    return [
        {},
        {"storeId": DEMO_STORE_ID},
        {"customerId": MEHMET},
        {"status": "paused"},
        {"status": "active", "customerId": AYSE},
        {"from": middle},
        {"to": middle},
        {"from": stamps[0], "to": middle, "status": "active"},
    ]


def test_every_item_exactly_once_under_concurrent_inserts_with_every_filter(
    server: SandboxServer, client: httpx2.Client, population: dict[str, dict[str, Any]]
) -> None:
    stop = threading.Event()
    inserted: list[str] = []

    def insert_while_listing() -> None:
        with signed_client(server.base_url) as writer:
            while not stop.wait(0.02) and len(inserted) < 40:
                response = writer.post("/v1/subscriptions", json=sub_body(AYSE))
                assert response.status_code == 201
                inserted.append(response.json()["id"])

    thread = threading.Thread(target=insert_while_listing)
    thread.start()
    # A listing may see an insert before the writer thread has read its answer, so what
    # was added is checked once the writer has stopped.
    added: set[str] = set()
    try:
        for index, filters in enumerate(filter_sets(population)):
            for limit in (1, 4) if index == 0 else (4,):
                seen = walk(client, limit, **filters)
                ids = [s["id"] for s in seen]
                assert len(ids) == len(set(ids)), f"an item came twice with {filters}"
                expected = {i for i, s in population.items() if matches(s, filters)}
                assert expected <= set(ids), f"an item was missed with {filters}"
                added |= set(ids) - expected
                for item in seen:
                    full = population.get(item["id"])
                    if full is not None:
                        assert matches(full, filters)
    finally:
        stop.set()
        thread.join()
    assert inserted, "the concurrent writer inserted nothing"
    assert added <= set(inserted), "only concurrent inserts may be added"


def test_items_are_the_spec_subset_and_pages_default_to_20(
    client: httpx2.Client, population: dict[str, dict[str, Any]]
) -> None:
    page = client.get("/v1/subscriptions").json()
    assert set(page) == {"items", "nextCursor"}
    assert len(page["items"]) == limits.SUBSCRIPTION_PAGE_DEFAULT
    assert set(page["items"][0]) == {
        "id",
        "storeId",
        "status",
        "amountMinor",
        "currency",
        "intervalCount",
        "intervalUnit",
        "nextChargeAt",
        "createdAt",
    }
    big = client.get("/v1/subscriptions", params={"limit": limits.SUBSCRIPTION_PAGE_MAX}).json()
    assert len(big["items"]) == 30
    assert big["nextCursor"] is None


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"limit": 0}, "limit"),
        ({"limit": limits.SUBSCRIPTION_PAGE_MAX + 1}, "limit"),
        ({"limit": "ten"}, "limit"),
        ({"status": "sleeping"}, "status"),
        ({"from": "2027-01-01"}, "from"),
        ({"to": "2027-01-01T00:00:00+03:00"}, "to"),
        ({"from": "2027-02-30T00:00:00Z"}, "from"),
        ({"cursor": "garbage"}, "cursor"),
    ],
)
def test_bad_list_parameters_are_400_naming_the_field(
    client: httpx2.Client, params: dict[str, Any], field: str
) -> None:
    body = assert_envelope(client.get("/v1/subscriptions", params=params), 400, "SVC-VAL-4001")
    assert field in body["message"]


def test_a_cursor_from_one_merchant_is_useless_to_another(
    client: httpx2.Client, other_client: httpx2.Client, population: dict[str, dict[str, Any]]
) -> None:
    create(other_client, "cus_other_can", storeId="sto_other0001")
    cursor = client.get("/v1/subscriptions", params={"limit": 2}).json()["nextCursor"]
    assert cursor is not None
    stolen = other_client.get("/v1/subscriptions", params={"limit": 2, "cursor": cursor})
    assert_envelope(stolen, 400, "SVC-VAL-4001")
    # Nor does it continue under other filters, nor after an edit.
    refiltered = client.get(
        "/v1/subscriptions", params={"limit": 2, "cursor": cursor, "status": "active"}
    )
    assert_envelope(refiltered, 400, "SVC-VAL-4001")
    head, _, tail = cursor.partition(".")
    # Move the position on by one, as a forger would (editing one base64 character may
    # leave the decoded bytes unchanged).
    position = int(base64.urlsafe_b64decode(head + "=" * (-len(head) % 4)))
    moved = base64.urlsafe_b64encode(str(position + 1).encode()).rstrip(b"=").decode()
    forged = client.get("/v1/subscriptions", params={"limit": 2, "cursor": f"{moved}.{tail}"})
    assert_envelope(forged, 400, "SVC-VAL-4001")
    # The other merchant's own listing shows only its own subscriptions.
    theirs = walk(other_client, 5)
    assert len(theirs) == 1
    assert theirs[0]["id"] not in population


def test_from_is_inclusive_and_to_exclusive(client: httpx2.Client) -> None:
    first = create(client)
    advance(client, 3_600)
    second = create(client)
    at = second["createdAt"]
    assert [s["id"] for s in walk(client, 5, **{"from": at})] == [second["id"]]
    assert [s["id"] for s in walk(client, 5, to=at)] == [first["id"]]
    later = (parse(at) + timedelta(seconds=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    assert [s["id"] for s in walk(client, 5, to=later)] == [first["id"], second["id"]]
