"""``workbench merchants create | list | delete`` against a sandbox, and ``workbench trigger``
acting on the merchant whose keys it is given (a merchant of one's own, not the demo)."""

from __future__ import annotations

import json
import shlex
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import click
import pytest
import sqlalchemy as sa
from click.testing import CliRunner

from workbench._client import Client
from workbench.cli import main
from workbench.cli.merchants import parse_age
from workbench.config import DEFAULT_API_KEY, DEFAULT_SECRET_KEY
from workbench.sandbox import SandboxServer, tables
from workbench.testing import running_sandbox


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SandboxServer]:
    folder = tmp_path_factory.mktemp("merchants-cli")
    with running_sandbox(db_dir=folder, run_reconciler_in_background=False) as running:
        yield running


def _run(server: SandboxServer, *args: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    environment = {
        "WORKBENCH_BASE_URL": server.base_url,
        "WORKBENCH_API_KEY": DEFAULT_API_KEY,
        "WORKBENCH_SECRET_KEY": DEFAULT_SECRET_KEY,
        "WORKBENCH_ENVIRONMENT": None,
        "WORKBENCH_SANDBOX_ADMIN_TOKEN": None,
        **(env or {}),
    }
    result = CliRunner().invoke(main, list(args), env=environment, terminal_width=200)
    return result.exit_code, result.output


def _exported(output: str) -> dict[str, str]:
    values = {}
    for line in output.splitlines():
        words = shlex.split(line)
        assert words[0] == "export", line
        key, _, value = words[1].partition("=")
        values[key] = value
    return values


def test_create_env_prints_export_lines_a_shell_and_the_client_take(
    server: SandboxServer,
) -> None:
    code, output = _run(server, "merchants", "create", "--name", "Ayşe's laptop", "--env")
    assert code == 0, output
    values = _exported(output)
    assert set(values) == {
        "WORKBENCH_BASE_URL",
        "WORKBENCH_API_KEY",
        "WORKBENCH_SECRET_KEY",
        "WORKBENCH_WEBHOOK_SECRET",
    }
    assert values["WORKBENCH_BASE_URL"] == server.base_url
    with Client(values["WORKBENCH_API_KEY"], values["WORKBENCH_SECRET_KEY"], server.base_url) as c:
        fixtures = c.sandbox.fixtures()
    assert fixtures.merchant_id != "mrc_demo0001"
    assert fixtures.webhook_secret == values["WORKBENCH_WEBHOOK_SECRET"]


def test_create_json_and_list_and_delete(server: SandboxServer) -> None:
    code, output = _run(server, "merchants", "create", "--json")
    assert code == 0, output
    made = json.loads(output)
    code, listed = _run(server, "merchants", "list")
    assert code == 0, listed
    assert made["merchantId"] in listed
    assert "mrc_demo0001" in listed
    assert "(built in)" in listed
    assert made["secretKey"] not in listed
    code, output = _run(server, "merchants", "delete", made["merchantId"])
    assert code == 0, output
    assert f"deleted {made['merchantId']}" in output
    code, listed = _run(server, "merchants", "list")
    assert made["merchantId"] not in listed


def test_delete_older_than_removes_only_idle_merchants_made_on_demand(
    server: SandboxServer,
) -> None:
    old, fresh = (json.loads(_run(server, "merchants", "create", "--json")[1]) for _ in range(2))
    with server.sandbox.db.write() as conn:
        m = tables.merchants
        made = conn.execute(sa.select(m.c.created_at).where(m.c.id == old["merchantId"])).scalar()
        conn.execute(
            sa.update(m)
            .where(m.c.id == old["merchantId"])
            .values(created_at=made - timedelta(days=8))
        )
    code, output = _run(server, "merchants", "delete", "--older-than", "7d")
    assert code == 0, output
    assert f"deleted {old['merchantId']}" in output
    assert fresh["merchantId"] not in output
    assert "mrc_demo0001" not in output
    code, listed = _run(server, "merchants", "list")
    assert fresh["merchantId"] in listed
    assert old["merchantId"] not in listed


def test_deleting_a_built_in_merchant_is_refused_in_one_line(server: SandboxServer) -> None:
    code, output = _run(server, "merchants", "delete", "mrc_demo0001")
    assert code == 1
    assert "SVC-GW-4090" in output
    assert "Traceback" not in output


@pytest.mark.parametrize("text", ["7", "d", "7 days", "-1d", "1y"])
def test_an_age_that_is_not_one_is_refused(text: str) -> None:
    with pytest.raises(click.BadParameter):
        parse_age(text)


def test_ages() -> None:
    assert parse_age("7d") == timedelta(days=7)
    assert parse_age("12h") == timedelta(hours=12)
    assert parse_age("2w") == timedelta(weeks=2)


def test_trigger_acts_on_the_merchant_whose_keys_it_is_given(
    server: SandboxServer, tmp_path: Path
) -> None:
    values = _exported(_run(server, "merchants", "create", "--env")[1])
    with Client(DEFAULT_API_KEY, DEFAULT_SECRET_KEY, server.base_url) as demo:
        before = len(demo.sandbox.events().items)
    code, output = _run(server, "trigger", "subscription.created", env=values)
    assert code == 0, output
    with Client(values["WORKBENCH_API_KEY"], values["WORKBENCH_SECRET_KEY"], server.base_url) as c:
        assert [e.type for e in c.sandbox.events(type="subscription.created").items] == [
            "subscription.created"
        ]
    with Client(DEFAULT_API_KEY, DEFAULT_SECRET_KEY, server.base_url) as demo:
        assert len(demo.sandbox.events().items) == before


def test_listen_verifies_with_the_webhook_secret_of_the_merchant_whose_keys_it_has(
    server: SandboxServer,
) -> None:
    from workbench.cli.listen import _resolve_secret
    from workbench.config import Settings

    values = _exported(_run(server, "merchants", "create", "--env")[1])
    settings = Settings.load(
        base_url=server.base_url,
        api_key=values["WORKBENCH_API_KEY"],
        secret_key=values["WORKBENCH_SECRET_KEY"],
        env={},
        dotenv_path=None,
    )
    assert _resolve_secret(None, settings) == values["WORKBENCH_WEBHOOK_SECRET"]
