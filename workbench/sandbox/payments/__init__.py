"""Payments: card charges, 3-D Secure, capture, void, retrieval, the sandbox's ACS.

`service` holds what callers do to a payment (charge, capture, void, read it, the TR QR
payment of a checkout session), `threeds` the 3-D Secure callback and the challenge's
timeout, `expiry` the authorizations' lifetime and their void when it passes, `events` a
payment's events, `acs` the simulated card issuer's challenge (its address and signed
``pares``), `models` the request and response bodies, `tables` the ``payments`` table and
`routes` the HTTP routes (card tokenization among them), whose card charge enters the
same door as every idempotent POST (`workbench.sandbox.routing.IdempotentPost`).
"""
