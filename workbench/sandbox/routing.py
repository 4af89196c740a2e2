"""What every router shares: the running sandbox, its dependencies, documented errors, paths.

The routes reach the running sandbox (the app's `workbench.sandbox.runtime.SandboxRuntime`)
through `sandbox_of`, typed by `RouteServices`, the parts of it they use; no route imports the
composition root that builds it. A signed POST's one write goes through `IdempotentPost`
(`PostDep`), which runs it under the request's Idempotency-Key and answers.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Protocol

import sqlalchemy as sa
from fastapi import Depends, Header, Path, Request
from fastapi.routing import APIRoute
from starlette.responses import Response
from starlette.routing import BaseRoute, Match
from starlette.types import Scope

from workbench.sandbox.admin import AdminAccess
from workbench.sandbox.bodies import ErrorEnvelope
from workbench.sandbox.config import SandboxConfig
from workbench.sandbox.context import Caller, base_url_of, request_state
from workbench.sandbox.errors import ServiceError
from workbench.sandbox.idempotency import (
    Refresh,
    Work,
    answer_keeping_refusals,
    check_key,
    claim_pending,
    claim_read,
    idempotent,
    settle_claim,
)
from workbench.sandbox.keys import Stale
from workbench.sandbox.reconciler import Reconciler
from workbench.sandbox.replies import Reply
from workbench.sandbox.sealing import Sealer
from workbench.sandbox.storage import Database, ReadPlan

__all__ = [
    "ADDRESS_LIMITED_ERRORS",
    "CHARGE_ERRORS",
    "ERROR_RESPONSES",
    "PUBLIC_ERRORS",
    "SIGNED",
    "BucketReset",
    "CallerDep",
    "FirstInLine",
    "IdemKey",
    "IdempotentPost",
    "PaymentId",
    "PostDep",
    "RouteServices",
    "SandboxDep",
    "base_url",
    "caller_of",
    "checkout_base",
    "raw_path",
    "sandbox_of",
    "signed",
]


class BucketReset(Protocol):
    """What the controls use of a rate limiter: a merchant's buckets start full again."""

    def forget(self, merchant_id: str) -> None:
        """Drop the merchant's buckets."""
        ...


class RouteServices(Protocol):
    """What the routes use of the running sandbox.

    They exist once the app has started (its startup opens the database); a route reads
    them per request.
    """

    @property
    def config(self) -> SandboxConfig:
        """How the sandbox runs."""
        ...

    @property
    def db(self) -> Database:
        """The sandbox database."""
        ...

    @property
    def acs_secret(self) -> str:
        """The key the simulated ACS signs its assertions with."""
        ...

    @property
    def sealer(self) -> Sealer:
        """Seals stored answers that carry a bearer (`workbench.sandbox.sealing`)."""
        ...

    @property
    def reconciler(self) -> Reconciler:
        """The background work's runner (clock advances, ticks)."""
        ...

    @property
    def admin(self) -> AdminAccess:
        """Who may make, list and delete merchants (`workbench.sandbox.admin`)."""
        ...

    @property
    def limiter(self) -> BucketReset:
        """The per-key rate limiter."""
        ...

    @property
    def tables(self) -> Sequence[sa.Table]:
        """Every table of the sandbox, in creation order (what a merchant's reset empties)."""
        ...


# ``async`` so FastAPI calls it on the loop: it would hand a plain function to a worker
# thread, two thread switches per dependency per request.
async def sandbox_of(request: Request) -> RouteServices:
    """The running sandbox serving this app (a FastAPI dependency)."""
    sandbox: RouteServices = request.app.state.sandbox
    return sandbox


async def caller_of(request: Request) -> Caller:
    """The authenticated caller, its key record confirmed (a FastAPI dependency).

    Public routes have none. On PostgreSQL the edge may have authenticated the request
    on a kept key record (`Caller.guess`): it is read again here, before the route does
    anything; when it changed, the request is settled on the fresh record
    (`Caller.settle`): refused, or served as its caller.

    Raises:
        ServiceError: SVC-GW-1003 without a caller, or the fresh record's refusal.
    """
    state = request_state(request.scope)
    caller = state.caller
    if caller is None:
        raise ServiceError("SVC-GW-1003", "X-Api-Key is missing")
    if caller.guess is None:
        return caller
    stale = await caller.confirm_now(request.app.state.sandbox.db)
    caller = caller.confirmed() if stale is None else await _settled(caller, stale)
    state.caller = caller
    return caller


