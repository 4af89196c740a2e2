"""Checkout sessions: creation (``transactionId`` fenced), completion, expiry.

`service` holds what is done to a session (created by its route or by a subscription's
card update, completed by the hosted checkout, expired by the reconciler), `models` the
bodies, `tables` the ``sessions`` table and `routes` the creation route. The hosted
pages that show and pay a session are `workbench.sandbox.checkout`.
"""
