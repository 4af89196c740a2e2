"""Idempotency: claim, replay, conflict; keyed on (API key, method + path, Idempotency-Key).

"The same payload" is decided by `fingerprint`, the one comparison the sandbox uses
for an Idempotency-Key, for the ``transactionId`` fences of the charge and the session,
and for the buyer portal's keys: the validated request's meaning
(field values, defaults applied), not its bytes, so re-ordered JSON keys or other
whitespace are the same payload. The buyer portal's routes are keyed on (public hash,
endpoint, key), through a `Caller` whose ``api_key`` is ``public <sha256 of the hash>``.

1. No record: the work's own writes and the record holding its `Reply` are written
   in *one* transaction, so a crash leaves either nothing or both, and a concurrent
   duplicate waits for that transaction (SQLite's write lock; on PostgreSQL the
   unique index, whose violation rolls the duplicate back to be run again) and then
   finds the finished record.
2. Same key, same body hash, finished: the stored status, body and X-Request-Id are
   returned verbatim. A *provisional* answer (a 202 refund) is not final: the
   object's current state is reported (by the route's ``refresh``), and its first
   final answer is stored.
3. Same key, another body: SVC-GW-2001. A record still ``pending`` (only a sandbox
   of an earlier version wrote one before its answer): SVC-GW-2002 (retryable) until
   its claim lapses, then it is taken over.
4. A refusal given by the service's rules (`kept`: a state conflict such as a refund
   of an authorized payment, an amount over refundableAmount, a session no longer
   active; every ``SVC-PAY-``, ``SVC-SES-`` and ``SVC-SUB-`` code, unless it asks to be
   retried with ``Retry-After``) is an answer like a
   decline: the work's transaction rolls back, then the refusal is recorded under the
   key (`keep_refusal`) and replayed verbatim, as the spec says of every response. A
   refusal given before the rules applied (authentication, a malformed or invalid
   request, a missing object, a rate limit, a server error) is not recorded, so the
   caller may fix the request and retry with the same key: Stripe's rule too.

5. An answer that carries a bearer (`Reply.carries_bearer`: a subscription's
   ``publicHash``) is stored sealed (`workbench.sandbox.sealing`), bound to its record,
   and opened to be replayed; one sealed under another key is not replayed
   (SVC-GW-2001, saying why).

Work that makes transactions of its own (the sandbox's control routes: a clock advance
runs the reconciler, step by step) cannot run inside the record's transaction: the
door's claimed mode (`workbench.sandbox.routing.IdempotentPost.claimed`) writes the
claim as ``pending`` first (`claim_pending`), runs the work, then stores its answer
(`settle_claim`); a duplicate meanwhile gets SVC-GW-2002 (retryable); a refusal by the
rules is stored as its answer, any other `ServiceError` deletes the claim. What the work is to
reach (its *plan*: an advance's target time) is fixed when the key is first claimed and
stored on the pending record, so the request replayed after a crash, which takes the
claim over once it lapses (`CLAIM_SECONDS`), finishes the same work instead of starting
it again from where the crash left it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

import sqlalchemy as sa
from pydantic import BaseModel

from workbench.sandbox import tables
from workbench.sandbox.clock import wall_now
from workbench.sandbox.context import Caller
from workbench.sandbox.errors import ServiceError
from workbench.sandbox.keys import Stale
from workbench.sandbox.replies import Reply, error_reply
from workbench.sandbox.sealing import Sealer, is_sealed
from workbench.sandbox.storage import AnyRow, PlannedRead, ReadPlan, insert_unread
from workbench.spec import is_uuid4, limits

if TYPE_CHECKING:
    from workbench.sandbox.storage import Database

__all__ = [
    "CLAIM_SECONDS",
    "IdempotencyPurgeWork",
    "Plan",
    "Refresh",
    "Work",
    "check_key",
    "claim_pending",
    "claim_read",
    "fingerprint",
    "idempotent",
    "keep_refusal",
    "kept",
    "settle_claim",
]

Work = Callable[[sa.Connection], Reply]
#: Rebuilds a provisional reply from its object's current state, given the object's id.
Refresh = Callable[[sa.Connection, str], Reply]

#: Fixes, in the claim's transaction, what claimed work is to reach (stored bytes).
Plan = Callable[[sa.Connection], bytes]

#: A claim older than this whose request never finished (a crash) may be taken over. No
#: process can tell a claim whose request died from one still running on another worker
#: or host, so a replay waits this long: longer than a long clock advance takes.
CLAIM_SECONDS = 60

_T = tables.idempotency_records
# Built once: SQLAlchemy then skips rebuilding and re-keying them on every request.
_FIND = (
    sa.select(_T)
    .where(
        _T.c.api_key == sa.bindparam("f_api_key"),
        _T.c.endpoint == sa.bindparam("f_endpoint"),
        _T.c.key == sa.bindparam("f_key"),
    )
    .with_for_update()
)
_INSERT = sa.insert(_T)
_DELETE = sa.delete(_T).where(_T.c.id == sa.bindparam("f_id"))
_STORE = (
    sa.update(_T)
    .where(_T.c.id == sa.bindparam("f_id"))
    .values(
        state="done",
        status_code=sa.bindparam("f_status"),
        body=sa.bindparam("f_body"),
        request_id=sa.bindparam("f_request_id"),
        provisional_kind=sa.bindparam("f_kind"),
        provisional_id=sa.bindparam("f_ident"),
    )
)


#: ``json.dumps(..., sort_keys=True, separators=(",", ":"))``, its encoder made once.
_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"))


def fingerprint(model: BaseModel | None) -> str:
    """A hash of a request's meaning: its validated field values, defaults applied.

    Key order, whitespace and a default written out or left implicit do not change it;
    any value does. ``None`` (no body) hashes like an empty object.
    """
    values = {} if model is None else model.model_dump(mode="json")
    canonical = _CANONICAL.encode(values)
    return hashlib.sha256(canonical.encode()).hexdigest()


#: The families of codes the service's rules answer with (a state or amount refusal):
#: kept under the key. ``SVC-GW-`` (authentication, malformed, not found, rate limit,
#: server errors, the key's own conflicts) and ``SVC-VAL-`` (an invalid request) are not.
_RULE_FAMILIES = ("SVC-PAY-", "SVC-SES-", "SVC-SUB-")


def kept(refusal: ServiceError) -> bool:
    """Whether ``refusal`` is the service's rules' answer, recorded under the key.

    One that asks to be sent again (``Retry-After``: a cancel while a charge is running)
    is not final, and is not kept: its retry under the same key is answered afresh.
    """
    return refusal.code.startswith(_RULE_FAMILIES) and "Retry-After" not in refusal.headers


def _find_params(caller: Caller, endpoint: str, key: str) -> dict[str, str]:
    return {"f_api_key": caller.api_key, "f_endpoint": endpoint, "f_key": key}


def _find(conn: sa.Connection, caller: Caller, endpoint: str, key: str) -> AnyRow | None:
    return conn.execute(_FIND, _find_params(caller, endpoint, key)).first()


def claim_read(
    plan: ReadPlan, caller: Caller, method: str, path: str, key: str | None
) -> PlannedRead | None:
    """Declare on ``plan`` the read `idempotent` starts with (none without a valid key);
    pass it to `idempotent` as ``claim``."""
    if key is None or not is_uuid4(key):
        return None
    return plan.read(_FIND, _find_params(caller, f"{method} {path}", key))


def _context(api_key: str, endpoint: str, key: str) -> bytes:
    """What a sealed body is bound to: its record's (API key, endpoint, key)."""
    return f"{api_key}\n{endpoint}\n{key}".encode()


