<?php
// A webhook endpoint in plain PHP 8: verify the delivery's signature over the raw body
// before trusting a byte of it. Deliveries are signed like API requests, keyed with the
// store's webhook secret (whsec_...), read here from WORKBENCH_WEBHOOK_SECRET.
// Try it: WORKBENCH_WEBHOOK_SECRET=whsec_... php -S 127.0.0.1:8000 verify-webhook.php
declare(strict_types=1);

const TOLERANCE_SECONDS = 300;

/** Whether a delivery is genuine: its signature matches and its timestamp is recent. */
function verify_webhook(
    string $secret,
    string $path,
    string $rawBody,
    string $timestamp,
    string $signature,
    int $now,
): bool {
    // X-Timestamp is UTC to the second ending in Z; anything else is refused.
    $utc = new DateTimeZone('UTC');
    $sent = DateTimeImmutable::createFromFormat('!Y-m-d\TH:i:s\Z', $timestamp, $utc);
    if ($sent === false || $sent->format('Y-m-d\TH:i:s\Z') !== $timestamp) {
        return false;
    }
    if (abs($now - $sent->getTimestamp()) > TOLERANCE_SECONDS) {
        return false;
    }
    if (strlen($path) > 1) {
        $path = rtrim($path, '/');
    }
    $canonical = implode("\n", [$timestamp, 'POST', $path, hash('sha256', $rawBody)]);
    // Constant-time comparison: never ===.
    return hash_equals(hash_hmac('sha256', $canonical, $secret), strtolower($signature));
}

$rawBody = (string) file_get_contents('php://input'); // the raw bytes, before json_decode
$path = (string) parse_url($_SERVER['REQUEST_URI'] ?? '/', PHP_URL_PATH);
$genuine = ($_SERVER['REQUEST_METHOD'] ?? '') === 'POST' && verify_webhook(
    (string) getenv('WORKBENCH_WEBHOOK_SECRET'),
    $path,
    $rawBody,
    $_SERVER['HTTP_X_TIMESTAMP'] ?? '',
    $_SERVER['HTTP_X_SIGNATURE'] ?? '',
    time(),
);
if (!$genuine) {
    http_response_code(400);
    error_log('webhook refused: bad signature or timestamp');
    return;
}
$event = json_decode($rawBody, true, 512, JSON_THROW_ON_ERROR);
// Your code: record the event id (deliveries repeat), then do the slow work later.
error_log(sprintf('webhook %s %s verified', $event['id'], $event['type']));
http_response_code(200);
