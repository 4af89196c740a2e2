"""The lowest versions pyproject.toml allows (``uv pip compile --resolution lowest-direct``).

A resolver may pick any version above a floor, so the floors must be versions that work
and that have no published advisory (pyproject.toml names them). The core and the
sandbox are resolved at their floors from the index, then installed beside the built
wheel, offline from uv's cache where it can: the client signs against a sandbox, and the
sandbox serves.

Marked ``wheel``, like the wheel's own tests (``-m "not wheel"`` leaves it out).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from workbench.testing import running_sandbox

from .installs import CLIENT_CALL, Installs

pytestmark = pytest.mark.wheel

#: The lowest versions pyproject.toml allows, as `Installs.lowest` must find them.
FLOORS = {
    "pydantic": "2.9.0",
    "python-dotenv": "1.2.2",
    "click": "8.1.0",
    "fastapi": "0.133.0",
    "starlette": "1.3.1",
    "uvicorn": "0.37.0",
    "sqlalchemy": "2.0.36",
    "jinja2": "3.1.6",
    "h11": "0.16.0",
}

SANDBOX_SMOKE = """
import asyncio
import sys

import uvicorn

from workbench import AsyncClient, Client, SignatureError
from workbench.cli.sandbox import WORKER_HEALTHCHECK_SECONDS
from workbench.config import DEFAULT_API_KEY, DEFAULT_SECRET_KEY
from workbench.sandbox import SandboxConfig, SandboxServer

# What `workbench sandbox --workers N` hands uvicorn.
uvicorn.Config("x:y", workers=2, timeout_worker_healthcheck=WORKER_HEALTHCHECK_SECONDS)
config = SandboxConfig(db_url=f"sqlite:///{sys.argv[1]}", run_reconciler_in_background=False)
with SandboxServer(config) as server:
    with Client(DEFAULT_API_KEY, DEFAULT_SECRET_KEY, server.base_url) as client:
        charge = client.payments.charge_card(
            transaction_id="low-1", amount=2_500, card_token="tok_test_success"
        )
        client.payments.refund(charge.payment_id, amount=500)
        print(charge.status, client.payments.retrieve(charge.payment_id).refundable_amount)
    async def retrieve():
        async with AsyncClient(DEFAULT_API_KEY, "sk_test_wrong", server.base_url) as wrong:
            try:
                await wrong.payments.retrieve(charge.payment_id)
            except SignatureError as exc:
                return exc.code
    print(asyncio.run(retrieve()))
"""


def _at_floors(packages: dict[str, str], names: set[str]) -> None:
    found = {name: packages.get(name) for name in names}
    assert found == {name: FLOORS[name] for name in names}, found


def test_the_lowest_allowed_versions_of_the_core_sign(installs: Installs, tmp_path: Path) -> None:
    core = installs.lowest("core", ())
    _at_floors(core.packages, {"pydantic", "python-dotenv", "click"})
    with running_sandbox(run_reconciler_in_background=False) as server:  # this checkout's
        called = core.run("python", "-c", CLIENT_CALL, server.base_url, cwd=tmp_path)
    assert called.returncode == 0, called.stderr
    assert called.stdout.split("\n")[:3] == ["captured", "SVC-GW-1002", "[]"]


def test_the_lowest_allowed_versions_of_the_sandbox_serve(
    installs: Installs, tmp_path: Path
) -> None:
    sandbox = installs.lowest("sandbox", ("sandbox",))
    _at_floors(sandbox.packages, set(FLOORS) - {"pydantic"})  # FastAPI takes a newer one
    smoke = sandbox.run("python", "-c", SANDBOX_SMOKE, tmp_path / "low.db", cwd=tmp_path)
    assert smoke.returncode == 0, smoke.stdout + smoke.stderr
    assert smoke.stdout.splitlines() == ["captured 2000", "SVC-GW-1002"], smoke.stdout