def _stored_body(reply: Reply, sealer: Sealer | None, context: bytes) -> bytes:
    if not reply.carries_bearer:
        return reply.body
    if sealer is None:
        raise RuntimeError("an answer that carries a bearer is stored only sealed")
    return sealer.seal(reply.body, context)


def _replayed_body(row: AnyRow, sealer: Sealer | None) -> bytes:
    body = bytes(row.body)
    if not is_sealed(body):
        return body
    opened = (
        None if sealer is None else sealer.open(body, _context(row.api_key, row.endpoint, row.key))
    )
    if opened is None:
        raise ServiceError(
            "SVC-GW-2001",
            "the answer stored for this Idempotency-Key was sealed under another replay "
            "key (the sandbox's replay key changed) and cannot be replayed",
        )
    return opened


def _claim(
    conn: sa.Connection,
    caller: Caller,
    endpoint: str,
    key: str,
    digest: str,
    refresh: Refresh | None,
    sealer: Sealer | None = None,
    claim: PlannedRead | None = None,
) -> Reply | tuple[str, None] | tuple[None, int | None]:
    """A `Reply` to send, ``(code, None)`` on conflict, or ``(None, id)`` to run the work:
    the id of a stale record taken over, ``None`` for a key seen for the first time.
    ``claim``: the record's read, when the caller planned it (`claim_read`)."""
    now = wall_now()
    row = claim.first(conn) if claim is not None else _find(conn, caller, endpoint, key)
    if row is not None and row.expires_at <= now:
        conn.execute(_DELETE, {"f_id": row.id})
        row = None
    if row is None:
        # The record is written with the answer, in this transaction: a concurrent
        # duplicate meets the unique index, is rolled back and retried, and replays.
        return None, None
    if row.fingerprint != digest:
        return "SVC-GW-2001", None
    if row.state == "pending":
        if row.locked_until > now:
            return "SVC-GW-2002", None
        conn.execute(
            sa.update(_T)
            .where(_T.c.id == row.id)
            .values(locked_until=now + timedelta(seconds=CLAIM_SECONDS))
        )
        return None, int(row.id)
    if row.provisional_kind:
        return _refresh(conn, caller, row, refresh)
    reply = Reply(int(row.status_code), _replayed_body(row, sealer))
    reply.headers["X-Request-Id"] = str(row.request_id)
    reply.headers["Idempotent-Replayed"] = "true"
    return reply


