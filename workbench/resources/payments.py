"""Card charges, 3-D Secure completion, capture, void, refund and reads of payments."""

from __future__ import annotations

from typing import TYPE_CHECKING, Unpack

from workbench import models
from workbench._options import CallOptions, RequestOptions
from workbench.resources._base import AsyncResource, SyncResource, compact, kurus, segment, token

if TYPE_CHECKING:
    from workbench.models import (
        CaptureResult,
        CardCharge,
        Payment,
        PublicPaymentStatus,
        RefundResult,
        ThreeDSecureResult,
        VoidResult,
    )

__all__ = ["AsyncPayments", "Payments"]


def _charge(
    *,
    transaction_id: str,
    amount: int,
    card_token: str,
    currency: str,
    installment_count: int | None,
    three_d_secure: bool | None,
    customer_id: str | None,
    save_card: bool | None,
    capture: bool | None,
    idempotency_key: str | None,
) -> RequestOptions:
    body = compact(
        transactionId=transaction_id,
        amount=kurus(amount),
        currency=currency,
        cardToken=token(card_token),
        installmentCount=installment_count,
        threeDSecure=three_d_secure,
        customerId=customer_id,
        saveCard=save_card,
        capture=capture,
    )
    return RequestOptions(
        "POST",
        "/v1/payments/card",
        body,
        idempotency_key=idempotency_key,
        action="charge",
        id_field="paymentId",
    )


def _three_ds(
    payment_id: str, pares: str, correlation_id: str, idempotency_key: str | None
) -> RequestOptions:
    path = f"/v1/payments/{segment(payment_id, 'payment_id')}/3ds-callback"
    body = {"pares": pares, "correlationId": correlation_id}
    return RequestOptions(
        "POST",
        path,
        body,
        idempotency_key=idempotency_key,
        action="3ds_callback",
        object_id=payment_id,
    )


def _action(
    payment_id: str, action: str, body: dict[str, object], idempotency_key: str | None
) -> RequestOptions:
    path = f"/v1/payments/{segment(payment_id, 'payment_id')}/{action}"
    return RequestOptions(
        "POST", path, body, idempotency_key=idempotency_key, action=action, object_id=payment_id
    )


def _refund(
    payment_id: str, amount: int | None, reason: str | None, idempotency_key: str | None
) -> RequestOptions:
    body = compact(amount=None if amount is None else kurus(amount), reason=reason)
    return _action(payment_id, "refund", body, idempotency_key)


def _retrieve(payment_id: str) -> RequestOptions:
    path = f"/v1/payments/{segment(payment_id, 'payment_id')}"
    return RequestOptions("GET", path, action="retrieve", object_id=payment_id)


def _public_status(payment_id: str) -> RequestOptions:
    path = f"/v1/payments/{segment(payment_id, 'payment_id')}/public-status"
    return RequestOptions("GET", path, signed=False, action="public_status", object_id=payment_id)


