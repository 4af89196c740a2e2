def test_an_async_refund_settles(workbench_client, workbench_clock, workbench_webhooks):
    payment = workbench_client.payments.charge_card(
        transaction_id="order-1", amount=12_500, card_token="tok_test_refund_async"
    )
    refund = workbench_client.payments.refund(payment.id)
    assert refund.in_flight  # 202: the bank settles it later
    workbench_clock.advance(minutes=2)
    [settled] = workbench_webhooks.wait_for("refund.settled")
    assert settled.data["refundId"] == refund.last_refund.id
