"""Waiting for a change: poll with backoff until a condition holds.

* `wait_until` (and the async `await_until`) call a fetch function, pausing
  longer each time, until a predicate holds or the timeout passes
  (`WaitTimeout`, holding the last value).
* `wait_for_subscription` polls a ``charging`` subscription until it leaves
  that state; `wait_for_refund` repeats an in-flight refund's own call, under
  its Idempotency-Key and payload, until the service answers that it settled.

The names are also importable from `workbench.tracking`, where they lived first.
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from workbench._exceptions import WorkbenchError
from workbench._options import RequestOptions
from workbench.models import RefundResult, Subscription

if TYPE_CHECKING:
    from workbench._client import AsyncClient, Client

__all__ = [
    "WaitTimeout",
    "await_for_refund",
    "await_for_subscription",
    "await_until",
    "wait_for_refund",
    "wait_for_subscription",
    "wait_until",
]

T = TypeVar("T")


class WaitTimeout(WorkbenchError, TimeoutError):
    """The condition did not hold before the timeout.

    Attributes:
        last: the last value fetched.
    """

    def __init__(self, message: str, last: Any) -> None:
        super().__init__(message)
        self.last = last


@dataclass(frozen=True, slots=True)
class _Backoff:
    timeout: float
    interval: float
    max_interval: float
    factor: float

    def delays(self) -> Callable[[], float]:
        current = [self.interval]

        def next_delay() -> float:
            delay = current[0]
            current[0] = min(self.max_interval, current[0] * self.factor)
            return delay

        return next_delay


def wait_until(
    fetch: Callable[[], T],
    predicate: Callable[[T], bool],
    *,
    timeout: float = 30.0,
    interval: float = 0.2,
    max_interval: float = 2.0,
    factor: float = 1.5,
    between: Callable[[], object] | None = None,
    sleep: Callable[[float], None] = time.sleep,
    monotonic: Callable[[], float] = time.monotonic,
    first: T | None = None,
) -> T:
    """Call ``fetch`` until ``predicate(value)`` holds; return that value.

    Args:
        fetch: reads the current value (a retrieve call, say).
        predicate: the condition to wait for.
        timeout: seconds before giving up.
        interval: the first pause between polls, in seconds.
        max_interval: the longest pause.
        factor: each pause is this much longer than the last.
        between: called before each poll after the first (``client.sandbox.tick``
            makes the local sandbox's reconciler run instead of waiting for it).
        sleep: the pause function.
        monotonic: the clock measuring the timeout.
        first: a value already fetched, to test before the first pause.

    Raises:
        WaitTimeout: the condition did not hold in time; ``.last`` is the last value.
    """
    next_delay = _Backoff(timeout, interval, max_interval, factor).delays()
    deadline = monotonic() + timeout
    value = fetch() if first is None else first
    while not predicate(value):
        if monotonic() >= deadline:
            raise WaitTimeout(f"condition not met within {timeout:g} s", value)
        sleep(next_delay())
        if between is not None:
            between()
        value = fetch()
    return value


async def await_until(
    fetch: Callable[[], Awaitable[T]],
    predicate: Callable[[T], bool],
    *,
    timeout: float = 30.0,  # noqa: ASYNC109 - a polling deadline raising WaitTimeout with the last value
    interval: float = 0.2,
    max_interval: float = 2.0,
    factor: float = 1.5,
    between: Callable[[], object] | None = None,
    monotonic: Callable[[], float] = time.monotonic,
    first: T | None = None,
) -> T:
    """The async `wait_until`: ``fetch`` is a coroutine function, ``between`` may be one.

    Raises:
        WaitTimeout: the condition did not hold in time; ``.last`` is the last value.
    """
    next_delay = _Backoff(timeout, interval, max_interval, factor).delays()
    deadline = monotonic() + timeout
    value = await fetch() if first is None else first
    while not predicate(value):
        if monotonic() >= deadline:
            raise WaitTimeout(f"condition not met within {timeout:g} s", value)
        await asyncio.sleep(next_delay())
        if between is not None:
            outcome = between()
            if inspect.isawaitable(outcome):
                await outcome
        value = await fetch()
    return value


def _leaves(states: Sequence[str]) -> Callable[[Subscription], bool]:
    return lambda sub: sub.status not in states


def wait_for_subscription(
    client: Client,
    subscription_id: str,
    *,
    leave: Sequence[str] = ("charging",),
    timeout: float = 30.0,
    between: Callable[[], object] | None = None,
) -> Subscription:
    """Poll a subscription until its status is none of ``leave`` (default ``charging``)."""
    return wait_until(
        lambda: client.subscriptions.retrieve(subscription_id),
        _leaves(leave),
        timeout=timeout,
        between=between,
    )


async def await_for_subscription(
    client: AsyncClient,
    subscription_id: str,
    *,
    leave: Sequence[str] = ("charging",),
    timeout: float = 30.0,  # noqa: ASYNC109 - a polling deadline raising WaitTimeout with the last value
    between: Callable[[], object] | None = None,
) -> Subscription:
    """The async `wait_for_subscription`."""
    return await await_until(
        lambda: client.subscriptions.retrieve(subscription_id),
        _leaves(leave),
        timeout=timeout,
        between=between,
    )


def _ask_again(result: RefundResult) -> RequestOptions:
    """The refund call that answered ``result``, under the key it was sent with."""
    info = result.response
    if info is None or info.options is None or info.idempotency_key is None:
        raise ValueError("wait_for_refund needs a RefundResult returned by a client call")
    return dataclasses.replace(info.options, idempotency_key=info.idempotency_key)


def wait_for_refund(
    client: Client,
    result: RefundResult,
    *,
    timeout: float = 30.0,
    between: Callable[[], object] | None = None,
) -> RefundResult:
    """Ask again, under the same Idempotency-Key and payload, until the refund settles.

    The service answers 202 while the refund is in flight and the final answer
    (200) once it settled; the same request is therefore the way to poll it.
    """
    if not result.in_flight:
        return result
    again = _ask_again(result)
    return wait_until(
        lambda: client.request(again, RefundResult),
        lambda r: not r.in_flight,
        timeout=timeout,
        between=between,
        first=result,
    )


async def await_for_refund(
    client: AsyncClient,
    result: RefundResult,
    *,
    timeout: float = 30.0,  # noqa: ASYNC109 - a polling deadline raising WaitTimeout with the last value
    between: Callable[[], object] | None = None,
) -> RefundResult:
    """The async `wait_for_refund`."""
    if not result.in_flight:
        return result
    again = _ask_again(result)
    return await await_until(
        lambda: client.request(again, RefundResult),
        lambda r: not r.in_flight,
        timeout=timeout,
        between=between,
        first=result,
    )