class Payments(SyncResource):
    """Card payments."""

    def charge_card(
        self,
        *,
        transaction_id: str,
        amount: int,
        card_token: str,
        currency: str = "TRY",
        installment_count: int | None = None,
        three_d_secure: bool | None = None,
        customer_id: str | None = None,
        save_card: bool | None = None,
        capture: bool | None = None,
        idempotency_key: str | None = None,
        **options: Unpack[CallOptions],
    ) -> CardCharge:
        """Charge a card by its vault token.

        Args:
            transaction_id: the merchant's transaction id (an idempotency fence by itself).
            amount: kuruş.
            card_token: a ``tok_`` vault token; a raw card number is refused before sending.
            currency: always ``TRY``.
            installment_count: 1 to 12.
            three_d_secure: force 3-D Secure (the service's default is true).
            customer_id: the session-bound customer, for ``save_card``.
            save_card: attach the card to the customer after capture.
            capture: ``False`` makes a preauthorization to capture or void later.
            idempotency_key: reuse a key to make a retry safe; generated if omitted.

        Raises:
            ValueError: ``card_token`` is not a ``tok_`` token.
            TypeError: ``amount`` is not an ``int``.
            DeclineError: the card was declined (``CardDeclinedError``, ``InsufficientFundsError``).

        Returns:
            The payment: ``captured``, ``authorized``, or ``pending_3ds`` with ``acs_url``
            to send the buyer to.
        """
        return self._client.request(
            _charge(
                transaction_id=transaction_id,
                amount=amount,
                card_token=card_token,
                currency=currency,
                installment_count=installment_count,
                three_d_secure=three_d_secure,
                customer_id=customer_id,
                save_card=save_card,
                capture=capture,
                idempotency_key=idempotency_key,
            ),
            models.CardCharge,
            **options,
        )

    def complete_3ds(
        self,
        payment_id: str,
        *,
        pares: str,
        correlation_id: str,
        idempotency_key: str | None = None,
        **options: Unpack[CallOptions],
    ) -> ThreeDSecureResult:
        """Complete a 3-D Secure challenge with the ACS's signed assertion (idempotent).

        Args:
            payment_id: the ``pay_`` id.
            pares: the signed assertion the ACS posted back.
            correlation_id: the charge's ``correlation_id``.
            idempotency_key: reuse a key to make a retry safe; generated if omitted.

        Returns:
            The payment's state after the challenge: ``captured`` or ``authorized``.

        Raises:
            ThreeDSecureFailedError: the buyer failed the challenge (SVC-PAY-3003).
            ThreeDSecureAssertionError: ``pares`` or ``correlation_id`` does not belong
                to this payment (SVC-PAY-4001).
        """
        return self._client.request(
            _three_ds(payment_id, pares, correlation_id, idempotency_key),
            models.ThreeDSecureResult,
            **options,
        )

    def capture(
        self, payment_id: str, *, idempotency_key: str | None = None, **options: Unpack[CallOptions]
    ) -> CaptureResult:
        """Capture a preauthorized payment in full (idempotent once captured).

        Args:
            payment_id: the ``pay_`` id.
            idempotency_key: reuse a key to make a retry safe; generated if omitted.

        Returns:
            The captured payment.

        Raises:
            PaymentStateError: the payment is not ``authorized`` (SVC-PAY-4090).
        """
        return self._client.request(
            _action(payment_id, "capture", {}, idempotency_key), models.CaptureResult, **options
        )

    def void(
        self,
        payment_id: str,
        *,
        reason: str | None = None,
        idempotency_key: str | None = None,
        **options: Unpack[CallOptions],
    ) -> VoidResult:
        """Release an uncaptured authorization (idempotent once voided).

        Args:
            payment_id: the ``pay_`` id.
            reason: at most 500 characters; carried on the ``payment.voided`` event.
            idempotency_key: reuse a key to make a retry safe; generated if omitted.

        Returns:
            The voided payment.

        Raises:
            PaymentStateError: the payment is captured or final (SVC-PAY-4090).
        """
        return self._client.request(
            _action(payment_id, "void", compact(reason=reason), idempotency_key),
            models.VoidResult,
            **options,
        )

    def refund(
        self,
        payment_id: str,
        *,
        amount: int | None = None,
        reason: str | None = None,
        idempotency_key: str | None = None,
        **options: Unpack[CallOptions],
    ) -> RefundResult:
        """Refund a captured payment, in full (no ``amount``) or in part.

        A 202 answer returns normally with ``result.in_flight`` true; call again with
        ``idempotency_key=result.idempotency_key`` (or use
        ``workbench.waiting.wait_for_refund``) to learn when it settles.

        Args:
            payment_id: the ``pay_`` id.
            amount: kuruş, at most the refundable amount; the whole of it if omitted.
            reason: free text; longer than 500 characters is truncated by the service.
            idempotency_key: reuse a key to make a retry safe; generated if omitted.

        Returns:
            The refund, with ``in_flight`` true when the service answered 202.

        Raises:
            RefundAmountError: ``amount`` is more than the refundable amount (SVC-PAY-4002).
        """
        return self._client.request(
            _refund(payment_id, amount, reason, idempotency_key), models.RefundResult, **options
        )

    def retrieve(self, payment_id: str, **options: Unpack[CallOptions]) -> Payment:
        """Read a payment.

        Args:
            payment_id: the ``pay_`` id.

        Returns:
            The payment as the service holds it now.

        Raises:
            NotFoundError: no such payment for this merchant.
        """
        return self._client.request(_retrieve(payment_id), models.Payment, **options)

    def public_status(self, payment_id: str, **options: Unpack[CallOptions]) -> PublicPaymentStatus:
        """The buyer-safe status of a payment; sent without a signature.

        Args:
            payment_id: the ``pay_`` id.

        Returns:
            The status fields a buyer's page may show.
        """
        return self._client.request(
            _public_status(payment_id), models.PublicPaymentStatus, **options
        )


