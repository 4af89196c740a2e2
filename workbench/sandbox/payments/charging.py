"""`answer_charge`: the card charge's one answer, for its route and for `ChargeShortcut`.

Both paths validate the same `ChargeRequest` and come here: the charge runs under its
Idempotency-Key in one write transaction (`Database.atransact`) with a `ReadPlan` of
its reads, declared here in the order the transaction makes them and run through the
plan (on PostgreSQL they travel together, and a batch of charges shares its round
trips). A key record the authentication middleware only guessed (PostgreSQL,
`auth.guessed_key`) is confirmed in the same transaction.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import sqlalchemy as sa

from workbench.sandbox import auth, idempotency
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
    guess: auth.KeyRecord | None = None,
) -> Reply:
    """Charge (or replay the key's first answer); the reply to send.

    Args:
        db: the sandbox database.
        caller: who is charging.
        body: the validated request body.
        key: the request's Idempotency-Key, if any.
        base_url: the address clients reach the sandbox at (for the ACS URL).
        path: the request's path as sent (part of the idempotency record's endpoint).
        guess: a key record to confirm in the transaction (`auth.confirm_key`).

    Raises:
        ServiceError: the charge's refusal, or the key's (`idempotency.idempotent`).
        auth.StaleKey: ``guess`` is no longer the key's record.
    """
    digest = service.fingerprint(body)  # here, not under the write lock
    plan = ReadPlan()
    if guess is not None:
        statement, params = auth.key_read(guess.api_key)
        assert isinstance(statement, sa.Select)
        plan.read(statement, params)  # run by `auth.confirm_key`, matched on what it reads
    claim = idempotency.claim_read(plan, caller, METHOD, path, key)
    reads = service.ChargeReads(plan, caller, body)

    def transaction(conn: sa.Connection) -> Reply:
        if guess is not None:
            auth.confirm_key(conn, guess)
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

    return await db.atransact(transaction, plan=plan)
