-- The sandbox's schema version 1 on SQLite: the tables as main
-- (commit 6152aa6) created them, before databases recorded a schema version. Frozen:
-- tests open a database made from it to prove that the current code migrates it.
-- Written with SQLAlchemy's CreateTable/CreateIndex, the statements create_all ran.

CREATE TABLE accepted_signatures (
    digest VARCHAR(64) NOT NULL,
    merchant_id VARCHAR(64) NOT NULL,
    expires_at DATETIME NOT NULL,
    PRIMARY KEY (digest)
);

CREATE INDEX ix_accepted_signatures_merchant_id ON accepted_signatures (merchant_id);

CREATE TABLE leases (
    name VARCHAR(64) NOT NULL,
    holder VARCHAR(64) NOT NULL,
    expires_at DATETIME NOT NULL,
    PRIMARY KEY (name)
);

CREATE TABLE merchants (
    id VARCHAR(64) NOT NULL,
    name VARCHAR(200) NOT NULL,
    clock_offset_us BIGINT NOT NULL,
    fail_next VARCHAR(32),
    latency_ms INTEGER NOT NULL,
    PRIMARY KEY (id)
);

CREATE TABLE meta (
    "key" VARCHAR(64) NOT NULL,
    value TEXT,
    PRIMARY KEY ("key")
);

CREATE TABLE card_tokens (
    token VARCHAR(80) NOT NULL,
    merchant_id VARCHAR(64),
    behaviour VARCHAR(40) NOT NULL,
    brand VARCHAR(40) NOT NULL,
    card_type VARCHAR(40) NOT NULL,
    bin VARCHAR(6) NOT NULL,
    last4 VARCHAR(4) NOT NULL,
    created_at DATETIME NOT NULL,
    PRIMARY KEY (token),
    FOREIGN KEY(merchant_id) REFERENCES merchants (id)
);

CREATE TABLE customers (
    id VARCHAR(64) NOT NULL,
    merchant_id VARCHAR(64) NOT NULL,
    name VARCHAR(200) NOT NULL,
    email VARCHAR(200),
    PRIMARY KEY (id),
    FOREIGN KEY(merchant_id) REFERENCES merchants (id)
);

CREATE TABLE events (
    seq INTEGER NOT NULL,
    id VARCHAR(64) NOT NULL,
    merchant_id VARCHAR(64) NOT NULL,
    store_id VARCHAR(64) NOT NULL,
    type VARCHAR(60) NOT NULL,
    payload BLOB NOT NULL,
    target_url TEXT,
    delivery_state VARCHAR(20) NOT NULL,
    attempts INTEGER NOT NULL,
    next_attempt_at DATETIME,
    last_error VARCHAR(300),
    created_at DATETIME NOT NULL,
    delivered_at DATETIME,
    PRIMARY KEY (seq),
    UNIQUE (id),
    FOREIGN KEY(merchant_id) REFERENCES merchants (id)
);

CREATE TABLE idempotency_records (
    id INTEGER NOT NULL,
    api_key VARCHAR(128) NOT NULL,
    endpoint TEXT NOT NULL,
    "key" VARCHAR(255) NOT NULL,
    merchant_id VARCHAR(64) NOT NULL,
    fingerprint VARCHAR(64) NOT NULL,
    state VARCHAR(12) NOT NULL,
    locked_until DATETIME NOT NULL,
    status_code INTEGER,
    body BLOB,
    request_id VARCHAR(64),
    provisional_kind VARCHAR(20),
    provisional_id VARCHAR(64),
    created_at DATETIME NOT NULL,
    expires_at DATETIME NOT NULL,
    PRIMARY KEY (id),
    UNIQUE (api_key, endpoint, "key"),
    FOREIGN KEY(merchant_id) REFERENCES merchants (id)
);