def _refresh(conn: sa.Connection, caller: Caller, row: AnyRow, refresh: Refresh | None) -> Reply:
    if refresh is None:  # only a route that answers provisionally stores such a record
        raise RuntimeError(f"{row.endpoint} stored a provisional answer it cannot refresh")
    reply = refresh(conn, str(row.provisional_id))
    if reply.provisional is None:
        _store(conn, int(str(row.id)), reply, caller.request_id, None, b"")
    return reply


def _store(
    conn: sa.Connection,
    record_id: int,
    reply: Reply,
    request_id: str,
    sealer: Sealer | None,
    context: bytes,
) -> None:
    kind, ident = reply.provisional or (None, None)
    conn.execute(
        _STORE,
        {
            "f_id": record_id,
            "f_status": reply.status,
            "f_body": _stored_body(reply, sealer, context),
            "f_request_id": request_id,
            "f_kind": kind,
            "f_ident": ident,
        },
    )


def _record(
    conn: sa.Connection,
    caller: Caller,
    endpoint: str,
    key: str,
    digest: str,
    reply: Reply,
    *,
    pending: bool = False,
    sealer: Sealer | None = None,
) -> None:
    now = wall_now()
    kind, ident = reply.provisional or (None, None)
    insert_unread(  # with the COMMIT on PostgreSQL; a duplicate key still raises there
        conn,
        _INSERT,
        {
            "api_key": caller.api_key,
            "endpoint": endpoint,
            "key": key,
            "merchant_id": caller.merchant_id,
            "fingerprint": digest,
            "state": "pending" if pending else "done",
            "locked_until": now + timedelta(seconds=CLAIM_SECONDS) if pending else now,
            "status_code": reply.status,
            "body": _stored_body(reply, sealer, _context(caller.api_key, endpoint, key)),
            "request_id": caller.request_id,
            "provisional_kind": kind,
            "provisional_id": ident,
            "created_at": now,
            "expires_at": now + timedelta(seconds=limits.IDEMPOTENCY_TTL_SECONDS),
        },
    )


