"""Refunds of captured payments: settled at once (200) or in flight (202) until settled.

`service` holds the refund call and the settlement (`RefundSettlementWork` for the
reconciler, `settle_all` for the ``/sandbox/settle`` control), `models` the bodies,
`tables` the ``refunds`` table and `routes` the refund route.
"""
