"""The sandbox's own controls under ``/sandbox/``: clock, reconciler, failures, reset, fixtures.

`service` holds what the controls do to one merchant's data (its fixtures' view, the
reset, the fail-next, latency and rate-limit switches, the store's webhook), `models`
the request bodies and `routes` the HTTP routes, which also reach the reconciler and
the refunds' settlement. The controls have no tables of their own: they change the
merchant's rows and the shared ``rate_limits``.
"""