def idempotent(
    conn: sa.Connection,
    caller: Caller,
    method: str,
    path: str,
    key: str | None,
    work: Work,
    *,
    digest: str,
    refresh: Refresh | None = None,
    sealer: Sealer | None = None,
    claim: PlannedRead | None,
) -> Reply:
    """An idempotent POST's transaction: claim the key, run ``work``, store its answer.

    Run by the one door every idempotent POST goes through
    (`workbench.sandbox.routing.IdempotentPost`), in a transaction of its own with its
    caller's key confirmation before it. ``method`` and ``path`` are the endpoint the
    key is scoped to; ``digest`` is `fingerprint` of the request's validated body;
    ``refresh`` rebuilds a provisional answer of ``work`` (`Reply.provisional`) when the
    key is used again; ``sealer`` seals an answer that carries a bearer
    (`Reply.carries_bearer`) and opens it to replay it; ``claim`` is the key's read
    declared on the transaction's plan (`claim_read`: none without a key). Without a key
    the work simply runs.

    Raises:
        ServiceError: SVC-GW-4000 for a malformed key, SVC-GW-2001 / 2002 on conflicts, or
            whatever ``work`` raised (`answer_keeping_refusals` records a `kept` one).
    """
    if key is None:
        return work(conn)
    endpoint = _endpoint(method, path, key)
    record_id = _claim_or_raise(conn, caller, endpoint, key, digest, refresh, sealer, claim)
    if isinstance(record_id, Reply):
        return record_id
    reply = work(conn)
    if record_id is None:
        _record(conn, caller, endpoint, key, digest, reply, sealer=sealer)
    else:
        context = _context(caller.api_key, endpoint, key)
        _store(conn, record_id, reply, caller.request_id, sealer, context)
    return reply


def keep_refusal(
    conn: sa.Connection,
    caller: Caller,
    method: str,
    path: str,
    key: str,
    refusal: ServiceError,
    *,
    digest: str,
    refresh: Refresh | None = None,
    sealer: Sealer | None = None,
) -> Reply:
    """Record ``refusal`` (a `kept` one) as the key's answer, in a transaction after the
    work's own rolled back; the reply to send.

    A request with the same key that finished in between (on another worker) recorded
    its answer first: that one is replayed instead, so every response under the key is
    the one recorded.
    """
    endpoint = _endpoint(method, path, key)
    record_id = _claim_or_raise(conn, caller, endpoint, key, digest, refresh, sealer)
    if isinstance(record_id, Reply):
        return record_id
    reply = error_reply(refusal.code, refusal.message, caller.request_id)
    reply.headers.update(refusal.headers)
    if record_id is None:
        _record(conn, caller, endpoint, key, digest, reply, sealer=sealer)
    else:
        context = _context(caller.api_key, endpoint, key)
        _store(conn, record_id, reply, caller.request_id, sealer, context)
    return reply


async def answer_keeping_refusals(
    db: Database,
    caller: Caller,
    method: str,
    path: str,
    key: str | None,
    transaction: Callable[[sa.Connection], Reply | Stale],
    *,
    digest: str,
    plan: ReadPlan | None = None,
    refresh: Refresh | None = None,
    sealer: Sealer | None = None,
) -> Reply | Stale:
    """``transaction`` (which runs `idempotent`) through `Database.atransact`; a `kept`
    refusal it raises under a key is recorded (`keep_refusal`) and answered as a reply.
    A `Stale` it returns (its caller's guessed key record changed, nothing written) is
    returned as it is.

    Raises:
        ServiceError: a refusal that is not kept, or any without a key.
    """
    try:
        return await db.atransact(transaction, plan=plan)
    except ServiceError as refusal:
        if key is None or not kept(refusal):
            raise
        error = refusal
    return await db.atransact(
        lambda conn: keep_refusal(
            conn, caller, method, path, key, error, digest=digest, refresh=refresh, sealer=sealer
        )
    )


def check_key(key: str | None) -> None:
    """Refuse a malformed key (SVC-GW-4000), before any database work.

    Raises:
        ServiceError: SVC-GW-4000 when ``key`` is given and is not a UUID v4.
    """
    if key is not None:
        _endpoint("", "", key)


def _endpoint(method: str, path: str, key: str) -> str:
    """What a key is scoped to, once the key itself is known to be well formed."""
    if not is_uuid4(key):
        raise ServiceError(
            "SVC-GW-4000",
            "Idempotency-Key must be a UUID v4 (like 3f2b8c1e-9d4a-4b7e-8c2f-1a5d6e7f8091)",
        )
    return f"{method} {path}"


def _claim_or_raise(
    conn: sa.Connection,
    caller: Caller,
    endpoint: str,
    key: str,
    digest: str,
    refresh: Refresh | None = None,
    sealer: Sealer | None = None,
    claim: PlannedRead | None = None,
) -> Reply | int | None:
    """`_claim`, with its conflicts raised: a `Reply` to send, or the work may run."""
    claimed = _claim(conn, caller, endpoint, key, digest, refresh, sealer, claim)
    if isinstance(claimed, Reply):
        return claimed
    code, record_id = claimed
    if code is None:
        return record_id
    message = (
        "Idempotency-Key was used with a different payload"
        if code == "SVC-GW-2001"
        else "a request with this Idempotency-Key is still in progress; retry shortly"
    )
    raise ServiceError(
        code, message, headers={"Retry-After": "1"} if code == "SVC-GW-2002" else None
    )


