"""A resume's immediate charge and a charge-now: one charge when they meet, two when not.

The decision (docs/sandbox/decisions.md, Subscriptions): a charge-now sent while another
charge is pending (the resume's, not yet finished) joins it; one sent after that charge
was finished is a new request. The reconciler runs only where the test says.
"""

from __future__ import annotations

import httpx2

from tests.sandbox.subscriptions.api import charges, create, get, post
from tests.sandbox.subscriptions.clock import tick


def _paused_then_resumed(client: httpx2.Client) -> str:
    sub_id = str(create(client)["id"])
    assert post(client, sub_id, "pause").status_code == 200
    assert post(client, sub_id, "resume").status_code == 200
    return sub_id


def test_a_charge_now_before_the_resumes_charge_joins_it(client: httpx2.Client) -> None:
    sub_id = _paused_then_resumed(client)
    assert post(client, sub_id, "charge-now").status_code == 202
    assert get(client, sub_id)["status"] == "charging"
    tick(client)
    tick(client)
    after = get(client, sub_id)
    assert (after["status"], after["cycleNumber"]) == ("active", 1)
    assert [(c["cycleNumber"], c["status"]) for c in charges(client, sub_id)] == [(1, "captured")]


def test_a_charge_now_after_the_resumes_charge_is_a_second_charge(client: httpx2.Client) -> None:
    sub_id = _paused_then_resumed(client)
    tick(client)
    assert get(client, sub_id)["cycleNumber"] == 1
    assert post(client, sub_id, "charge-now").status_code == 202
    tick(client)
    tick(client)
    after = get(client, sub_id)
    assert (after["status"], after["cycleNumber"]) == ("active", 2)
    assert [c["status"] for c in charges(client, sub_id)] == ["captured", "captured"]
