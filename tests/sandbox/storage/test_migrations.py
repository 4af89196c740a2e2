"""Versioned sandbox data: a database of an older schema is migrated, a newer one refused.

Version 1 is the schema main created before databases recorded a version; its DDL and
rows main wrote are frozen under ``tests/data/sandbox-schema``. Each test makes its own
database, on SQLite and on PostgreSQL.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx2
import pytest
import sqlalchemy as sa
from click.testing import CliRunner

from tests.postgres import database_url
from tests.sandbox.clients import signed_client
from workbench.cli import main
from workbench.sandbox import SandboxConfig, SandboxServer
from workbench.sandbox.schema import TABLES, metadata
from workbench.sandbox.storage import Database
from workbench.sandbox.storage.migrations import (
    SCHEMA_VERSION,
    STEPS,
    SchemaVersionError,
    open_schema,
    schema_version,
)

FROZEN = Path(__file__).parents[2] / "data" / "sandbox-schema"
ROWS = json.loads((FROZEN / "v1-rows.json").read_text(encoding="utf-8"))


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request: pytest.FixtureRequest) -> str:
    """The storage backend of this run."""
    return str(request.param)


@pytest.fixture
def url(backend: str, tmp_path: Path) -> Iterator[str]:
    """An empty database of this test's own."""
    with database_url(backend, tmp_path) as found:
        yield found


def _engine(url: str) -> sa.Engine:
    return sa.create_engine(url, poolclass=sa.pool.NullPool)


def _value(column: sa.Column[Any], value: Any) -> Any:
    if value is None:
        return None
    if isinstance(column.type, sa.LargeBinary):
        return base64.b64decode(value)
    if isinstance(column.type, sa.DateTime):
        return datetime.fromisoformat(value)
    return value


def make_v1_database(url: str, *, rows: bool = True) -> None:
    """The tables exactly as main created them (and, with ``rows``, the rows it wrote)."""
    engine = _engine(url)
    ddl = (FROZEN / f"v1.{engine.dialect.name}.sql").read_text(encoding="utf-8")
    code = "\n".join(line for line in ddl.splitlines() if not line.startswith("--"))
    try:
        with engine.begin() as conn:
            for statement in filter(str.strip, code.split(";")):
                conn.exec_driver_sql(statement)
            if not rows:
                return
            found = sa.MetaData()
            found.reflect(conn)
            for table in found.sorted_tables:
                items = ROWS["tables"].get(table.name, [])
                if items:
                    conn.execute(
                        sa.insert(table),
                        [{k: _value(table.c[k], v) for k, v in item.items()} for item in items],
                    )
                for column in table.primary_key.columns:
                    serial = column.server_default is not None and "nextval" in str(
                        getattr(column.server_default, "arg", "")
                    )
                    if serial:  # rows came with their ids: move the sequence past them
                        top = conn.execute(sa.select(sa.func.max(column))).scalar() or 0
                        sequence = sa.func.pg_get_serial_sequence(table.name, column.name)
                        conn.execute(sa.select(sa.func.setval(sequence, top + 1, False)))
    finally:
        engine.dispose()


def _stored_version(url: str) -> str | None:
    engine = _engine(url)
    try:
        with engine.connect() as conn:
            value = conn.execute(
                sa.text("SELECT value FROM meta WHERE key = 'schema_version'")
            ).scalar_one_or_none()
    finally:
        engine.dispose()
    return None if value is None else str(value)


def _set_version(url: str, version: str) -> None:
    engine = _engine(url)
    try:
        with engine.begin() as conn:
            conn.execute(
                sa.text("UPDATE meta SET value = :v WHERE key = 'schema_version'"), {"v": version}
            )
    finally:
        engine.dispose()