class AsyncPayments(AsyncResource):
    """Card payments (async); see `Payments` for each method's documentation."""

    async def charge_card(
        self,
        *,
        transaction_id: str,
        amount: int,
        card_token: str,
        currency: str = "TRY",
        installment_count: int | None = None,
        three_d_secure: bool | None = None,
        customer_id: str | None = None,
        save_card: bool | None = None,
        capture: bool | None = None,
        idempotency_key: str | None = None,
        **options: Unpack[CallOptions],
    ) -> CardCharge:
        """Charge a card by its vault token; see `Payments.charge_card`."""
        return await self._client.request(
            _charge(
                transaction_id=transaction_id,
                amount=amount,
                card_token=card_token,
                currency=currency,
                installment_count=installment_count,
                three_d_secure=three_d_secure,
                customer_id=customer_id,
                save_card=save_card,
                capture=capture,
                idempotency_key=idempotency_key,
            ),
            models.CardCharge,
            **options,
        )

    async def complete_3ds(
        self,
        payment_id: str,
        *,
        pares: str,
        correlation_id: str,
        idempotency_key: str | None = None,
        **options: Unpack[CallOptions],
    ) -> ThreeDSecureResult:
        """Complete a 3-D Secure challenge; see `Payments.complete_3ds`."""
        return await self._client.request(
            _three_ds(payment_id, pares, correlation_id, idempotency_key),
            models.ThreeDSecureResult,
            **options,
        )

    async def capture(
        self, payment_id: str, *, idempotency_key: str | None = None, **options: Unpack[CallOptions]
    ) -> CaptureResult:
        """Capture a preauthorized payment in full; see `Payments.capture`."""
        return await self._client.request(
            _action(payment_id, "capture", {}, idempotency_key), models.CaptureResult, **options
        )

    async def void(
        self,
        payment_id: str,
        *,
        reason: str | None = None,
        idempotency_key: str | None = None,
        **options: Unpack[CallOptions],
    ) -> VoidResult:
        """Release an uncaptured authorization; see `Payments.void`."""
        return await self._client.request(
            _action(payment_id, "void", compact(reason=reason), idempotency_key),
            models.VoidResult,
            **options,
        )

    async def refund(
        self,
        payment_id: str,
        *,
        amount: int | None = None,
        reason: str | None = None,
        idempotency_key: str | None = None,
        **options: Unpack[CallOptions],
    ) -> RefundResult:
        """Refund a captured payment; see `Payments.refund`."""
        return await self._client.request(
            _refund(payment_id, amount, reason, idempotency_key), models.RefundResult, **options
        )

    async def retrieve(self, payment_id: str, **options: Unpack[CallOptions]) -> Payment:
        """Read a payment."""
        return await self._client.request(_retrieve(payment_id), models.Payment, **options)

    async def public_status(
        self, payment_id: str, **options: Unpack[CallOptions]
    ) -> PublicPaymentStatus:
        """The buyer-safe status of a payment; sent without a signature."""
        return await self._client.request(
            _public_status(payment_id), models.PublicPaymentStatus, **options
        )
