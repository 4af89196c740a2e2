"""``workbench run --base-url``: the flow notebooks on a sandbox already running.

Each notebook makes a merchant of its own when it starts, so a run on a persistent or
shared sandbox leaves the demo merchant's rows and business clock as they were: the
notebook that advances the clock 8 days (04) and the one that once reset the merchant
(09) included.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa
from click.testing import CliRunner

from tests.paths import ROOT
from workbench._client import Client
from workbench.cli.run import run
from workbench.config import DEFAULT_API_KEY, DEFAULT_SECRET_KEY
from workbench.sandbox import SandboxServer, tables
from workbench.sandbox.fixtures import DEMO_MERCHANT_ID
from workbench.sandbox.requestlog.tables import request_log
from workbench.testing import running_sandbox

#: The notebooks run: the signing one (which runs against a real service too), the one
#: that moves the clock, and the one whose first cells reset the merchant before.
RUN = ("01-quickstart-signing", "04-preauthorization", "09-webhooks")


@pytest.fixture
def persistent(tmp_path: Path) -> Iterator[SandboxServer]:
    with running_sandbox(db_dir=tmp_path, run_reconciler_in_background=False) as server:
        yield server


def _demo_state(server: SandboxServer) -> dict[str, object]:
    """Every row of the demo merchant, table by table, and its clock offset."""
    state: dict[str, object] = {}
    with server.sandbox.db.read() as conn:
        for table in server.sandbox.tables:
            if "merchant_id" in table.c:
                rows = conn.execute(
                    sa.select(table).where(table.c.merchant_id == DEMO_MERCHANT_ID)
                ).all()
                state[table.name] = sorted(map(repr, rows))
        merchants = tables.merchants
        state["merchant"] = conn.execute(
            sa.select(merchants).where(merchants.c.id == DEMO_MERCHANT_ID)
        ).one()
    return state


def _logged(server: SandboxServer) -> None:
    """Wait until the demo merchant's request log holds its charge: the log is written
    after the answer has gone, and would otherwise land between the two snapshots."""
    log = server.sandbox.request_log
    assert log is not None, "the sandbox keeps no request log"
    deadline = time.monotonic() + 60  # a guard only: the condition decides
    while True:
        log.drain()
        with server.sandbox.db.read() as conn:
            kept = conn.execute(
                sa.select(sa.func.count()).where(request_log.c.merchant_id == DEMO_MERCHANT_ID)
            ).scalar()
        if kept:
            return
        assert time.monotonic() < deadline, "the demo merchant's charge was never logged"
        time.sleep(0.02)


def test_a_run_on_a_running_sandbox_leaves_the_demo_merchant_as_it_was(
    persistent: SandboxServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with Client(DEFAULT_API_KEY, DEFAULT_SECRET_KEY, persistent.base_url) as demo:
        demo.payments.charge_card(
            transaction_id="demo-before-the-run", amount=5_000, card_token="tok_test_success"
        )
    _logged(persistent)
    before = _demo_state(persistent)
    folder = tmp_path / "notebooks"  # their executed copies are written beside them
    folder.mkdir()
    for name in RUN:
        shutil.copy(ROOT / "notebooks" / f"{name}.ipynb", folder)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(
        run,
        ["--notebooks", str(folder), "--base-url", persistent.base_url],
        env={"WORKBENCH_BASE_URL": None, "WORKBENCH_API_KEY": None, "WORKBENCH_SECRET_KEY": None},
    )
    assert result.exit_code == 0, result.output
    assert f"Using the sandbox at {persistent.base_url}" in result.output
    assert f"{len(RUN)} of {len(RUN)} flows passed" in result.output
    assert _demo_state(persistent) == before
    with Client(base_url=persistent.base_url) as client:
        made = [m for m in client.sandbox.list_merchants().items if not m.built_in]
    assert sorted(m.name for m in made) == [f"Notebook {name[:2]}" for name in RUN]


def test_base_url_and_external_are_exclusive() -> None:
    result = CliRunner().invoke(run, ["--external", "--base-url", "http://127.0.0.1:9"])
    assert result.exit_code == 2
    assert "exclusive" in result.output
