"""Who is calling, and what a request carries for the code that serves it.

`Caller` is the merchant a signed request authenticated as: domain knowledge, which
every feature takes. `RequestState` is the one object the HTTP edge leaves in the
request's scope for what comes after it (the request id, the body as received, its
parsed JSON, the caller), defined here once so that the edge and the routes read the
same typed fields (`request_state`); neither imports the other for it.

On PostgreSQL the key record a caller was authenticated with may be a guess
(`workbench.sandbox.keys`): the `Caller` then carries it (`KeyGuess`), and whoever
acts for the caller confirms it first: in its own transaction (`Caller.confirm`, the
one door of every idempotent write) or by reading the row (`Caller.confirm_now`, every
other route through its dependency, and the edge before it refuses or answers on it).
A guess found stale is settled in one place, `Caller.settle`: each check the request
passed on the guess (the signature, the per-key gates, in the order it met them) is
asked again with the record that replaces it, once, without the request going through
the layers again.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from starlette.types import Scope

from workbench.sandbox.keys import KeyRecord, Stale, confirm_key, look_up, plan_key_read

if TYPE_CHECKING:
    import sqlalchemy as sa

    from workbench.sandbox.storage import Database, PlannedRead, ReadPlan

__all__ = [
    "STATE_KEY",
    "Caller",
    "KeyGuess",
    "Recheck",
    "Refusal",
    "RequestState",
    "base_url_of",
    "header_text",
    "request_header",
    "request_headers",
    "request_state",
]


#: A refusal in the envelope: (code, message, headers).
Refusal = tuple[str, str, Mapping[str, str] | None]
#: A check a request passed on a guessed key record, asked again with the record that
#: replaces it (``None``: the key is gone): its refusal, or ``None`` to go on.
Recheck = Callable[[KeyRecord | None], Awaitable[Refusal | None]]


class KeyGuess:
    """A key record kept between requests, to be confirmed against the database once.

    Args:
        record: the kept record the request was authenticated with.

    Attributes:
        rechecks: what the request passed on the guess, in order (`Caller.settle`).
    """

    __slots__ = ("confirmed", "rechecks", "record")

    def __init__(self, record: KeyRecord) -> None:
        self.record = record
        self.confirmed = False
        self.rechecks: list[Recheck] = []

    def __repr__(self) -> str:
        return f"KeyGuess(confirmed={self.confirmed})"


@dataclass(frozen=True, slots=True)
class Caller:
    """The merchant a signed request authenticated as.

    Attributes:
        api_key: the public key it signed with.
        merchant_id: its merchant.
        store_id: the store the key belongs to.
        request_id: this request's id.
        guess: the kept key record it was authenticated with, when that record is only
            a guess to confirm (PostgreSQL); ``None`` when it was read from the database
            or cannot be out of date.
    """

    api_key: str
    merchant_id: str
    store_id: str
    request_id: str
    guess: KeyGuess | None = field(default=None, compare=False, repr=False)

    @property
    def unconfirmed(self) -> bool:
        """Whether the caller's key record is a guess nobody has confirmed yet."""
        return self.guess is not None and not self.guess.confirmed

    def plan_confirm(self, plan: ReadPlan) -> PlannedRead | None:
        """Declare `confirm`'s read on the transaction's plan (none without a guess)."""
        return None if self.guess is None else plan_key_read(plan, self.api_key)

    def confirm(self, conn: sa.Connection, read: PlannedRead | None) -> Stale | None:
        """Confirm the guess inside the caller's transaction, before it does anything else.

        Args:
            conn: the caller's transaction.
            read: what `plan_confirm` returned for that transaction's plan (``None``:
                there is no guess to confirm).

        Returns:
            ``None`` when there is nothing to settle; else the key's record as it is now
            (write nothing, and `settle` on it).
        """
        if read is None or self.guess is None:
            return None
        stale = confirm_key(conn, self.guess.record, read)
        self.guess.confirmed = stale is None
        return stale

    async def confirm_now(self, db: Database) -> Stale | None:
        """Confirm the guess by reading the row now (`confirm`'s answer)."""
        guess = self.guess
        if guess is None or guess.confirmed:
            return None
        found = await db.in_thread(functools.partial(look_up, db, self.api_key))
        if found != guess.record:
            return Stale(found)
        guess.confirmed = True
        return None

    async def settle(self, stale: Stale) -> tuple[Caller | None, Refusal | None]:
        """Serve the request on the key's record as it is now, after a stale guess.

        Asks each check the request passed on the guess again, in order, with
        ``stale.record`` (the signature's first: it authenticates the request afresh and
        puts the new caller in the request state); the first refusal stands.

        Returns:
            The caller on the fresh record (no guess), or the refusal to answer.
        """
        guess = self.guess
        if guess is None:
            raise RuntimeError("only a caller on a guessed key record is settled")
        guess.confirmed = True  # settled: nothing asks again
        for recheck in guess.rechecks:
            refusal = await recheck(stale.record)
            if refusal is not None:
                return None, refusal
        fresh = stale.record
        if fresh is None:  # the signature's recheck refuses a key that is gone
            raise RuntimeError("a caller was settled on a key that is gone")
        return Caller(fresh.api_key, fresh.merchant_id, fresh.store_id, self.request_id), None

    def confirmed(self) -> Caller:
        """This caller, its guess (if any) confirmed: the same without it."""
        return self if self.guess is None else replace(self, guess=None)