def base_url(request: Request, sandbox: RouteServices) -> str:
    """The address clients reach this sandbox at (the configured one, else the Host's)."""
    return base_url_of(request.scope, sandbox.config.public_base_url)


#: The running sandbox (`sandbox_of`).
SandboxDep = Annotated[RouteServices, Depends(sandbox_of)]
#: Who signed the request (`caller_of`).
CallerDep = Annotated[Caller, Depends(caller_of)]
#: The ``Idempotency-Key`` header, if sent.
IdemKey = Annotated[str | None, Header(alias="Idempotency-Key", max_length=255)]
#: A payment's id in a path.
PaymentId = Annotated[str, Path(pattern=r"^[A-Za-z0-9_-]{1,64}$")]


#: An idempotent POST's transaction, given the caller the door confirmed.
PostWork = Callable[[sa.Connection, Caller], Reply]
#: What claimed work is to reach, fixed in the claim's transaction (stored bytes).
ClaimPlan = Callable[[sa.Connection, Caller], bytes]


def _nothing_planned(_conn: sa.Connection, _caller: Caller) -> bytes:
    return b""


async def _settled(caller: Caller, stale: Stale) -> Caller:
    """The caller on the fresh key record, after its guess proved stale (`Caller.settle`).

    Raises:
        ServiceError: the refusal the fresh record gives the request.
    """
    fresh, refusal = await caller.settle(stale)
    if refusal is not None:
        code, message, headers = refusal
        raise ServiceError(code, message, headers=headers)
    if fresh is None:
        raise RuntimeError("a settled caller is either refused or on the fresh record")
    return fresh


