<?php
// Sign and send one card charge with plain PHP 8: hash(), hash_hmac() and an HTTP
// stream, no framework, no extension beyond the defaults. Reads WORKBENCH_BASE_URL,
// WORKBENCH_API_KEY and WORKBENCH_SECRET_KEY.
declare(strict_types=1);

/** The three signature headers of one request, as the spec defines them. */
function sign_request(
    string $secretKey,
    string $method,
    string $path,
    string $body,
): array {
    // UTC with Z, no offset, to the second as the client sends it (a fraction would do too).
    $timestamp = gmdate('Y-m-d\TH:i:s\Z');
    // Line 3: the route path only: no query string, no trailing slash.
    $path = (string) parse_url($path, PHP_URL_PATH);
    if (strlen($path) > 1) {
        $path = rtrim($path, '/');
    }
    // Line 4: lowercase hex SHA-256 of the raw body bytes ('' for no body).
    $bodySha256 = hash('sha256', $body);
    // Four lines joined by LF, no trailing newline.
    $canonical = implode("\n", [$timestamp, strtoupper($method), $path, $bodySha256]);
    return [
        'X-Timestamp' => $timestamp,
        'X-Signature' => hash_hmac('sha256', $canonical, $secretKey),
    ];
}

/** A UUID v4, the format of Idempotency-Key. */
function uuid_v4(): string
{
    $bytes = random_bytes(16);
    $bytes[6] = chr((ord($bytes[6]) & 0x0f) | 0x40);
    $bytes[8] = chr((ord($bytes[8]) & 0x3f) | 0x80);
    return vsprintf('%s%s-%s-%s-%s-%s%s%s', str_split(bin2hex($bytes), 4));
}

$baseUrl = getenv('WORKBENCH_BASE_URL') ?: 'http://127.0.0.1:8765';
$apiKey = (string) getenv('WORKBENCH_API_KEY');
$secretKey = (string) getenv('WORKBENCH_SECRET_KEY');
$method = 'POST';
$path = '/v1/payments/card';

// The exact bytes sent: encode once, sign those bytes, send those bytes.
$body = json_encode([
    'transactionId' => 'order-' . bin2hex(random_bytes(8)),
    'amount' => 15000, // kuruş: 150,00 TL
    'currency' => 'TRY',
    'cardToken' => 'tok_test_success',
], JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE | JSON_THROW_ON_ERROR);

$headers = ['Content-Type' => 'application/json', 'X-Api-Key' => $apiKey]
    + sign_request($secretKey, $method, $path, $body)
    + ['Idempotency-Key' => uuid_v4()];
$lines = [];
foreach ($headers as $name => $value) {
    $lines[] = "$name: $value";
}
$context = stream_context_create(['http' => [
    'method' => $method,
    'header' => implode("\r\n", $lines),
    'content' => $body,
    'ignore_errors' => true, // read the error envelope of a 4xx too
]]);
$answer = file_get_contents($baseUrl . $path, false, $context);
$status = (int) explode(' ', $http_response_header[0] ?? 'HTTP/1.1 0')[1];
echo $status, ' ', $answer, "\n";
exit($status >= 200 && $status < 300 ? 0 : 1);