def test_a_database_main_wrote_opens_with_its_data(url: str) -> None:
    make_v1_database(url)
    assert _stored_version(url) is None  # main recorded no version
    answers = ROWS["answers"]
    payment_id = answers["payment"]["paymentId"]
    sub = answers["subscription"]

    config = SandboxConfig(db_url=url, run_reconciler_in_background=False)
    with SandboxServer(config) as server, signed_client(server.base_url) as client:
        assert schema_version(server.sandbox.db, TABLES) == SCHEMA_VERSION
        payment = client.get(f"/v1/payments/{payment_id}").json()
        assert payment["status"] == answers["payment"]["status"]
        assert payment["amount"] == answers["payment"]["amount"]
        assert payment["refundAmount"] == answers["refund"]["refundAmount"]
        assert payment["createdAt"] == answers["payment"]["createdAt"]
        got = client.get(f"/v1/subscriptions/{sub['id']}").json()
        assert {k: got[k] for k in ("status", "amountMinor", "nextChargeAt", "cardLast4")} == {
            k: sub[k] for k in ("status", "amountMinor", "nextChargeAt", "cardLast4")
        }
        portal = client.get(f"/v1/public/subscriptions/{sub['publicHash']}")
        assert portal.status_code == 200, portal.text
        # Written to the old tables: the rest of the refund, and a new charge.
        rest = client.post(f"/v1/payments/{payment_id}/refund", json={})
        assert rest.status_code == 200, rest.text
        assert rest.json()["refundableAmount"] == 0
        charged = client.post(
            "/v1/payments/card",
            json={
                "transactionId": "order-after-migration",
                "amount": 10_000,
                "currency": "TRY",
                "cardToken": "tok_test_success",
                "threeDSecure": False,
            },
        )
        assert charged.status_code == 201, charged.text
    assert _stored_version(url) == str(SCHEMA_VERSION)


def _schema(url: str) -> dict[str, Any]:
    """Every table's columns, keys, constraints and indexes, as the database reports them."""
    engine = _engine(url)
    try:
        with engine.connect() as conn:
            inspector = sa.inspect(conn)
            out: dict[str, Any] = {}
            for name in sorted(inspector.get_table_names()):
                out[name] = {
                    "columns": [
                        (c["name"], str(c["type"]), c["nullable"], c.get("autoincrement"))
                        for c in inspector.get_columns(name)
                    ],
                    "pk": inspector.get_pk_constraint(name)["constrained_columns"],
                    "fks": sorted(
                        (tuple(f["constrained_columns"]), f["referred_table"])
                        for f in inspector.get_foreign_keys(name)
                    ),
                    "unique": sorted(
                        tuple(u["column_names"]) for u in inspector.get_unique_constraints(name)
                    ),
                    "indexes": sorted(
                        (i["name"], tuple(i["column_names"]), bool(i["unique"]))
                        for i in inspector.get_indexes(name)
                    ),
                }
    finally:
        engine.dispose()
    return out


def test_version_1_brought_up_by_the_steps_is_the_schema_created_afresh(
    backend: str, url: str, tmp_path: Path
) -> None:
    make_v1_database(url, rows=False)
    db = Database(url)
    try:
        assert open_schema(db, TABLES) == (1, SCHEMA_VERSION)
    finally:
        db.dispose()
    (tmp_path / "fresh").mkdir()
    with database_url(backend, tmp_path / "fresh") as fresh:
        fresh_db = Database(fresh)
        try:
            assert open_schema(fresh_db, TABLES) == (None, SCHEMA_VERSION)
        finally:
            fresh_db.dispose()
        assert _schema(url) == _schema(fresh), (
            "the tables changed without a step in workbench.sandbox.storage.migrations.STEPS"
        )


def test_the_schema_lists_every_table_once() -> None:
    assert len(set(TABLES)) == len(TABLES)
    assert {t.name for t in TABLES} == set(metadata.tables), (
        "list the table in workbench.sandbox.schema.TABLES (new ones go at the end)"
    )


def _add_column(conn: sa.Connection) -> None:
    conn.exec_driver_sql("ALTER TABLE merchants ADD COLUMN motto VARCHAR(40)")


def _add_index(conn: sa.Connection) -> None:
    conn.exec_driver_sql("CREATE INDEX ix_merchants_motto ON merchants (motto)")


def _fail(conn: sa.Connection) -> None:
    raise RuntimeError("step 3 failed")


def _merchant_columns(url: str) -> set[str]:
    engine = _engine(url)
    try:
        with engine.connect() as conn:
            return {c["name"] for c in sa.inspect(conn).get_columns("merchants")}
    finally:
        engine.dispose()


