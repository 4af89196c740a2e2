"""``workbench sandbox``: the banner shows the demo secret only when it is the public default."""

from __future__ import annotations

import gc
import os
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from workbench.cli import main
from workbench.cli.sandbox import ENV_DB, ENV_RECONCILER, ENV_WORKERS, config_from_environment
from workbench.config import DEFAULT_SECRET_KEY
from workbench.sandbox import SandboxServer


@pytest.fixture
def served(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """Replace the server so the command returns instead of serving forever."""
    calls: list[dict[str, Any]] = []

    def fake_run(app: object, **kwargs: Any) -> None:
        calls.append({"app": app, **kwargs})
        if not isinstance(app, str):  # several workers get the factory's import string
            app.state.sandbox.stop()  # type: ignore[attr-defined]

    monkeypatch.setattr("workbench.cli.sandbox.serve", fake_run)
    return calls


def test_banner_prints_base_url_and_default_demo_credentials(served: list[dict[str, Any]]) -> None:
    result = CliRunner().invoke(
        main,
        ["sandbox", "--port", "0", "--db", "sqlite://"],
        env={"WORKBENCH_API_KEY": "", "WORKBENCH_SECRET_KEY": ""},
    )
    assert result.exit_code == 0, result.output
    port = served[0]["port"]
    assert port != 0, "the port bound, not the 0 asked for"
    assert served[0]["sock"].fileno() == -1, "the socket is closed once the command ends"
    assert f"http://127.0.0.1:{port}/" in result.output
    assert DEFAULT_SECRET_KEY in result.output


def test_user_provided_secret_is_masked(served: list[dict[str, Any]]) -> None:
    secret = "sk_test_my_own_very_secret_value"
    result = CliRunner().invoke(
        main,
        ["sandbox", "--port", "0", "--db", "sqlite://"],
        env={"WORKBENCH_API_KEY": "pk_test_mine_1234", "WORKBENCH_SECRET_KEY": secret},
    )
    assert result.exit_code == 0, result.output
    assert secret not in result.output
    assert "alue" in result.output
    sandbox = served[0]["app"].state.sandbox
    assert sandbox.config.api_key == "pk_test_mine_1234"


def test_several_workers_refuse_an_in_memory_database(served: list[dict[str, Any]]) -> None:
    result = CliRunner().invoke(
        main, ["sandbox", "--port", "0", "--workers", "2", "--db", "sqlite://"]
    )
    assert result.exit_code == 2
    assert "needs a database the processes can share" in result.output
    assert served == []


def test_several_workers_share_an_sqlite_file(
    served: list[dict[str, Any]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in (ENV_DB, ENV_RECONCILER, ENV_WORKERS):  # the command sets them: restore after
        monkeypatch.setenv(name, "")
    db = f"sqlite:///{tmp_path / 'shared.db'}"
    result = CliRunner().invoke(main, ["sandbox", "--port", "0", "--workers", "3", "--db", db])
    assert result.exit_code == 0, result.output
    assert served[0]["app"] == "workbench.cli.sandbox:app_from_environment"
    assert served[0]["workers"] == 3
    assert os.environ[ENV_WORKERS] == "3"
    assert os.environ[ENV_DB] == db
    # The tables and fixtures were made once, before any worker started.
    assert (tmp_path / "shared.db").stat().st_size > 0
    config = config_from_environment()
    assert config.workers == 3
    assert config.db_url == db


def test_one_worker_is_served_in_process(served: list[dict[str, Any]]) -> None:
    result = CliRunner().invoke(
        main, ["sandbox", "--port", "0", "--workers", "1", "--db", "sqlite://"]
    )
    assert result.exit_code == 0, result.output
    assert not isinstance(served[0]["app"], str)
    assert "workers" not in served[0]


def test_one_worker_opens_the_apps_own_database_once_before_serving(
    served: list[dict[str, Any]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import workbench.sandbox.runtime as runtime

    opened: list[str] = []

    def counting_open_schema(db: Any, *args: Any, **kwargs: Any) -> Any:
        opened.append(db.url)
        return open_schema(db, *args, **kwargs)

    open_schema = runtime.open_schema
    monkeypatch.setattr(runtime, "open_schema", counting_open_schema)
    open_when_served: list[bool] = []
    monkeypatch.setattr(
        "workbench.cli.sandbox.serve",
        lambda app, **kwargs: (
            open_when_served.append(app.state.sandbox.is_open) or app.state.sandbox.stop()
        ),
    )
    db = f"sqlite:///{tmp_path / 'one.db'}"
    result = CliRunner().invoke(main, ["sandbox", "--port", "0", "--db", db])
    assert result.exit_code == 0, result.output
    assert open_when_served == [True]  # the app's startup finds it open: no second opening
    assert len(opened) == 1


def test_the_collector_is_off_until_the_app_starts_and_on_again_after(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    collecting: list[bool] = []

    def run(app: Any, **kwargs: Any) -> None:
        collecting.append(gc.isenabled())
        with SandboxServer(app.state.sandbox.config, app=app):  # runs the app's startup
            collecting.append(gc.isenabled())
        collecting.append(gc.isenabled())

    monkeypatch.setattr("workbench.cli.sandbox.serve", run)
    try:
        result = CliRunner().invoke(main, ["sandbox", "--port", "0", "--db", "sqlite://"])
        assert result.exit_code == 0, result.output
        assert collecting == [False, True, True]
        assert gc.isenabled()
        assert gc.get_freeze_count() > 0  # what the startup made, frozen
    finally:
        gc.unfreeze()
        gc.enable()


def test_request_log_size_reaches_the_app_and_every_worker(
    served: list[dict[str, Any]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from workbench.cli.sandbox import ENV_REQUEST_LOG

    result = CliRunner().invoke(main, ["sandbox", "--port", "0", "--db", "sqlite://"])
    assert result.exit_code == 0, result.output
    assert served[0]["app"].state.sandbox.config.request_log_size == 1000
    result = CliRunner().invoke(
        main, ["sandbox", "--port", "0", "--db", "sqlite://", "--request-log", "0"]
    )
    assert result.exit_code == 0, result.output
    assert served[1]["app"].state.sandbox.request_queue is None  # the log is off
    for name in (ENV_DB, ENV_RECONCILER, ENV_WORKERS, ENV_REQUEST_LOG):
        monkeypatch.setenv(name, "")
    db = f"sqlite:///{tmp_path / 'shared.db'}"
    result = CliRunner().invoke(
        main, ["sandbox", "--port", "0", "--workers", "2", "--db", db, "--request-log", "25"]
    )
    assert result.exit_code == 0, result.output
    assert config_from_environment().request_log_size == 25