CREATE TABLE payments (
    id VARCHAR(64) NOT NULL,
    merchant_id VARCHAR(64) NOT NULL,
    store_id VARCHAR(64) NOT NULL,
    transaction_id VARCHAR(64) NOT NULL,
    fingerprint VARCHAR(64) NOT NULL,
    status VARCHAR(20) NOT NULL,
    amount BIGINT NOT NULL,
    currency VARCHAR(3) NOT NULL,
    commission BIGINT NOT NULL,
    net_amount BIGINT NOT NULL,
    card_token VARCHAR(80) NOT NULL,
    behaviour VARCHAR(40) NOT NULL,
    card_mask VARCHAR(19) NOT NULL,
    card_brand VARCHAR(40) NOT NULL,
    card_type VARCHAR(40) NOT NULL,
    bin VARCHAR(6) NOT NULL,
    installment_count INTEGER NOT NULL,
    three_d_secure BOOLEAN NOT NULL,
    capture BOOLEAN NOT NULL,
    auth_code VARCHAR(12),
    correlation_id VARCHAR(64),
    customer_id VARCHAR(64),
    save_card BOOLEAN NOT NULL,
    callback_url TEXT,
    refunded_amount BIGINT NOT NULL,
    pending_refund_amount BIGINT NOT NULL,
    void_reason VARCHAR(500),
    decline_code VARCHAR(20),
    response_status INTEGER NOT NULL,
    response_body BLOB NOT NULL,
    threeds_status INTEGER,
    threeds_body BLOB,
    created_at DATETIME NOT NULL,
    completed_at DATETIME,
    PRIMARY KEY (id),
    UNIQUE (merchant_id, transaction_id),
    FOREIGN KEY(merchant_id) REFERENCES merchants (id)
);

CREATE TABLE rate_buckets (
    merchant_id VARCHAR(64) NOT NULL,
    api_key VARCHAR(128) NOT NULL,
    tokens FLOAT NOT NULL,
    updated_at DATETIME NOT NULL,
    PRIMARY KEY (merchant_id, api_key),
    FOREIGN KEY(merchant_id) REFERENCES merchants (id)
);

CREATE TABLE rate_limits (
    merchant_id VARCHAR(64) NOT NULL,
    per_second FLOAT NOT NULL,
    burst INTEGER NOT NULL,
    PRIMARY KEY (merchant_id),
    FOREIGN KEY(merchant_id) REFERENCES merchants (id)
);

CREATE TABLE sessions (
    id VARCHAR(64) NOT NULL,
    merchant_id VARCHAR(64) NOT NULL,
    store_id VARCHAR(64) NOT NULL,
    transaction_id VARCHAR(64),
    fingerprint VARCHAR(64),
    mode VARCHAR(20) NOT NULL,
    status VARCHAR(20) NOT NULL,
    amount BIGINT NOT NULL,
    currency VARCHAR(3) NOT NULL,
    description TEXT,
    return_url TEXT NOT NULL,
    callback_url TEXT,
    installment_enabled BOOLEAN NOT NULL,
    customer_id VARCHAR(64),
    subscription_id VARCHAR(64),
    splits JSON,
    checkout_url TEXT NOT NULL,
    payment_id VARCHAR(64),
    response_body BLOB,
    created_at DATETIME NOT NULL,
    expires_at DATETIME NOT NULL,
    completed_at DATETIME,
    PRIMARY KEY (id),
    UNIQUE (merchant_id, transaction_id),
    FOREIGN KEY(merchant_id) REFERENCES merchants (id)
);

CREATE TABLE stores (
    id VARCHAR(64) NOT NULL,
    merchant_id VARCHAR(64) NOT NULL,
    name VARCHAR(200) NOT NULL,
    webhook_url TEXT,
    webhook_secret VARCHAR(128) NOT NULL,
    PRIMARY KEY (id),
    FOREIGN KEY(merchant_id) REFERENCES merchants (id)
);

CREATE TABLE subscriptions (
    seq INTEGER NOT NULL,
    id VARCHAR(64) NOT NULL,
    merchant_id VARCHAR(64) NOT NULL,
    store_id VARCHAR(64) NOT NULL,
    customer_id VARCHAR(64) NOT NULL,
    public_hash_sha256 VARCHAR(64) NOT NULL,
    status VARCHAR(20) NOT NULL,
    amount_minor BIGINT NOT NULL,
    currency VARCHAR(3) NOT NULL,
    interval_count INTEGER NOT NULL,
    interval_unit VARCHAR(8) NOT NULL,
    cycle_number INTEGER NOT NULL,
    anchor_at DATETIME NOT NULL,
    periods INTEGER NOT NULL,
    next_charge_at DATETIME,
    trial_end_at DATETIME,
    trial_notice_at DATETIME,
    past_due_since DATETIME,
    attempts INTEGER NOT NULL,
    claim_id INTEGER,
    card_token VARCHAR(80) NOT NULL,
    card_last4 VARCHAR(4) NOT NULL,
    card_brand VARCHAR(40) NOT NULL,
    cancel_at_period_end BOOLEAN NOT NULL,
    cancel_reason VARCHAR(500),
    generate_invoices BOOLEAN NOT NULL,
    description VARCHAR(500),
    created_at DATETIME NOT NULL,
    ended_at DATETIME,
    PRIMARY KEY (seq),
    UNIQUE (id),
    FOREIGN KEY(merchant_id) REFERENCES merchants (id),
    UNIQUE (public_hash_sha256)
);