def test_steps_run_in_order_and_a_failing_one_changes_nothing(url: str) -> None:
    make_v1_database(url)
    db = Database(url)
    try:
        with pytest.raises(RuntimeError, match="step 3 failed"):
            open_schema(db, TABLES, steps={2: _add_column, 3: _fail})
        assert "motto" not in _merchant_columns(url)  # step 2 rolled back with step 3
        assert schema_version(db, TABLES) == 1

        steps = {**STEPS, 2: _add_column, 3: _add_index}  # and the real steps after them
        assert open_schema(db, TABLES, steps=steps) == (1, SCHEMA_VERSION)
        assert "motto" in _merchant_columns(url)
        assert _stored_version(url) == str(SCHEMA_VERSION)
        assert open_schema(db, TABLES, steps=steps) == (SCHEMA_VERSION, SCHEMA_VERSION)
    finally:
        db.dispose()


@pytest.fixture
def served(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The server replaced: the command returns instead of serving."""
    calls: list[Any] = []
    monkeypatch.setattr("workbench.cli.sandbox.serve", lambda app, **kwargs: calls.append(app))
    return calls


def test_a_newer_database_is_refused_naming_the_reset_command(url: str, served: list[Any]) -> None:
    SandboxServer(SandboxConfig(db_url=url, run_reconciler_in_background=False)).start().stop()
    _set_version(url, str(SCHEMA_VERSION + 1))
    config = SandboxConfig(db_url=url, run_reconciler_in_background=False)

    with pytest.raises(SchemaVersionError) as refused:
        SandboxServer(config).start()
    message = str(refused.value)
    assert f"schema version {SCHEMA_VERSION + 1}" in message
    assert "workbench sandbox --db " in message
    assert "--reset`" in message

    result = CliRunner().invoke(main, ["sandbox", "--port", "0", "--db", url])
    assert result.exit_code == 1
    assert "--reset" in result.output
    assert "Traceback" not in result.output
    assert served == []  # refused before anything listened
    assert _stored_version(url) == str(SCHEMA_VERSION + 1)  # and left as it was


def test_an_unversioned_database_missing_tables_is_refused(url: str) -> None:
    engine = _engine(url)
    with engine.begin() as conn:
        conn.exec_driver_sql("CREATE TABLE payments (id VARCHAR(64) PRIMARY KEY)")
    engine.dispose()

    with pytest.raises(SchemaVersionError, match="no schema version"):
        SandboxServer(SandboxConfig(db_url=url)).start()


def test_reset_says_what_it_deletes_asks_and_starts_afresh(
    url: str, served: list[Any], tmp_path: Path
) -> None:
    make_v1_database(url)
    _other_table(url)
    _set_version_row(url, "99")

    declined = CliRunner().invoke(
        main, ["sandbox", "--port", "0", "--db", url, "--reset"], input="n\n"
    )
    assert declined.exit_code == 1
    assert "--reset deletes" in declined.output
    if url.startswith("sqlite"):
        assert str(tmp_path / "sandbox.db") in declined.output
    else:
        assert "payments" in declined.output
        assert "other tables are left alone" in declined.output
        assert "merchant_notes" not in declined.output
    assert _stored_version(url) == "99"  # nothing deleted
    assert served == []

    done = CliRunner().invoke(main, ["sandbox", "--port", "0", "--db", url, "--reset", "--yes"])
    assert done.exit_code == 0, done.output
    assert "deleted " in done.output
    assert len(served) == 1
    assert _stored_version(url) == str(SCHEMA_VERSION)
    if not url.startswith("sqlite"):
        assert "merchant_notes" in _tables(url)  # not the sandbox's: left alone


def _other_table(url: str) -> None:
    if url.startswith("sqlite"):
        return
    engine = _engine(url)
    with engine.begin() as conn:
        conn.exec_driver_sql("CREATE TABLE merchant_notes (id INTEGER PRIMARY KEY)")
    engine.dispose()


def _set_version_row(url: str, version: str) -> None:
    engine = _engine(url)
    with engine.begin() as conn:
        conn.execute(
            sa.text("INSERT INTO meta (key, value) VALUES ('schema_version', :v)"), {"v": version}
        )
    engine.dispose()


def _tables(url: str) -> set[str]:
    engine = _engine(url)
    try:
        with engine.connect() as conn:
            return set(sa.inspect(conn).get_table_names())
    finally:
        engine.dispose()


_OLD_TOKEN = "tok_0a1b2c3d4e5f60718293a4b5"


def test_version_2_clears_commission_that_never_settled_and_keeps_old_tokens_masking(
    url: str,
) -> None:
    """No commission before capture, and the card mask's length, on a database an older
    sandbox wrote."""
    make_v1_database(url)
    captured = ROWS["tables"]["payments"][0]
    held = {**captured, "id": "pay_01a20ca11503332bf307b7ea", "transaction_id": "held-v1",
            "status": "authorized"}  # fmt: skip
    engine = _engine(url)
    try:
        with engine.begin() as conn:
            table = sa.Table("payments", sa.MetaData(), autoload_with=conn)
            conn.execute(sa.insert(table), [{k: _value(table.c[k], v) for k, v in held.items()}])
            tokens = sa.Table("card_tokens", sa.MetaData(), autoload_with=conn)
            conn.execute(
                sa.insert(tokens).values(
                    token=_OLD_TOKEN, merchant_id=captured["merchant_id"], behaviour="success",
                    brand="amex", card_type="credit", bin="378282", last4="0005",
                    created_at=datetime(2026, 11, 24, 8, 0),
                )
            )  # fmt: skip
    finally:
        engine.dispose()

    config = SandboxConfig(db_url=url, run_reconciler_in_background=False)
    with SandboxServer(config) as server, signed_client(server.base_url) as client:
        kept = client.get(f"/v1/payments/{captured['id']}").json()
        assert (kept["commission"], kept["netAmount"]) == (
            captured["commission"],
            captured["net_amount"],
        )
        cleared = client.get(f"/v1/payments/{held['id']}").json()
        assert cleared["status"] == "authorized"
        assert (cleared["commission"], cleared["netAmount"]) == (0, 0)
        # A token stored before its card's length was kept masks as 16 digits.
        charge = client.post(
            "/v1/payments/card",
            json={
                "transactionId": "after-v2",
                "amount": 1_000,
                "currency": "TRY",
                "cardToken": _OLD_TOKEN,
                "threeDSecure": False,
            },
        )
        assert charge.status_code == 201, charge.text
        assert charge.json()["cardMask"] == "378282******0005"


def test_secrets_an_older_database_kept_in_clear_are_sealed_and_still_work(url: str) -> None:
    make_v1_database(url)
    engine = _engine(url)
    try:
        with engine.begin() as conn:
            conn.execute(
                sa.text(
                    "INSERT INTO api_keys (api_key, secret_key, merchant_id, store_id, revoked) "
                    "VALUES ('pk_test_kept_by_hand', 'sk_test_kept_by_hand_in_clear', "
                    "'mrc_other0001', 'sto_other0001', :no)"
                ),
                {"no": False},
            )
    finally:
        engine.dispose()
    config = SandboxConfig(db_url=url, run_reconciler_in_background=False)
    with (
        SandboxServer(config) as server,
        signed_client(
            server.base_url, "pk_test_kept_by_hand", "sk_test_kept_by_hand_in_clear"
        ) as c,
    ):
        assert c.get("/sandbox/fixtures").json()["merchantId"] == "mrc_other0001"
        listed = httpx2.get(f"{server.base_url}/sandbox/merchants").json()["items"]
        assert {m["merchantId"] for m in listed} == {"mrc_demo0001", "mrc_other0001"}
    engine = _engine(url)
    try:
        with engine.connect() as conn:
            keys = conn.execute(sa.text("SELECT secret_key FROM api_keys")).scalars().all()
            hooks = conn.execute(sa.text("SELECT webhook_secret FROM stores")).scalars().all()
    finally:
        engine.dispose()
    assert len(keys) == 4
    assert all(value.startswith("wbs1:") for value in [*keys, *hooks])
    assert not any("kept_by_hand" in value or "whsec_" in value for value in [*keys, *hooks])
