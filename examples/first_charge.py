from uuid import uuid4

from workbench import Client

with Client() as client:  # the local sandbox, demo keys
    payment = client.payments.charge_card(
        transaction_id=f"order-{uuid4().hex[:8]}",
        amount=15_000,  # kuruş: 150,00 TL
        card_token="tok_test_success",  # approved
    )
    print(payment.status, payment.id, payment.amount)
