"""The subscriptions' HTTP routes: `merchant` (the signed ``/v1/subscriptions`` endpoints) and
`portal` (the buyer portal under ``/v1/public/subscriptions/{hash}``)."""