@dataclass(slots=True)
class RequestState:
    """What the HTTP edge learnt of a request, for the layers and the route after it.

    Attributes:
        request_id: the request's id (echoed as ``X-Request-Id``).
        body: the body as received, read once (the bytes the signature covered).
        json: the body parsed by the one JSON rule (no key twice), when it was JSON.
        caller: who signed it (``None`` on the routes that take no signature).
        key: the caller's key record and its merchant's switches, for the edge's gates.
        rate_token_taken: the per-key limit (rate, burst) this request's token was taken
            under, if any: a request settled on a fresh key record after a stale guess
            (`Caller.settle`) takes a second token only under a limit that changed.
        headers: the request's headers by name (`request_headers`), made from
            ``headers_of``, the scope's list they were made from.
    """

    request_id: str = ""
    body: bytes = b""
    json: Any = None
    caller: Caller | None = None
    key: KeyRecord | None = None
    rate_token_taken: tuple[float, int] | None = None
    headers: dict[bytes, bytes] = field(default_factory=dict)
    headers_of: object = None


#: Where the `RequestState` lives in ``scope["state"]`` (Starlette's ``request.state``).
STATE_KEY = "workbench.request"


def request_state(scope: Scope) -> RequestState:
    """The request's `RequestState`, made on first use."""
    try:
        found: RequestState = scope["state"][STATE_KEY]
    except KeyError:
        found = scope.setdefault("state", {}).setdefault(STATE_KEY, RequestState())
    return found


def request_headers(scope: Scope) -> dict[bytes, bytes]:
    """The request's headers by lower-case name, each with its first value.

    What Starlette's ``Headers.get`` answers, built in one pass in C: ``Headers``
    searches its list in Python on every lookup, and the edge makes several per request.
    Made once per request and kept in its `RequestState`, until ``scope["headers"]`` is
    another list (a layer that adds a header gives the scope a new one). Read it only.
    """
    raw = scope["headers"]
    state = request_state(scope)
    if state.headers_of is raw:
        return state.headers
    if not isinstance(raw, list | tuple):  # any iterable, says ASGI: read it once, keep it
        raw = scope["headers"] = list(raw)
    state.headers = headers = dict(reversed(raw))
    state.headers_of = raw
    return headers


def request_header(scope: Scope, name: bytes) -> str | None:
    """The first value of the request header ``name`` (lower case), or ``None``."""
    return header_text(request_headers(scope).get(name))


def header_text(value: bytes | None) -> str | None:
    """A header's value as Starlette decodes it (latin-1), or ``None``."""
    return None if value is None else value.decode("latin-1")


def base_url_of(scope: Scope, configured: str | None) -> str:
    """The address clients reach this sandbox at: ``configured``, else the bound address.

    Never the request's ``Host`` header: it is not signed, and a ``checkoutUrl`` or a
    redirect built from it would send a buyer wherever the request said.
    """
    if configured:
        return configured.rstrip("/")
    host, port = scope.get("server") or ("127.0.0.1", 80)
    name = f"[{host}]" if ":" in str(host) else str(host)
    root = scope.get("root_path", "")
    return f"{scope.get('scheme', 'http')}://{name}:{port}{root}".rstrip("/")
