"""`create_app` touches neither disk nor network; the app's startup opens the database."""

from __future__ import annotations

import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import platformdirs
import pytest
import sqlalchemy as sa
from fastapi.routing import APIRoute
from starlette.responses import Response

from tests.ports import free_port
from tests.sandbox.clients import signed_client
from tests.sandbox.envelope import assert_envelope
from workbench.sandbox import SandboxConfig, SandboxServer, create_app
from workbench.sandbox.app import YOUNG_COLLECTION_THRESHOLD
from workbench.sandbox.lazy_routes import LazyAPIRoute
from workbench.sandbox.routing import ERROR_RESPONSES, SandboxDep


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
    port = free_port()
    url = f"postgresql+psycopg://nobody@127.0.0.1:{port}/nothing"

    app = create_app(SandboxConfig(db_url=url))

    assert not app.state.sandbox.is_open
    with pytest.raises(sa.exc.OperationalError, match=str(port)):
        SandboxServer(app.state.sandbox.config, app=app).start(timeout=10)


def test_openapi_document_needs_no_database(data_dir: Path, tmp_path: Path) -> None:
    document = create_app().openapi()

    assert document["paths"]
    assert _files(tmp_path) == []


_FROZEN_AFTER_STARTUP = """
import gc, sys
from fastapi.testclient import TestClient
from workbench.sandbox import SandboxConfig, create_app
config = SandboxConfig(db_url=sys.argv[1], owns_process=sys.argv[2] == "own",
                       run_reconciler_in_background=False)
before = gc.get_threshold()[0]
with TestClient(create_app(config)):
    print(before, gc.get_threshold()[0], gc.get_freeze_count())
"""


@pytest.mark.parametrize("owns", ["own", "shared"])
def test_a_sandbox_that_owns_its_process_freezes_what_startup_allocated(
    tmp_path: Path, owns: str
) -> None:
    # In a process of its own: freezing is process-wide, and the test's must stay as it is.
    url = f"sqlite:///{tmp_path / 'sandbox.db'}"
    result = subprocess.run(
        [sys.executable, "-c", _FROZEN_AFTER_STARTUP, url, owns],
        capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    before, young, frozen = map(int, result.stdout.split()[-3:])
    # The app, its tables and every module imported: well over ten thousand objects.
    assert frozen > 10_000 if owns == "own" else frozen == 0
    # The youngest objects are collected less often only where the sandbox owns the process.
    assert young == (YOUNG_COLLECTION_THRESHOLD if owns == "own" else before)
    assert before != YOUNG_COLLECTION_THRESHOLD


def test_the_sandbox_commands_workers_own_their_processes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from workbench.cli.sandbox import ENV_DB, config_from_environment

    monkeypatch.setenv(ENV_DB, f"sqlite:///{tmp_path / 'sandbox.db'}")
    assert config_from_environment().owns_process


def test_the_openapi_document_is_made_when_first_asked_for(data_dir: Path) -> None:
    app = create_app()
    with SandboxServer(app.state.sandbox.config, app=app) as server:
        with signed_client(server.base_url) as client:
            assert client.get("/sandbox/fixtures").status_code == 200
        assert app.openapi_schema is None
        with signed_client(server.base_url) as client:
            assert client.get("/openapi.json").json()["openapi"].startswith("3.")
        assert app.openapi_schema is not None


#: What serving the API never needs at startup: the hosted pages' templates and QR codes,
#: the webhook sender's HTTP client, the PostgreSQL dialect on SQLite, h11 (httptools serves).
NOT_AT_START = ("jinja2", "segno", "httpx", "httpx2", "sqlalchemy.dialects.postgresql", "h11")


def test_building_the_app_loads_nothing_that_only_later_requests_need() -> None:
    code = (
        "import sys\n"
        "from workbench.sandbox import SandboxConfig, create_app\n"
        "from workbench.sandbox.bodies import ErrorEnvelope\n"
        "create_app(SandboxConfig(db_url='sqlite://'))\n"
        f"print(sorted(m for m in {NOT_AT_START!r} if m in sys.modules))\n"
        "print(ErrorEnvelope.__pydantic_complete__)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    # The envelope's validator is built with its first use (the document, say), not 250
    # times over for the error statuses of every route.
    assert out.split("\n")[:2] == ["[]", "False"]


#: Routers are module-level: a process of its own, where no other app built their routes.
_FIRST_REQUEST = """
import sys
from fastapi.testclient import TestClient
from workbench.config import DEFAULT_API_KEY, DEFAULT_SECRET_KEY
from workbench.sandbox import SandboxConfig, create_app
from workbench.sandbox.lazy_routes import LazyAPIRoute
from workbench.signing import sign_request
config = SandboxConfig(db_url=sys.argv[1], run_reconciler_in_background=False)
app = create_app(config)
routes = [route for route in app.routes if isinstance(route, LazyAPIRoute)]
print(len(routes), sum(route.built for route in routes))
headers = sign_request(
    api_key=DEFAULT_API_KEY, secret_key=DEFAULT_SECRET_KEY, method="GET", url="/sandbox/fixtures"
).as_dict()
with TestClient(app, base_url="http://127.0.0.1") as client:
    print(client.get("/sandbox/fixtures", headers=headers).status_code)
print(",".join(route.path for route in routes if route.built))
print(bool(app.openapi()["paths"]), all(route.built for route in routes))
"""


def test_a_route_builds_its_validators_with_its_first_request(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'sandbox.db'}"
    result = subprocess.run(
        [sys.executable, "-c", _FIRST_REQUEST, url],
        capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    declared, built_at_start = map(int, result.stdout.split("\n")[0].split())
    assert declared > 40
    assert built_at_start == 0
    # The request built its own route only; the document built every one.
    assert result.stdout.split("\n")[1:4] == ["200", "/sandbox/fixtures", "True True"]


def _charge(payment_id: str, sandbox: SandboxDep) -> Response:
    """A route of the sandbox's kind: a path parameter, a dependency, error statuses."""
    return Response(payment_id)


def test_a_route_read_by_several_threads_at_once_is_built_once() -> None:
    route = LazyAPIRoute(
        "/v1/payments/{payment_id}", _charge, methods=["GET"], responses=ERROR_RESPONSES
    )
    start = threading.Barrier(8)

    def dependant() -> object:
        start.wait()
        return route.dependant

    with ThreadPoolExecutor(8) as pool:
        seen = list(pool.map(lambda _: dependant(), range(8)))

    assert route.built
    assert all(one is seen[0] for one in seen)
    assert [param.name for param in route.dependant.path_params] == ["payment_id"]


def test_a_route_makes_its_error_statuses_validators_when_they_are_read() -> None:
    options: dict[str, Any] = {"methods": ["GET"], "responses": ERROR_RESPONSES}
    lazy = LazyAPIRoute("/v1/payments/{payment_id}", _charge, **options)
    eager = APIRoute("/v1/payments/{payment_id}", _charge, **options)

    assert lazy.dependant.path_params  # a request's analysis ...
    assert "response_fields" not in vars(lazy)  # ... makes no error validator
    assert lazy.responses == eager.responses
    made = {
        status: (field.name, field.field_info.annotation)
        for status, field in lazy.response_fields.items()
    }
    assert made == {
        status: (field.name, field.field_info.annotation)
        for status, field in eager.response_fields.items()
    }
    assert len(made) == len(ERROR_RESPONSES)