CREATE INDEX ix_subscriptions_due ON subscriptions (merchant_id, next_charge_at);

CREATE INDEX ix_subscriptions_list ON subscriptions (merchant_id, seq);

CREATE INDEX ix_subscriptions_list_customer ON subscriptions (merchant_id, customer_id, seq);

CREATE INDEX ix_subscriptions_list_status ON subscriptions (merchant_id, status, seq);

CREATE INDEX ix_subscriptions_list_store ON subscriptions (merchant_id, store_id, seq);

CREATE INDEX ix_subscriptions_notice ON subscriptions (merchant_id, trial_notice_at);

CREATE TABLE api_keys (
    api_key VARCHAR(128) NOT NULL,
    secret_key VARCHAR(256) NOT NULL,
    merchant_id VARCHAR(64) NOT NULL,
    store_id VARCHAR(64) NOT NULL,
    revoked BOOLEAN NOT NULL,
    PRIMARY KEY (api_key),
    FOREIGN KEY(merchant_id) REFERENCES merchants (id),
    FOREIGN KEY(store_id) REFERENCES stores (id)
);

CREATE TABLE event_deliveries (
    id INTEGER NOT NULL,
    event_id VARCHAR(64) NOT NULL,
    merchant_id VARCHAR(64) NOT NULL,
    attempt INTEGER NOT NULL,
    attempted_at DATETIME NOT NULL,
    status_code INTEGER,
    error VARCHAR(300),
    PRIMARY KEY (id),
    FOREIGN KEY(event_id) REFERENCES events (id),
    FOREIGN KEY(merchant_id) REFERENCES merchants (id)
);

CREATE TABLE refunds (
    id VARCHAR(64) NOT NULL,
    merchant_id VARCHAR(64) NOT NULL,
    payment_id VARCHAR(64) NOT NULL,
    amount BIGINT NOT NULL,
    reason VARCHAR(500),
    status VARCHAR(20) NOT NULL,
    bank_refund_id VARCHAR(64),
    created_at DATETIME NOT NULL,
    settle_at DATETIME,
    completed_at DATETIME,
    PRIMARY KEY (id),
    FOREIGN KEY(merchant_id) REFERENCES merchants (id),
    FOREIGN KEY(payment_id) REFERENCES payments (id)
);

CREATE TABLE saved_cards (
    id INTEGER NOT NULL,
    merchant_id VARCHAR(64) NOT NULL,
    customer_id VARCHAR(64) NOT NULL,
    token VARCHAR(80) NOT NULL,
    is_default BOOLEAN NOT NULL,
    PRIMARY KEY (id),
    UNIQUE (customer_id, token),
    FOREIGN KEY(merchant_id) REFERENCES merchants (id),
    FOREIGN KEY(customer_id) REFERENCES customers (id)
);

CREATE TABLE subscription_charges (
    id INTEGER NOT NULL,
    merchant_id VARCHAR(64) NOT NULL,
    subscription_id VARCHAR(64) NOT NULL,
    cycle_number INTEGER NOT NULL,
    transaction_id VARCHAR(64) NOT NULL,
    kind VARCHAR(20) NOT NULL,
    state VARCHAR(12) NOT NULL,
    amount_minor BIGINT NOT NULL,
    due_at DATETIME NOT NULL,
    payment_id VARCHAR(64),
    payment_status VARCHAR(20),
    charged_at DATETIME,
    PRIMARY KEY (id),
    UNIQUE (merchant_id, transaction_id),
    FOREIGN KEY(merchant_id) REFERENCES merchants (id),
    FOREIGN KEY(subscription_id) REFERENCES subscriptions (id)
);

CREATE INDEX ix_subscription_charges_state ON subscription_charges (merchant_id, state);

CREATE INDEX ix_subscription_charges_sub ON subscription_charges (subscription_id, id);
