"""Events: recorded with the change that caused them, delivered as signed webhooks.

A webhook is a POST of the event JSON to the target (the session's ``callbackUrl``
or the store's webhook URL), signed with the request-signing scheme of
`workbench.signing` under the store's webhook secret: ``X-Timestamp`` and
``X-Signature`` over (timestamp, ``POST``, the target URL's path, SHA-256 of the
body). A non-2xx answer or a network error is retried on the merchant's business
clock after 10 s, 1 min, 5 min, 30 min; after `SandboxConfig.webhook_max_attempts`
attempts the event is marked ``failed``.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

import httpx
import sqlalchemy as sa

from workbench.sandbox import db as tables
from workbench.sandbox import prepared
from workbench.sandbox.clock import business_now, iso, wall_now
from workbench.sandbox.ids import new_id
from workbench.sandbox.replies import dumps
from workbench.signing import format_timestamp, sign_request
from workbench.spec import IdPrefix

if TYPE_CHECKING:
    from workbench.sandbox.runtime import Sandbox

__all__ = ["RETRY_DELAYS", "WebhookWork", "emit", "list_events"]

#: Delay before attempt 2, 3, 4, 5... (the last repeats).
RETRY_DELAYS = (10, 60, 300, 1800)

_E = tables.events
_INSERT = sa.insert(_E)
_WEBHOOK_URL = sa.select(tables.stores.c.webhook_url).where(
    tables.stores.c.id == sa.bindparam("f_store")
)


def emit(
    conn: sa.Connection,
    *,
    merchant_id: str,
    store_id: str,
    type: str,
    data: dict[str, Any],
    now: datetime,
    target_url: str | None = None,
    look_up_webhook: bool = True,
) -> str:
    """Record an event in the caller's transaction; returns its ``evt_`` id.

    ``target_url`` is where it goes; ``None``: the store's webhook, looked up, unless
    ``look_up_webhook`` is false (the caller read it already and there is none).
    """
    if target_url is None and look_up_webhook:
        target_url = prepared.scalar(conn, _WEBHOOK_URL, {"f_store": store_id})
    event_id = new_id(IdPrefix.EVENT)
    payload = {
        "id": event_id,
        "type": type,
        "createdAt": iso(now),
        "merchantId": merchant_id,
        "data": data,
    }
    prepared.execute(
        conn,
        _INSERT,
        {
            "id": event_id,
            "merchant_id": merchant_id,
            "store_id": store_id,
            "type": type,
            "payload": dumps(payload),
            "target_url": target_url,
            "delivery_state": "pending" if target_url else "no_endpoint",
            "attempts": 0,
            "next_attempt_at": now if target_url else None,
            "created_at": now,
        },
    )
    return event_id


def list_events(
    conn: sa.Connection, merchant_id: str, type: str | None = None
) -> list[dict[str, Any]]:
    """The merchant's events, oldest first, with their delivery state."""
    query = sa.select(_E).where(_E.c.merchant_id == merchant_id).order_by(_E.c.seq)
    if type:
        query = query.where(_E.c.type == type)
    items = []
    for row in conn.execute(query):
        items.append(
            {
                **json.loads(row.payload),
                "delivery": {
                    "state": row.delivery_state,
                    "url": row.target_url,
                    "attempts": row.attempts,
                    "nextAttemptAt": iso(row.next_attempt_at)
                    if row.delivery_state == "pending"
                    else None,
                    "deliveredAt": iso(row.delivered_at),
                    "lastError": row.last_error,
                },
            }
        )
    return items


class WebhookWork:
    """Reconciler work: deliver the events whose next attempt is due."""

    name = "webhooks"

    def next_due(self, conn: sa.Connection, merchant_id: str) -> datetime | None:
        """When the earliest pending delivery falls due."""
        return conn.execute(
            sa.select(sa.func.min(_E.c.next_attempt_at)).where(
                _E.c.merchant_id == merchant_id, _E.c.delivery_state == "pending"
            )
        ).scalar_one_or_none()

    def run(self, sandbox: Sandbox, merchant_id: str, now: datetime) -> int:
        """Attempt every due delivery once; returns how many were attempted."""
        with sandbox.db.write() as conn:
            rows = conn.execute(
                sa.select(
                    _E.c.id,
                    _E.c.payload,
                    _E.c.target_url,
                    _E.c.attempts,
                    tables.stores.c.webhook_secret,
                )
                .join(tables.stores, tables.stores.c.id == _E.c.store_id)
                .where(
                    _E.c.merchant_id == merchant_id,
                    _E.c.delivery_state == "pending",
                    _E.c.next_attempt_at <= now,
                )
                .order_by(_E.c.seq)
            ).all()
            # Lease the batch so a concurrent pass does not deliver it twice.
            for row in rows:
                conn.execute(
                    sa.update(_E)
                    .where(_E.c.id == row.id)
                    .values(next_attempt_at=now + timedelta(seconds=120))
                )
        for row in rows:
            status, error = self._post(
                sandbox, str(row.target_url), bytes(row.payload), str(row.webhook_secret)
            )
            self._record(sandbox, merchant_id, str(row.id), int(row.attempts) + 1, status, error)
        return len(rows)

    @staticmethod
    def _post(
        sandbox: Sandbox, url: str, body: bytes, secret: str
    ) -> tuple[int | None, str | None]:
        headers = sign_request(
            api_key="webhook",
            secret_key=secret,
            method="POST",
            url=url,
            body=body,
            timestamp=format_timestamp(wall_now()),
        )
        event = json.loads(body)
        try:
            response = sandbox.http.post(
                url,
                content=body,
                headers={
                    "Content-Type": "application/json",
                    "X-Timestamp": headers.timestamp,
                    "X-Signature": headers.signature,
                    "X-Event-Id": event["id"],
                    "X-Event-Type": event["type"],
                },
            )
        except (httpx.HTTPError, httpx.InvalidURL) as exc:
            # InvalidURL is not an HTTPError: a target the merchant typed wrong is a
            # failed delivery, never an error of the request that ran the reconciler.
            return None, f"{type(exc).__name__}"[:300]
        if 200 <= response.status_code < 300:
            return response.status_code, None
        return response.status_code, f"HTTP {response.status_code}"

    @staticmethod
    def _record(
        sandbox: Sandbox,
        merchant_id: str,
        event_id: str,
        attempt: int,
        status: int | None,
        error: str | None,
    ) -> None:
        with sandbox.db.write() as conn:
            now = business_now(conn, merchant_id)
            conn.execute(
                sa.insert(tables.event_deliveries).values(
                    event_id=event_id,
                    merchant_id=merchant_id,
                    attempt=attempt,
                    attempted_at=now,
                    status_code=status,
                    error=error,
                )
            )
            values: dict[str, Any] = {"attempts": attempt, "last_error": error}
            if error is None:
                values.update(delivery_state="delivered", delivered_at=now, next_attempt_at=None)
            elif attempt >= sandbox.config.webhook_max_attempts:
                values.update(delivery_state="failed", next_attempt_at=None)
            else:
                delay = RETRY_DELAYS[min(attempt - 1, len(RETRY_DELAYS) - 1)]
                values.update(next_attempt_at=now + timedelta(seconds=delay))
            conn.execute(sa.update(_E).where(_E.c.id == event_id).values(**values))
