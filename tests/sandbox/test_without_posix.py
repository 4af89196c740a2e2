"""The sandbox on a system without POSIX's ``fcntl`` and ``os.mkfifo`` (Windows, say).

A subprocess runs with a ``sitecustomize`` that makes ``import fcntl`` fail and removes
``os.mkfifo`` before anything else is imported: a single-process sandbox on an SQLite
file serves concurrent writes there, and ``workbench sandbox --workers 2`` says plainly
that it cannot run, exit status 2, no traceback.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.paths import ROOT

BLOCKER = """
import os
import sys


class _NoPosixLocks:
    def find_spec(self, name, path=None, target=None):
        if name == "fcntl":
            raise ModuleNotFoundError("No module named 'fcntl'", name=name)
        return None


sys.meta_path.insert(0, _NoPosixLocks())
sys.modules.pop("fcntl", None)
del os.mkfifo
"""

SERVE = """
import asyncio
import os
import sys

try:
    import fcntl  # noqa: F401
except ImportError:
    pass
else:
    raise SystemExit("the blocker let fcntl through")
assert not hasattr(os, "mkfifo")

from workbench import AsyncClient
from workbench.config import DEFAULT_API_KEY, DEFAULT_SECRET_KEY
from workbench.sandbox import SandboxConfig, SandboxServer
from workbench.sandbox.storage.writelock import CROSS_PROCESS

config = SandboxConfig(db_url=f"sqlite:///{sys.argv[1]}", reconciler_interval_seconds=0.05)


async def charges(base_url):
    async with AsyncClient(DEFAULT_API_KEY, DEFAULT_SECRET_KEY, base_url) as client:
        made = await asyncio.gather(*(
            client.payments.charge_card(
                transaction_id=f"np-{i}", amount=100 + i, card_token="tok_test_success"
            )
            for i in range(40)
        ))
        again = [await client.payments.retrieve(p.payment_id) for p in made]
    return sorted({p.status for p in again}), len({p.id for p in again})


with SandboxServer(config) as server:
    print(asyncio.run(charges(server.base_url)))
print(CROSS_PROCESS, "fcntl" in sys.modules)
"""


def _without_posix(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    site = tmp_path / "site"
    site.mkdir(exist_ok=True)
    (site / "sitecustomize.py").write_text(BLOCKER, "utf-8")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(site), str(ROOT)]))
    return subprocess.run(
        [sys.executable, *args], cwd=tmp_path, env=env, capture_output=True, text=True,
        timeout=120,
    )  # fmt: skip


def test_one_process_serves_concurrent_writes_on_an_sqlite_file(tmp_path: Path) -> None:
    done = _without_posix(tmp_path, "-c", SERVE, str(tmp_path / "sandbox.db"))
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines() == ["(['captured'], 40)", "False False"], done.stdout


def test_workers_say_plainly_where_they_cannot_run(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'sandbox.db'}"
    done = _without_posix(tmp_path, "-m", "workbench", "sandbox", "--workers", "2", "--db", db)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    assert "--workers above 1 runs on Linux and macOS only" in done.stderr, done.stderr
