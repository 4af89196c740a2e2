"""The request log on ``workbench sandbox --workers 2``: every worker's page shows every
worker's requests (the log is in the database), on SQLite and PostgreSQL.

Requests on connections of their own land on either worker, and each worker's writer
writes its own; the list is then read on fresh connections too, which land on either
worker, until every request is listed (each writer writes within its interval: the test
waits for that condition, up to a guard of a minute, never for a fixed time).
"""

from __future__ import annotations

import re
import time

import httpx2

from tests.sandbox.bodies import charge_body
from tests.sandbox.clients import signed_client
from tests.sandbox.dashboard.pages import ENGLISH, new_merchant, sign_in

#: The module's requests never need background passes.
RECONCILER = False
#: Fresh connections enough that both workers serve some (as the merchants' test).
CONNECTIONS = 12
_LISTED = re.compile(r'href="/dashboard/requests/([0-9a-f-]{36})"')


def test_every_worker_lists_every_workers_requests(workers: tuple[str, str, int]) -> None:
    base, _, _ = workers
    merchant = new_merchant(base, "two workers' log")
    made = []
    for _ in range(CONNECTIONS):
        with signed_client(base, merchant.api_key, merchant.secret_key) as api:
            answer = api.post("/v1/payments/card", json=charge_body())
        assert answer.status_code == 201, answer.text
        made.append(answer.headers["x-request-id"])
    with httpx2.Client(base_url=base, headers=ENGLISH) as browser:
        assert sign_in(browser, merchant.api_key, merchant.secret_key).status_code == 303
        cookies = dict(browser.cookies)
    seen: list[list[str]] = []
    deadline = time.monotonic() + 60  # a guard against a hang, not a measured time
    while len(seen) < CONNECTIONS and time.monotonic() < deadline:
        with httpx2.Client(base_url=base, headers=ENGLISH, cookies=cookies) as fresh:
            listed = _LISTED.findall(fresh.get("/dashboard/requests").text)
        if set(made) <= set(listed):
            seen.append(listed)
        else:
            time.sleep(0.1)  # a writer's batch is on its way
    assert len(seen) == CONNECTIONS, "some worker never listed every request"
    # Newest arrival first, whichever worker served it and whenever its writer wrote.
    assert all(listed == made[::-1] for listed in seen)
