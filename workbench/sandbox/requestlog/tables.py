"""The request log's table: each merchant's last API requests, redacted (schema 8)."""

from __future__ import annotations

import sqlalchemy as sa

from workbench.sandbox.storage import UTCDateTime, metadata

__all__ = ["request_log"]

request_log = sa.Table(
    "request_log",
    metadata,
    # Insertion order across every worker: newest first is the highest first.
    sa.Column("seq", sa.Integer, primary_key=True, autoincrement=True),
    # No foreign key: the writer inserts after the request, when its merchant may have
    # been deleted since (a merchant's reset or deletion empties its rows all the same).
    sa.Column("merchant_id", sa.String(64), nullable=False),
    sa.Column("request_id", sa.String(64), nullable=False),
    sa.Column("at", UTCDateTime, nullable=False),
    sa.Column("method", sa.String(16), nullable=False),
    sa.Column("path", sa.Text, nullable=False),
    sa.Column("status", sa.Integer, nullable=False),
    # The envelope's ``code`` of an error answer.
    sa.Column("code", sa.String(32)),
    sa.Column("idempotency_key", sa.String(255)),
    sa.Column("replayed", sa.Boolean, nullable=False),
    sa.Column("latency_us", sa.Integer, nullable=False),
    # JSON: [[name, value], ...], X-Signature cut to its first 8 hex characters.
    sa.Column("request_headers", sa.Text, nullable=False),
    # The bodies as text, redacted (`workbench.spec.redaction`).
    sa.Column("request_body", sa.Text, nullable=False),
    sa.Column("response_body", sa.Text, nullable=False),
    # JSON: a signature refusal's diagnosis (`workbench.sandbox.requestlog.diagnosis`).
    sa.Column("diagnosis", sa.Text),
    sa.Index("ix_request_log_merchant_seq", "merchant_id", "seq"),
    sa.Index("ix_request_log_merchant_request", "merchant_id", "request_id"),
)
