"""``workbench sandbox --db ...``: a database it cannot use is one line and exit status 2.

Each problem (a PostgreSQL database not created, no server, a URL that is not one, an
SQLite file, folder or mount that cannot be written) is named with its fix, without a
traceback and without the URL's password. The file-system cases run the command as a
process that file permissions bind: as root, without the capabilities that bypass them
(``setpriv``); the read-only mount is a bind mount in a namespace of its own (``unshare``).
"""

from __future__ import annotations

import os
import pty
import select
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa
from click.testing import CliRunner, Result

from tests.ports import free_port
from tests.postgres import PG_ADMIN_URL, pg_available
from workbench.cli import main
from workbench.sandbox import SandboxConfig
from workbench.sandbox.runtime import SandboxRuntime

SECRET = "s3cret-pw-not-to-print"


def _sandbox(db: str) -> Result:
    env = {"WORKBENCH_API_KEY": "", "WORKBENCH_SECRET_KEY": ""}
    return CliRunner().invoke(main, ["sandbox", "--port", "0", "--db", db], env=env)


def _one_line_error(output: str, exit_code: int) -> str:
    """The command's one error line, after checking it was the only one and status 2."""
    assert exit_code == 2, output
    assert "Traceback" not in output, output
    assert SECRET not in output, output
    errors = [line for line in output.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1, output
    return errors[0]


@pytest.mark.parametrize(
    ("db", "expected"),
    [
        ("not-a-url", "--db 'not-a-url' is not a database URL: give sqlite:///"),
        ("foo://host/db", "SQLAlchemy does not know ('foo')"),
        (f"mysql://u:{SECRET}@host/db", "names mysql, which the sandbox does not run on"),
        (f"postgresql+psycopg://u:{SECRET}@host", "'postgresql+psycopg://u:***@host' names no"),
    ],
)
def test_a_malformed_db_url_is_named_with_what_to_give(db: str, expected: str) -> None:
    result = _sandbox(db)
    assert expected in _one_line_error(result.output, result.exit_code)


def test_a_missing_postgres_database_names_the_createdb_command() -> None:
    reason = pg_available()
    if reason:
        pytest.skip(f"PostgreSQL does not answer: {reason}")
    name = f"wb_missing_{uuid.uuid4().hex[:10]}"
    server = PG_ADMIN_URL.split("@", 1)[1].rsplit("/", 1)[0]  # host:port
    user = PG_ADMIN_URL.split("://", 1)[1].split("@", 1)[0].split(":", 1)[0]
    host, port = server.split(":")
    result = _sandbox(f"postgresql+psycopg://{user}:{SECRET}@{server}/{name}")
    line = _one_line_error(result.output, result.exit_code)
    assert f'has no database "{name}"' in line, line
    assert f"`createdb -h {host} -p {port} -U {user} {name}`" in line, line
    assert f"database: postgresql+psycopg://{user}:***@{server}/{name}" in result.output


def test_no_postgres_server_names_the_address() -> None:
    port = free_port()
    result = _sandbox(f"postgresql+psycopg://u:{SECRET}@127.0.0.1:{port}/sandbox")
    line = _one_line_error(result.output, result.exit_code)
    assert f"Nothing accepts PostgreSQL connections at 127.0.0.1:{port}" in line, line


@pytest.fixture
def limited_user() -> Iterator[tuple[str, str, sa.Engine]]:
    """A database and a login role of their own on the local PostgreSQL: the role owns
    nothing, so PostgreSQL 15's public schema refuses it CREATE. Both dropped afterwards."""
    reason = pg_available()
    if reason:
        pytest.skip(f"PostgreSQL does not answer: {reason}")
    name = f"wb_denied_{uuid.uuid4().hex[:10]}"
    admin = sa.create_engine(PG_ADMIN_URL, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(sa.text(f'CREATE DATABASE "{name}"'))
        conn.execute(sa.text(f'CREATE ROLE "{name}" LOGIN'))
    try:
        yield name, PG_ADMIN_URL.split("@", 1)[1].rsplit("/", 1)[0], admin
    finally:
        with admin.connect() as conn:
            conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
            conn.execute(sa.text(f'DROP ROLE IF EXISTS "{name}"'))
        admin.dispose()


def test_a_postgres_user_refused_the_schema_is_one_line_naming_the_grant(
    limited_user: tuple[str, str, sa.Engine],
) -> None:
    name, server, _admin = limited_user
    result = _sandbox(f"postgresql+psycopg://{name}:{SECRET}@{server}/{name}")
    line = _one_line_error(result.output, result.exit_code)
    assert line == (
        f"Error: PostgreSQL at {server}: user {name} may not create the sandbox's tables in "
        f'the schema public of "{name}": as the database\'s owner run `psql -h '
        f"{server.replace(':', ' -p ')} -d {name} -c 'GRANT CREATE ON SCHEMA public TO "
        f'"{name}"\'`, or give --db a database this user owns'
    )


def test_a_postgres_user_refused_the_database_is_one_line_naming_the_grant(
    limited_user: tuple[str, str, sa.Engine],
) -> None:
    name, server, admin = limited_user
    with admin.connect() as conn:
        conn.execute(sa.text(f'REVOKE CONNECT ON DATABASE "{name}" FROM PUBLIC'))
    result = _sandbox(f"postgresql+psycopg://{name}@{server}/{name}")
    line = _one_line_error(result.output, result.exit_code)
    assert f'user {name} may not connect to "{name}": as its owner run `psql' in line, line
    assert f'GRANT CONNECT ON DATABASE "{name}" TO "{name}"' in line, line


def test_tables_another_postgres_user_made_are_one_line_naming_that_user(
    limited_user: tuple[str, str, sa.Engine],
) -> None:
    name, server, _admin = limited_user
    url = PG_ADMIN_URL.rsplit("/", 1)[0] + f"/{name}"
    # Made by the administrator; PUBLIC may use the schema, not another user's tables.
    SandboxRuntime(SandboxConfig(db_url=url, run_reconciler_in_background=False)).open().stop()
    result = _sandbox(f"postgresql+psycopg://{name}@{server}/{name}")
    line = _one_line_error(result.output, result.exit_code)
    assert f"user {name} may not use the table " in line, line
    assert "which another user made: give --db that user" in line, line


def _bound_by_permissions() -> list[str]:
    """The command prefix that runs a process file permissions bind (root bypasses them)."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root and util-linux's setpriv is missing to drop DAC overrides")
    return [setpriv, "--bounding-set=-dac_override,-dac_read_search,-fowner", "--"]


def _command_line(db: str, prefix: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    command = [*prefix, sys.executable, "-m", "workbench", "sandbox", "--port", "0", "--db", db]
    return subprocess.run(
        command, cwd=cwd, capture_output=True, text=True, timeout=120,
        env={**os.environ, "WORKBENCH_API_KEY": "", "WORKBENCH_SECRET_KEY": ""},
    )  # fmt: skip


def test_a_read_only_database_file_names_the_chmod(tmp_path: Path) -> None:
    db = tmp_path / "sandbox.db"
    db.touch()
    db.chmod(0o444)
    done = _command_line(f"sqlite:///{db}", _bound_by_permissions(), tmp_path)
    line = _one_line_error(done.stdout + done.stderr, done.returncode)
    assert f"The database file {db} is read-only for you" in line, line
    assert f"`chmod u+w {db}`" in line, line


def test_a_read_only_folder_names_the_chmod(tmp_path: Path) -> None:
    folder = tmp_path / "data"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        done = _command_line(f"sqlite:///{folder}/sandbox.db", _bound_by_permissions(), tmp_path)
    finally:
        folder.chmod(0o755)
    line = _one_line_error(done.stdout + done.stderr, done.returncode)
    assert f"The folder {folder} of the database is not writable for you" in line, line
    assert f"`chmod u+wx {folder}`" in line, line


def test_a_read_only_mount_says_so(tmp_path: Path) -> None:
    unshare = shutil.which("unshare")
    folder = tmp_path / "mounted"
    folder.mkdir()
    if unshare is None:
        pytest.skip("util-linux's unshare is missing to make a read-only mount")
    probe = subprocess.run(
        [unshare, "--user", "--map-root-user", "--mount", "true"], capture_output=True, text=True
    )
    if probe.returncode != 0:
        pytest.skip(f"no mount namespace here: {probe.stderr.strip()}")
    mount = f'mount --bind -o ro {folder} {folder} && exec "$@"'
    prefix = [unshare, "--user", "--map-root-user", "--mount", "sh", "-c", mount, "sh"]
    done = _command_line(f"sqlite:///{folder}/sandbox.db", prefix, tmp_path)
    line = _one_line_error(done.stdout + done.stderr, done.returncode)
    assert f"The database {folder}/sandbox.db is on a read-only file system" in line, line


def _log_on_a_terminal(tmp_path: Path, **env: str) -> bytes:
    """What ``workbench sandbox`` writes to a terminal until it serves (its log included)."""
    primary, secondary = pty.openpty()
    command = [sys.executable, "-m", "workbench", "sandbox", "--port", str(free_port())]
    command += ["--db", f"sqlite:///{tmp_path / 'sandbox.db'}", "--no-reconciler"]
    environment = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    environment.update(env, TERM="xterm-256color")
    proc = subprocess.Popen(command, stdout=secondary, stderr=secondary, env=environment)
    os.close(secondary)
    seen = b""
    try:
        deadline = time.monotonic() + 120  # a guard, not a measured time
        while b"Application startup complete" not in seen:
            assert time.monotonic() < deadline, seen
            assert proc.poll() is None, seen
            if select.select([primary], [], [], 0.5)[0]:
                try:
                    seen += os.read(primary, 65536)
                except OSError:  # the terminal closed: the command ended
                    break
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        os.close(primary)
    return seen


def test_no_color_leaves_colour_codes_out_of_the_server_log(tmp_path: Path) -> None:
    # On a terminal uvicorn colours its log unless told not to.
    plain = _log_on_a_terminal(tmp_path, NO_COLOR="1")
    assert b"INFO:     Application startup complete" in plain, plain
    assert b"\x1b[" not in plain, plain
