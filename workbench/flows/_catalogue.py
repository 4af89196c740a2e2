"""What each flow asks for, in form terms: what `workbench.notebook.widgets` builds forms from."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from workbench.flows.card_3ds import card_3ds
from workbench.flows.checkout import checkout
from workbench.flows.idempotency_errors import idempotency_errors
from workbench.flows.portal import portal
from workbench.flows.preauth import preauth
from workbench.flows.refunds import refunds
from workbench.flows.signing import quickstart
from workbench.flows.subscriptions import subscriptions

if TYPE_CHECKING:
    from workbench._client import Client
    from workbench.flows._run import FlowRun

__all__ = ["CARDS", "FLOWS", "FlowSpec", "Param"]

#: The sandbox's test cards, as a picker shows them.
CARDS: tuple[tuple[str, str], ...] = (
    ("approved (frictionless)", "tok_test_success"),
    ("3DS challenge (code 123456)", "tok_test_3ds_challenge"),
    ("3DS challenge that fails", "tok_test_3ds_fail"),
    ("insufficient funds", "tok_test_insufficient_funds"),
    ("declined", "tok_test_declined"),
    ("refunds settle later (202)", "tok_test_refund_async"),
    ("renewals fail", "tok_test_renewal_fails"),
)

Kind = Literal["lira", "card", "int", "bool", "choice", "text"]


@dataclass(frozen=True, slots=True)
class Param:
    """One input of a flow.

    Attributes:
        name: the flow function's keyword.
        label: what the form shows.
        kind: ``lira`` (text in lira, passed as kuruş), ``card``, ``int``, ``bool``,
            ``choice`` or ``text``.
        default: the default, in the flow's own terms (kuruş for ``lira``).
        options: the choices of a ``choice``; (min, max) of an ``int``.
    """

    name: str
    label: str
    kind: Kind
    default: Any
    options: tuple[Any, ...] = ()


@dataclass(frozen=True, slots=True)
class FlowSpec:
    """A flow and the inputs its form offers."""

    name: str
    title: str
    run: Callable[..., FlowRun]
    params: tuple[Param, ...]

    def __call__(self, client: Client, **values: Any) -> FlowRun:
        """Run the flow with the defaults overridden by ``values``."""
        kwargs = {p.name: p.default for p in self.params}
        kwargs.update(values)
        return self.run(client, **kwargs)


FLOWS: dict[str, FlowSpec] = {
    spec.name: spec
    for spec in (
        FlowSpec(
            "quickstart",
            "First signed request",
            quickstart,
            (
                Param("amount", "Amount (TL)", "lira", 12_500),
                Param("card_token", "Test card", "card", "tok_test_success"),
                Param("skew_minutes", "Skew (minutes)", "int", 10, (6, 120)),
            ),
        ),
        FlowSpec(
            "checkout",
            "Hosted checkout",
            checkout,
            (
                Param("amount", "Amount (TL)", "lira", 34_900),
                Param("mode", "Mode", "choice", "payment", ("payment", "qr")),
                Param("card_token", "Test card", "card", "tok_test_success"),
                Param("installments", "Installments", "int", 1, (1, 12)),
            ),
        ),
        FlowSpec(
            "card_3ds",
            "Card charge with 3-D Secure",
            card_3ds,
            (
                Param("amount", "Amount (TL)", "lira", 12_500),
                Param("card_token", "Test card", "card", "tok_test_3ds_challenge"),
                Param("installments", "Installments", "int", 1, (1, 12)),
                Param("three_d_secure", "3-D Secure", "bool", True),
                Param("capture", "Capture", "bool", True),
                Param("challenge_code", "Challenge code", "text", "123456"),
            ),
        ),
        FlowSpec(
            "preauth",
            "Preauthorization",
            preauth,
            (
                Param("amount", "Amount (TL)", "lira", 45_000),
                Param("card_token", "Test card", "card", "tok_test_success"),
                Param("then", "Then", "choice", "capture", ("capture", "void")),
                Param("reason", "Void reason", "text", "customer changed the order"),
            ),
        ),
        FlowSpec(
            "refunds",
            "Refunds",
            refunds,
            (
                Param("amount", "Amount (TL)", "lira", 20_000),
                Param("partial", "First refund (TL)", "lira", 5_000),
                Param("card_token", "Test card", "card", "tok_test_success"),
            ),
        ),
        FlowSpec(
            "idempotency_errors",
            "Idempotency and errors",
            idempotency_errors,
            (
                Param("amount", "Amount (TL)", "lira", 9_900),
                Param("bad_installments", "Bad installments", "int", 13, (13, 99)),
                Param("rate_limited", "Answer 429 once", "bool", True),
            ),
        ),
        FlowSpec(
            "subscriptions",
            "Subscription lifecycle",
            subscriptions,
            (
                Param("amount", "Amount (TL)", "lira", 19_900),
                Param(
                    "interval_unit", "Every", "choice", "month", ("day", "week", "month", "year")
                ),
                Param("interval_count", "Units per cycle", "int", 1, (1, 12)),
                Param("trial_days", "Trial (days)", "int", 0, (0, 90)),
                Param("card_token", "Test card", "card", "tok_test_success"),
                Param("renewals", "Renewals", "int", 2, (0, 12)),
            ),
        ),
        FlowSpec(
            "portal",
            "Buyer portal",
            portal,
            (
                Param("amount", "Amount (TL)", "lira", 9_900),
                Param("card_token", "Test card", "card", "tok_test_success"),
                Param("at_period_end", "Cancel at period end", "bool", True),
            ),
        ),
    )
}