def claim_pending(
    conn: sa.Connection,
    caller: Caller,
    method: str,
    path: str,
    key: str | None,
    digest: str,
    plan: Plan,
    *,
    claim: PlannedRead | None,
) -> Reply | tuple[int | None, bytes]:
    """The claim of work that makes transactions of its own, in a transaction before it.

    Args:
        conn: the claim's transaction.
        caller, method, path, key: whose key, scoped to which endpoint (no key: nothing
            is claimed, the plan is simply fixed).
        digest: `fingerprint` of the request's validated body.
        plan: fixes what the work is to reach, when the key is first claimed.
        claim: the key's read declared on the transaction's plan (`claim_read`).

    Returns:
        The stored `Reply` to send, or the id of the ``pending`` record (new, or a lapsed
        one taken over; ``None`` without a key) and the plan's bytes stored on it.

    Raises:
        ServiceError: SVC-GW-4000 for a malformed key, SVC-GW-2001 / 2002 on conflicts.
    """
    if key is None:
        return None, plan(conn)
    endpoint = _endpoint(method, path, key)
    record_id = _claim_or_raise(conn, caller, endpoint, key, digest, claim=claim)
    if isinstance(record_id, Reply):
        return record_id
    if record_id is not None:  # a lapsed claim: its request died; finish what it began
        stored = conn.execute(sa.select(_T.c.body).where(_T.c.id == record_id)).scalar_one()
        if stored:
            return record_id, bytes(stored)
        fixed = plan(conn)  # a claim written before plans were stored
        conn.execute(sa.update(_T).where(_T.c.id == record_id).values(body=fixed))
        return record_id, fixed
    fixed = plan(conn)
    _record(conn, caller, endpoint, key, digest, Reply(0, fixed), pending=True)
    row = _find(conn, caller, endpoint, key)
    if row is None:  # inserted just above, in this transaction
        raise RuntimeError("the pending idempotency record just written was not found")
    return int(row.id), fixed


async def settle_claim(
    db: Database,
    caller: Caller,
    method: str,
    path: str,
    key: str,
    record_id: int,
    outcome: Reply | ServiceError,
) -> Reply:
    """Record claimed work's answer on its ``pending`` record, by the rules above.

    A reply, or a `kept` refusal, is stored as the key's answer (and the reply to send
    returned); any other refusal deletes the claim, so the request may be sent again
    with the same key, and is raised.

    Raises:
        ServiceError: ``outcome``, when it is a refusal that is not kept.
    """
    if isinstance(outcome, ServiceError):
        if not kept(outcome):
            await db.atransact(lambda conn: conn.execute(_DELETE, {"f_id": record_id}))
            raise outcome
        reply = error_reply(outcome.code, outcome.message, caller.request_id)
        reply.headers.update(outcome.headers)
    else:
        reply = outcome
    context = _context(caller.api_key, _endpoint(method, path, key), key)
    await db.atransact(
        lambda conn: _store(conn, record_id, reply, caller.request_id, None, context)
    )
    return reply


class IdempotencyPurgeWork:
    """Reconciler work: forget records older than 24 hours (wall clock, never "due").

    Args:
        db: the sandbox database.
    """

    name = "idempotency_purge"

    def __init__(self, db: Database) -> None:
        self.db = db

    def pending_merchants(self, conn: sa.Connection) -> set[str]:
        """Merchants with an expired record."""
        return set(
            conn.execute(
                sa.select(_T.c.merchant_id).where(_T.c.expires_at <= wall_now()).distinct()
            ).scalars()
        )

    def next_due(self, conn: sa.Connection, merchant_id: str) -> datetime | None:
        """Never drives a clock advance: the cache lifetime is wall-clock time."""
        return None

    def run(self, merchant_id: str, now: datetime, deadline: float) -> int:
        """Delete the merchant's expired records."""
        with self.db.write() as conn:
            result = conn.execute(
                sa.delete(_T).where(_T.c.merchant_id == merchant_id, _T.c.expires_at <= wall_now())
            )
        return int(result.rowcount)
