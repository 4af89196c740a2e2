"""`answer_charge`: the card charge's answer, for its route (`payments.routes.charge_card`).

The charge runs under its Idempotency-Key in one write transaction
(`Database.atransact`) with a `ReadPlan` of its reads, declared here in the order the
transaction makes them and run through the plan (on PostgreSQL they travel together,
and a batch of charges shares its round trips). A key record the edge only guessed
(PostgreSQL: `Caller.guess`) is confirmed first in the same transaction
(`Caller.confirm`), its read the plan's first.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import sqlalchemy as sa

from workbench.sandbox import idempotency
from workbench.sandbox.payments import service
from workbench.sandbox.payments.models import ChargeRequest
from workbench.sandbox.replies import Reply
from workbench.sandbox.storage import ReadPlan

if TYPE_CHECKING:
    from workbench.sandbox.context import Caller
    from workbench.sandbox.storage import Database

__all__ = ["METHOD", "PATH", "answer_charge"]

METHOD = "POST"
PATH = "/v1/payments/card"


async def answer_charge(
    db: Database,
    caller: Caller,
    body: ChargeRequest,
    key: str | None,
    base_url: str,
    *,
    path: str = PATH,
) -> Reply:
    """Charge (or replay the key's first answer); the reply to send.

    Args:
        db: the sandbox database.
        caller: who is charging.
        body: the validated request body.
        key: the request's Idempotency-Key, if any.
        base_url: the address clients reach the sandbox at (for the ACS URL).
        path: the request's path as sent (part of the idempotency record's endpoint).

    Raises:
        ServiceError: the charge's refusal, or the key's (`idempotency.idempotent`).
        StaleKey: the caller's guessed key record is no longer the key's
            (`workbench.sandbox.keys`).
    """
    digest = service.fingerprint(body)  # here, not under the write lock
    plan = ReadPlan()
    confirm = caller.plan_confirm(plan)
    claim = idempotency.claim_read(plan, caller, METHOD, path, key)
    reads = service.ChargeReads(plan, caller, body)

    def transaction(conn: sa.Connection) -> Reply:
        caller.confirm(conn, confirm)
        return idempotency.idempotent(
            conn,
            caller,
            METHOD,
            path,
            key,
            lambda conn: service.charge(conn, caller, body, base_url, digest, reads),
            digest=digest,
            claim=claim,
        )

    return await idempotency.answer_keeping_refusals(
        db, caller, METHOD, path, key, transaction, digest=digest, plan=plan
    )
