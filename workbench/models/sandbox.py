"""Results of the local sandbox's control routes (``/sandbox/*``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Generic, TypeVar

from pydantic import Field, PrivateAttr

from workbench.models._base import APIObject, UtcDatetime

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "BusinessTime",
    "ChallengeAnswer",
    "CustomerFixture",
    "DeliveryAttempt",
    "EventDeliveries",
    "FailNext",
    "Latency",
    "MerchantCredentials",
    "MerchantDeletion",
    "MerchantList",
    "MerchantSummary",
    "RateLimit",
    "ReconcilerPass",
    "ResetResult",
    "SandboxEvent",
    "SandboxEventList",
    "SandboxFixtures",
    "SavedCard",
    "SettleResult",
    "StoreFixture",
    "TestCard",
    "WebhookTarget",
]


_ClientT = TypeVar("_ClientT")


class StoreFixture(APIObject):
    """A store of the merchant; ``webhook_secret`` verifies its webhooks (kept out of repr)."""

    id: str
    name: str | None = None
    webhook_url: str | None = None
    webhook_secret: str | None = Field(default=None, repr=False)


class SavedCard(APIObject):
    """A customer's saved card token."""

    token: str
    default: bool = False

    @property
    def id(self) -> str:
        """The saved card's token, which is its id (the same as ``token``)."""
        return self.token


class CustomerFixture(APIObject):
    """A built-in customer and the cards saved for it."""

    id: str
    name: str | None = None
    email: str | None = None
    saved_cards: list[SavedCard] = Field(default_factory=list)


class TestCard(APIObject):
    """A test card token and what it does (its test number is kept out of repr)."""

    __test__ = False  # not a pytest test class

    token: str
    behaviour: str | None = None
    brand: str | None = None
    card_type: str | None = None
    number: str | None = Field(default=None, repr=False)
    description: str | None = None

    @property
    def id(self) -> str:
        """The test card's token, which is its id (the same as ``token``)."""
        return self.token


class SandboxFixtures(APIObject):
    """``GET /sandbox/fixtures``: the calling merchant's built-in data."""

    merchant_id: str
    store_id: str
    stores: list[StoreFixture] = Field(default_factory=list)
    customers: list[CustomerFixture] = Field(default_factory=list)
    test_cards: list[TestCard] = Field(default_factory=list)
    business_time: UtcDatetime | None = None

    @property
    def webhook_secret(self) -> str | None:
        """The webhook secret of the merchant's first store."""
        return self.stores[0].webhook_secret if self.stores else None


class BusinessTime(APIObject):
    """``POST /sandbox/clock/advance``: the merchant's business time after the move."""

    business_time: UtcDatetime


class ReconcilerPass(APIObject):
    """``POST /sandbox/reconciler/tick``: items processed per kind of work."""

    processed: dict[str, int] = Field(default_factory=dict)


class MerchantCredentials(APIObject, Generic[_ClientT]):
    """``POST /sandbox/merchants``: a merchant of your own, its keys, and a client for it.

    The secret key and webhook secret are shown by the sandbox in this answer only and
    kept out of ``repr``; keep them (``workbench merchants create --env`` prints them
    for a shell). `client` is a client of the maker's class signed with these keys,
    over the maker's connections.
    """

    _client: Any = PrivateAttr(default=None)

    merchant_id: str
    name: str | None = None
    store_id: str
    api_key: str
    secret_key: str = Field(repr=False)
    webhook_secret: str = Field(repr=False)
    customers: list[str] = Field(default_factory=list)
    created: UtcDatetime | None = None

    @property
    def id(self) -> str:
        """The merchant's id (``merchant_id``)."""
        return self.merchant_id

    @property
    def client(self) -> _ClientT:
        """A `Client` (or `AsyncClient`) signed with these keys; close the maker's client,
        whose connections it shares."""
        if self._client is None:
            raise RuntimeError("these credentials were not made by a client's create_merchant")
        client: _ClientT = self._client
        return client

    def bind_client(self, client: _ClientT) -> None:
        """Attach the client signed with these keys (`Sandbox.create_merchant` does)."""
        self._client = client