@dataclass(frozen=True, slots=True)
class IdempotentPost:
    """A signed POST's one write, run under its Idempotency-Key (`idempotent_post`).

    The work is given its caller by the door: on a key record the edge only guessed
    (PostgreSQL), the caller is confirmed in the work's own transaction, first of its
    reads; when the record changed, the request is settled on the fresh one
    (`Caller.settle`: refused, or served as the fresh record's caller) and the
    transaction, which wrote nothing, runs once more for that caller.

    Attributes:
        db: the sandbox database.
        caller: who signed the request, as the edge authenticated it.
        path: the path exactly as signed (the key's endpoint).
        key: the ``Idempotency-Key`` header, if sent.
        sealer: seals a stored answer that carries a bearer.
    """

    db: Database
    caller: Caller
    path: str
    key: str | None
    sealer: Sealer | None = None

    async def __call__(
        self, work: PostWork, *, digest: str, refresh: Refresh | None = None
    ) -> Response:
        """Run ``work`` once per (key, endpoint, payload) and answer with its reply.

        Args:
            work: the route's transaction, given its caller (`idempotency.idempotent`
                runs it).
            digest: `idempotency.fingerprint` of the validated body.
            refresh: rebuilds a provisional answer when the key is used again.
        """
        reply = await self.planned(
            lambda _plan, caller: lambda conn: work(conn, caller), digest=digest, refresh=refresh
        )
        return reply.to_response(self.caller.request_id)

    async def planned(
        self,
        declare: Callable[[ReadPlan, Caller], Work],
        *,
        digest: str,
        refresh: Refresh | None = None,
    ) -> Reply:
        """`__call__`'s reply, for work whose reads are declared on the transaction's plan.

        The key is checked before any database work. The plan's reads, in the order the
        transaction makes them: the caller's key confirmation (a record the edge only
        guessed, `Caller.guess`), the key's claim, then the route's own, which
        ``declare`` puts on the plan and closes over in the work it returns. On
        PostgreSQL they travel with the transaction's first statement.

        Args:
            declare: declares the route's reads on the plan, for the caller given; the
                route's transaction.
            digest: `idempotency.fingerprint` of the validated body.
            refresh: rebuilds a provisional answer when the key is used again.

        Raises:
            ServiceError: SVC-GW-4000 for a malformed key, the key's conflicts, the
                work's refusal that is not kept under the key, or the refusal of a
                request whose guessed key record changed.
        """
        check_key(self.key)
        answer = await self._planned_once(self.caller, declare, digest, refresh)
        if isinstance(answer, Stale):
            answer = await self._planned_once(
                await _settled(self.caller, answer), declare, digest, refresh
            )
        if isinstance(answer, Stale):  # a settled caller carries no guess to confirm
            raise RuntimeError("a settled caller's key record was found stale")
        return answer

    async def _planned_once(
        self,
        caller: Caller,
        declare: Callable[[ReadPlan, Caller], Work],
        digest: str,
        refresh: Refresh | None,
    ) -> Reply | Stale:
        """`planned`'s transaction for ``caller``; `Stale`, having written nothing, when
        the caller's guessed key record changed."""
        path, key, sealer = self.path, self.key, self.sealer
        plan = ReadPlan()
        confirm = caller.plan_confirm(plan)
        claim = claim_read(plan, caller, "POST", path, key)
        work = declare(plan, caller)

        def transaction(conn: sa.Connection) -> Reply | Stale:
            stale = caller.confirm(conn, confirm)
            if stale is not None:
                return stale
            return idempotent(
                conn,
                caller,
                "POST",
                path,
                key,
                work,
                digest=digest,
                refresh=refresh,
                sealer=sealer,
                claim=claim,
            )

        return await answer_keeping_refusals(
            self.db,
            caller,
            "POST",
            path,
            key,
            transaction,
            digest=digest,
            plan=plan,
            refresh=refresh,
            sealer=sealer,
        )

    async def claimed(
        self,
        action: Callable[[bytes, Caller], Awaitable[Reply]],
        *,
        digest: str,
        plan: ClaimPlan = _nothing_planned,
    ) -> Reply:
        """The door's mode for work that makes transactions of its own.

        A clock advance runs the reconciler's work, each renewal and delivery in a
        transaction of its own, waiting on the merchant's lease: it cannot run inside
        the transaction that records its answer, as `planned`'s work does. So the key is
        claimed first, in a transaction of the door's (the key checked before it, its
        read plan the caller's key confirmation and the key's claim), as a ``pending``
        record holding ``plan``'s bytes (`idempotency.claim_pending`); ``action`` runs
        with those bytes; its answer is recorded by the same rule
        (`idempotency.settle_claim`). A request replayed after a crash takes the lapsed
        claim over and is given the same bytes, so it finishes the same work.

        Args:
            action: the route's work, given the plan's bytes and the caller; its reply.
            digest: `idempotency.fingerprint` of the validated body.
            plan: fixes, in the claim's transaction, what the work is to reach.

        Raises:
            ServiceError: SVC-GW-4000 for a malformed key, the key's conflicts, the
                work's refusal that is not kept under the key (its claim released), or
                the refusal of a request whose guessed key record changed.
        """
        check_key(self.key)
        caller = self.caller
        claimed = await self._claim(caller, digest, plan)
        if isinstance(claimed, Stale):
            caller = await _settled(caller, claimed)
            claimed = await self._claim(caller, digest, plan)
        if isinstance(claimed, Stale):  # a settled caller carries no guess to confirm
            raise RuntimeError("a settled caller's key record was found stale")
        if isinstance(claimed, Reply):
            return claimed
        record_id, fixed = claimed
        if record_id is None or self.key is None:
            return await action(fixed, caller)
        try:
            outcome: Reply | ServiceError = await action(fixed, caller)
        except ServiceError as refusal:
            outcome = refusal
        return await settle_claim(self.db, caller, "POST", self.path, self.key, record_id, outcome)

    async def _claim(
        self, caller: Caller, digest: str, plan: ClaimPlan
    ) -> Reply | tuple[int | None, bytes] | Stale:
        """`claimed`'s claim for ``caller`` (`idempotency.claim_pending`), or `Stale`."""
        path, key = self.path, self.key
        reads = ReadPlan()
        confirm = caller.plan_confirm(reads)
        claim = claim_read(reads, caller, "POST", path, key)

        def claim_it(conn: sa.Connection) -> Reply | tuple[int | None, bytes] | Stale:
            stale = caller.confirm(conn, confirm)
            if stale is not None:
                return stale
            return claim_pending(
                conn, caller, "POST", path, key, digest, lambda c: plan(c, caller), claim=claim
            )

        return await self.db.atransact(claim_it, plan=reads)


