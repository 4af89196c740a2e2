// Sign and send one card charge with Node's crypto and fetch (Node 18 or later).
// Reads WORKBENCH_BASE_URL, WORKBENCH_API_KEY and WORKBENCH_SECRET_KEY.
import { createHash, createHmac, randomUUID } from "node:crypto";

const baseUrl = process.env.WORKBENCH_BASE_URL ?? "http://127.0.0.1:8765";
const apiKey = process.env.WORKBENCH_API_KEY;
const secretKey = process.env.WORKBENCH_SECRET_KEY;
const method = "POST";
const path = "/v1/payments/card";

// The exact bytes sent: serialise once, hash those bytes, send those bytes.
const body = Buffer.from(
  JSON.stringify({
    transactionId: `order-${randomUUID()}`,
    amount: 15000, // kuruş: 150,00 TL
    currency: "TRY",
    cardToken: "tok_test_success",
  }),
  "utf8",
);
// UTC with Z, no offset, to the second as the client sends it (milliseconds would do too).
const timestamp = new Date().toISOString().replace(/\.\d{3}Z$/, "Z");

const bodySha256 = createHash("sha256").update(body).digest("hex");
const canonical = [timestamp, method, path, bodySha256].join("\n");
const signature = createHmac("sha256", secretKey).update(canonical, "utf8").digest("hex");

const response = await fetch(baseUrl + path, {
  method,
  headers: {
    "Content-Type": "application/json",
    "X-Api-Key": apiKey,
    "X-Timestamp": timestamp,
    "X-Signature": signature,
    "Idempotency-Key": randomUUID(),
  },
  body,
});
console.log(response.status, await response.text());
if (!response.ok) process.exitCode = 1;