class MerchantSummary(APIObject):
    """A merchant as ``GET /sandbox/merchants`` lists it (no secret)."""

    merchant_id: str
    name: str | None = None
    built_in: bool = False
    created: UtcDatetime | None = None
    last_used: UtcDatetime | None = None

    @property
    def id(self) -> str:
        """The merchant's id (``merchant_id``)."""
        return self.merchant_id


class MerchantList(APIObject):
    """``GET /sandbox/merchants``: every merchant, the built-in ones first."""

    items: list[MerchantSummary] = Field(default_factory=list)


class MerchantDeletion(APIObject):
    """``DELETE /sandbox/merchants/{id}``: rows deleted per table."""

    merchant_id: str
    deleted: dict[str, int] = Field(default_factory=dict)

    @property
    def id(self) -> str:
        """The deleted merchant's id (``merchant_id``)."""
        return self.merchant_id


class SettleResult(APIObject):
    """``POST /sandbox/settle``: how many in-flight refunds were settled."""

    settled: int


class ResetResult(APIObject):
    """``POST /sandbox/reset``: rows deleted per table."""

    deleted: dict[str, int] = Field(default_factory=dict)


class SandboxEvent(APIObject):
    """An event the sandbox recorded for the merchant, with its delivery state."""

    id: str
    type: str
    created_at: UtcDatetime | None = None
    merchant_id: str | None = None
    data: dict[str, Any] = Field(default_factory=dict)
    delivery: dict[str, Any] = Field(default_factory=dict)


class SandboxEventList(APIObject):
    """``GET /sandbox/events``: oldest first."""

    items: list[SandboxEvent]

    def to_frame(self) -> pd.DataFrame:
        """The events as a DataFrame."""
        from workbench.frames import to_frame

        return to_frame(self.items)


class DeliveryAttempt(APIObject):
    """One attempt to deliver an event: the receiver's status code or the error."""

    attempt: int
    attempted_at: UtcDatetime | None = None
    status_code: int | None = None
    error: str | None = None


class EventDeliveries(APIObject):
    """``GET /sandbox/events/{id}/deliveries``: an event's delivery state and attempts."""

    event_id: str
    type: str
    object: str | None = None
    state: str
    url: str | None = None
    next_attempt_at: UtcDatetime | None = None
    attempts: list[DeliveryAttempt] = Field(default_factory=list)

    def to_frame(self) -> pd.DataFrame:
        """The attempts as a DataFrame."""
        from workbench.frames import to_frame

        return to_frame(self.attempts)

    @property
    def id(self) -> str:
        """The event's id (``eventId``), the same as ``event_id``."""
        return self.event_id


class FailNext(APIObject):
    """``POST /sandbox/fail-next``: the failure armed for the next request."""

    fail_next: str


class Latency(APIObject):
    """``POST /sandbox/latency``: the simulated latency now in force."""

    latency_ms: int


class AuthorizationLifetime(APIObject):
    """``POST /sandbox/authorization-lifetime``: how long an authorization waits for a capture.

    Past it (business time, counted from the authorization), the payment is voided.
    """

    seconds: int


class RateLimit(APIObject):
    """``POST /sandbox/rate-limit``: the merchant's rate limit now in force."""

    per_second: float | None = None
    burst: int | None = None


class WebhookTarget(APIObject):
    """``PUT /sandbox/webhook``: the store's webhook URL now."""

    url: str | None = None


class ChallengeAnswer(APIObject):
    """The sandbox ACS's answer to a 3-D Secure challenge: a signed ``pares`` to post back."""

    payment_id: str
    correlation_id: str
    pares: str = Field(repr=False)
    result: str

    @property
    def id(self) -> str:
        """The challenged payment's id (``paymentId``), the same as ``payment_id``."""
        return self.payment_id
