"""`create_app` touches neither disk nor network; the app's startup opens the database."""

from __future__ import annotations

import socket
from pathlib import Path

import platformdirs
import pytest
import sqlalchemy as sa

from tests.sandbox.clients import signed_client
from tests.sandbox.envelope import assert_envelope
from workbench.sandbox import SandboxConfig, SandboxServer, create_app


@pytest.fixture
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The user data directory, pointed at a folder of this test's own."""
    folder = tmp_path / "data"
    monkeypatch.setattr(platformdirs, "user_data_dir", lambda *_a, **_k: str(folder))
    return folder


def _files(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


def test_create_app_writes_nothing_until_the_app_starts(data_dir: Path, tmp_path: Path) -> None:
    app = create_app()  # the default configuration: an SQLite file in the user data dir

    assert _files(tmp_path) == []
    assert not app.state.sandbox.is_open
    with pytest.raises(RuntimeError, match="not open yet"):
        _ = app.state.sandbox.db

    with SandboxServer(app.state.sandbox.config, app=app) as server:
        assert (data_dir / "sandbox.db").is_file()
        with signed_client(server.base_url) as client:
            assert_envelope(client.get("/v1/payments/pay_missing"), 404, "SVC-GW-4004")
    assert app.state.sandbox.is_open


def test_create_app_opens_no_connection_to_postgresql() -> None:
    # A port nothing listens on: building the app would fail if it connected.
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"postgresql+psycopg://nobody@127.0.0.1:{port}/nothing"

    app = create_app(SandboxConfig(db_url=url))

    assert not app.state.sandbox.is_open
    with pytest.raises(sa.exc.OperationalError, match=str(port)):
        SandboxServer(app.state.sandbox.config, app=app).start(timeout=10)


def test_openapi_document_needs_no_database(data_dir: Path, tmp_path: Path) -> None:
    document = create_app().openapi()

    assert document["paths"]
    assert _files(tmp_path) == []
