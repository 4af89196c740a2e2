#!/usr/bin/env bash
# Sign and send one card charge with openssl and curl: no Python involved.
# Reads WORKBENCH_BASE_URL, WORKBENCH_API_KEY and WORKBENCH_SECRET_KEY.
set -euo pipefail

base_url="${WORKBENCH_BASE_URL:-http://127.0.0.1:8765}"
method="POST"
path="/v1/payments/card"
# The exact bytes sent: build the body once, hash it, send it unchanged.
body='{"transactionId":"order-'"$(openssl rand -hex 8)"'","amount":15000,"currency":"TRY","cardToken":"tok_test_success"}'
timestamp="$(date -u +%Y-%m-%dT%H:%M:%SZ)"

# Line 4: lowercase hex SHA-256 of the body bytes (of the empty string for no body).
body_sha256="$(printf '%s' "$body" | openssl dgst -sha256 -r | cut -d' ' -f1)"
# The canonical string: four lines joined by LF, no trailing newline.
canonical="$(printf '%s\n%s\n%s\n%s' "$timestamp" "$method" "$path" "$body_sha256")"
# X-Signature: lowercase hex HMAC-SHA256 of the canonical string, keyed with the secret.
signature="$(printf '%s' "$canonical" \
  | openssl dgst -sha256 -mac HMAC -macopt "key:$WORKBENCH_SECRET_KEY" -r | cut -d' ' -f1)"

curl --silent --show-error --fail-with-body -X "$method" "$base_url$path" \
  -H "Content-Type: application/json" \
  -H "X-Api-Key: $WORKBENCH_API_KEY" \
  -H "X-Timestamp: $timestamp" \
  -H "X-Signature: $signature" \
  --data-binary "$body"
echo
