"""Statement parameters never reach a log or an error.

The sandbox writes the configured demo key pair into ``api_keys`` at every start. When
that write fails (a read-only database, a trigger that refuses it), SQLAlchemy's error
used to print the statement's parameters, secret key included, and ``workbench sandbox``
printed the error. Each test below makes that startup write fail, runs the real command
in a process of its own, and scans everything it printed.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa

from tests.ports import free_port
from tests.postgres import database_url
from workbench.sandbox import SandboxConfig
from workbench.sandbox.runtime import SandboxRuntime
from workbench.sandbox.storage import Database

SECRET = "sk_test_unseen1_never_printed_4f1c2d"
REFUSAL = "api_keys is refused by this test"

_PG_TRIGGER = f"""
CREATE FUNCTION refuse_key_change() RETURNS trigger AS $$
BEGIN RAISE EXCEPTION '{REFUSAL}'; END;
$$ LANGUAGE plpgsql;
CREATE TRIGGER refuse_key_change BEFORE UPDATE ON api_keys
FOR EACH ROW EXECUTE FUNCTION refuse_key_change();
"""


@pytest.fixture(params=["sqlite", "postgres"])
def prepared(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[str, str]]:
    """``(backend, url)``: a sandbox database already holding the default demo key pair."""
    with database_url(request.param, tmp_path) as url:
        SandboxRuntime(SandboxConfig(db_url=url, run_reconciler_in_background=False)).open().stop()
        yield request.param, url


def _start(url: str) -> subprocess.CompletedProcess[str]:
    """``workbench sandbox`` on ``url`` with a demo secret key of its own (an UPDATE)."""
    env = {**os.environ, "WORKBENCH_SECRET_KEY": SECRET, "WORKBENCH_API_KEY": ""}
    command = [str(Path(sys.executable).with_name("workbench")), "sandbox", "--db", url]
    command += ["--port", str(free_port()), "--no-reconciler"]
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)


def _assert_failed_without_secret(result: subprocess.CompletedProcess[str], reason: str) -> None:
    printed = result.stdout + result.stderr
    assert result.returncode != 0, printed  # the write really failed, and startup with it
    assert reason in printed, printed  # and the failure is reported
    # with the statement that failed (a built-in store's webhook secret, sealed under the
    # replay key file of the command, is written again first when the key differs)
    assert "UPDATE api_keys" in printed or "UPDATE stores" in printed
    assert SECRET not in printed
    assert SECRET[-12:] not in printed  # not even a part of it


def test_a_refused_startup_key_write_prints_no_secret(prepared: tuple[str, str]) -> None:
    backend, url = prepared
    if backend == "sqlite":
        with sqlite3.connect(url.removeprefix("sqlite:///")) as conn:
            conn.execute(
                "CREATE TRIGGER refuse_key_change BEFORE UPDATE ON api_keys "
                f"BEGIN SELECT RAISE(ABORT, '{REFUSAL}'); END"
            )
    else:
        engine = sa.create_engine(url, poolclass=sa.pool.NullPool)
        with engine.begin() as conn:
            conn.exec_driver_sql(_PG_TRIGGER)
        engine.dispose()
    _assert_failed_without_secret(_start(url), REFUSAL)


@pytest.mark.parametrize("prepared", ["postgres"], indirect=True)
def test_a_read_only_postgres_database_prints_no_secret(prepared: tuple[str, str]) -> None:
    """PostgreSQL only: where the tests run as root, a file's mode does not stop an SQLite
    write; the trigger test above makes the same write fail there."""
    _, url = prepared
    name = url.rsplit("/", 1)[1]
    engine = sa.create_engine(url, poolclass=sa.pool.NullPool, isolation_level="AUTOCOMMIT")
    with engine.connect() as conn:
        conn.exec_driver_sql(f'ALTER DATABASE "{name}" SET default_transaction_read_only = on')
    engine.dispose()
    _assert_failed_without_secret(_start(url), "read-only transaction")


def test_every_engine_hides_parameters(tmp_path: Path) -> None:
    """A runtime failure too: the error of any statement shows the statement, not its values."""
    db = Database(f"sqlite:///{tmp_path / 'x.db'}")
    try:
        assert db.engine.hide_parameters
        with pytest.raises(sa.exc.SQLAlchemyError) as caught, db.engine.begin() as conn:
            conn.execute(sa.text("SELECT * FROM no_such_table WHERE x = :x"), {"x": SECRET})
        assert SECRET not in str(caught.value)
    finally:
        db.dispose()
    # Every engine of the sandbox is made by the one function that hides them.
    root = Path(__file__).resolve().parents[3] / "workbench"
    makers = [
        str(path.relative_to(root))
        for path in root.rglob("*.py")
        if "sa.create_engine(" in path.read_text(encoding="utf-8")
        or "sqlalchemy.create_engine(" in path.read_text(encoding="utf-8")
    ]
    assert makers == ["sandbox/storage/backends.py"]