async def idempotent_post(
    request: Request, sandbox: SandboxDep, idempotency_key: IdemKey = None
) -> IdempotentPost:
    """The request's `IdempotentPost` (a FastAPI dependency).

    Its caller is the edge's: a key record the edge only guessed (PostgreSQL) is
    confirmed inside the door's transaction, its read on the transaction's read plan,
    rather than by a round trip of its own (`caller_of`).
    """
    caller = request_state(request.scope).caller
    if caller is None:
        raise ServiceError("SVC-GW-1003", "X-Api-Key is missing")
    return IdempotentPost(sandbox.db, caller, raw_path(request), idempotency_key, sandbox.sealer)


#: A signed POST's write (`idempotent_post`); declares the ``Idempotency-Key`` header.
PostDep = Annotated[IdempotentPost, Depends(idempotent_post)]

_ENVELOPE: dict[str, Any] = {"model": ErrorEnvelope}
#: Error statuses any signed route may answer with, all in the envelope.
ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    status: {**_ENVELOPE, "description": text}
    for status, text in (
        (400, "Validation failed, malformed or too large, or declined (SVC-PAY-3xxx)"),
        (401, "Authentication failed (SVC-GW-1001/1002/1003)"),
        (404, "Not found for this merchant"),
        (405, "Method not allowed"),
        (409, "Idempotency or state conflict"),
        (429, "Rate limited (Retry-After)"),
        (500, "Internal error"),
        (503, "Unavailable"),
    )
}
PUBLIC_ERRORS: dict[int | str, dict[str, Any]] = {
    k: v for k, v in ERROR_RESPONSES.items() if k in (400, 404, 405, 409, 500)
}
#: The unsigned routes counted per client address (`workbench.sandbox.edge.ratelimit_address`).
ADDRESS_LIMITED_ERRORS: dict[int | str, dict[str, Any]] = {
    **PUBLIC_ERRORS,
    429: {**_ENVELOPE, "description": "Too many requests from this address (Retry-After)"},
}
#: The card charge's error statuses: exactly the spec's list (409 from its idempotency rules).
CHARGE_ERRORS: dict[int | str, dict[str, Any]] = {
    **{k: v for k, v in ERROR_RESPONSES.items() if k in (400, 401, 404, 429)},
    409: {**_ENVELOPE, "description": "Idempotency conflict (SVC-GW-2001, SVC-GW-2002)"},
}
#: OpenAPI security requirement of signed routes.
SIGNED: list[dict[str, list[str]]] = [{"ApiKey": [], "Signature": [], "Timestamp": []}]


class FirstInLine(BaseRoute):
    """A place at the head of the app's route table for one route declared in its router.

    FastAPI tries the routes in order, through each included router, and the first
    comparisons cost the hottest request a good part of its time. This entry answers the
    route's one method and exact path by handing the request to the route itself; any
    other request goes on down the table, where the route also stands (its OpenAPI
    operation, a 405's ``Allow``). Not a second route: it has no endpoint of its own.

    Args:
        route: the route, as its router declared it.
    """

    def __init__(self, route: APIRoute) -> None:
        (self.method,) = route.methods or ("",)
        self.path = route.path
        self.route = route
        self._child = {"endpoint": route.endpoint, "path_params": {}, "route": route}
        # The router awaits the route's own handling, with no frame of this entry between.
        self.handle = route.handle  # type: ignore[method-assign]

    def matches(self, scope: Scope) -> tuple[Match, Scope]:
        """FULL for the route's method and exact path, else NONE (never PARTIAL)."""
        if (
            scope["type"] == "http"
            and scope["path"] == self.path
            and scope["method"] == self.method
        ):
            return Match.FULL, dict(self._child)
        return Match.NONE, {}


def signed(**extra: Any) -> dict[str, Any]:
    """A signed route's decorator keywords: `ERROR_RESPONSES` and `SIGNED`, then ``extra``.

    A key of ``extra`` replaces the default (``responses=`` a route's own whole list).
    """
    return {"responses": ERROR_RESPONSES, "openapi_extra": {"security": SIGNED}, **extra}


def checkout_base(request: Request, sandbox: RouteServices) -> str:
    """Where hosted checkout pages live."""
    return (sandbox.config.checkout_base_url or base_url(request, sandbox)).rstrip("/")


def raw_path(request: Request) -> str:
    """The path exactly as sent (the signature covered it)."""
    raw = request.scope.get("raw_path")
    return raw.decode("latin-1") if raw else request.url.path
