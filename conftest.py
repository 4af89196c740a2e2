"""Repository-wide pytest hooks: private temporary folders, a sandbox for the notebook kernels.

Nothing a test does may depend on what else runs on the machine. Each pytest process
(each xdist worker too) points ``TMPDIR``, ``XDG_DATA_HOME`` and ``XDG_CONFIG_HOME`` at
folders of its own under its base temporary folder, so that subprocesses, notebook
kernels, the sandbox's default database and its replay key never meet another run's
files (nor the user's own); each test then gets a
``TMPDIR`` of its own (`_private_tmpdir`).

nbval runs each notebook in its own Jupyter kernel, a separate process that no
pytest fixture or mock reaches. When the session is going to execute notebooks,
a fresh sandbox (new temporary SQLite database, free 127.0.0.1 port) is started
in `pytest_sessionstart`, before any kernel, and ``WORKBENCH_*`` are exported
into ``os.environ`` so that every kernel inherits them; `pytest_sessionfinish`
stops it and restores the environment. Under pytest-xdist every worker that runs
notebooks starts its own (the controller runs no test and starts none).

Under pytest-xdist (``make test`` runs ``-n 3``) tests are handed out one by one,
except the units of `_unit_of`: a notebook's cells share one kernel and must run in
order on one worker, and a few files whose fixtures are expensive (a browser, a
``--workers`` sandbox) keep to one worker so they are set up once. What every worker
needs (the guide's build, the wheel and its installs) is made once per run in a folder
they share (`tests.shared`). The longest units are handed out first.
"""

from __future__ import annotations

import itertools
import os
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

# Nothing of ``workbench`` is imported at module level nor before pytest-cov starts (in an
# xdist worker it starts in its own ``pytest_sessionstart``): lines run on import before
# that would be missing from the coverage report.

# nbval's plugin (``-p no:nbval`` in pyproject.toml keeps pytest from loading it earlier)
# imports nbformat, hence jsonschema, which imports rfc3987_syntax for its "iri" format:
# 2 s of CPU in each pytest process, for a checker no notebook validation uses. Left out
# as `workbench.notebook._no_iri` leaves it out of ``workbench run`` (not imported here:
# see above).
if "jsonschema" not in sys.modules:
    sys.modules.setdefault("rfc3987_syntax", None)  # type: ignore[arg-type]
pytest_plugins = ["nbval.plugin"]

ROOT = Path(__file__).resolve().parent
NOTEBOOKS = ROOT / "notebooks"
_STATE = pytest.StashKey[dict[str, Any]]()
_PRIVATE = pytest.StashKey[dict[str, Any]]()
#: Variables pointed at this process's own folders for the whole session.
_PRIVATE_DIRS = ("TMPDIR", "XDG_DATA_HOME", "XDG_CONFIG_HOME")


def _runs_notebooks(config: pytest.Config) -> bool:
    """Whether nbval is on and a notebook under ``notebooks/`` can be collected."""
    if not (config.getoption("nbval", False) or config.getoption("nbval_lax", False)):
        return False
    for arg in config.args:
        path = Path(arg.split("::", 1)[0])
        path = (Path(config.invocation_params.dir) / path).resolve()
        if path == NOTEBOOKS or NOTEBOOKS in path.parents or path in NOTEBOOKS.parents:
            return True
    return False


def _is_xdist_controller(config: pytest.Config) -> bool:
    """Whether this process only hands tests to pytest-xdist workers (and runs none)."""
    return config.pluginmanager.has_plugin("dsession")


def _private_folders(config: pytest.Config) -> None:
    """Point ``TMPDIR``, ``XDG_DATA_HOME`` and ``XDG_CONFIG_HOME`` at this process's own."""
    factory: pytest.TempPathFactory = config._tmp_path_factory  # type: ignore[attr-defined]
    saved = {name: os.environ.get(name) for name in _PRIVATE_DIRS}
    for name in _PRIVATE_DIRS:
        os.environ[name] = str(factory.mktemp(name.lower(), numbered=False))
    tempfile.tempdir = None  # gettempdir() reads TMPDIR again
    config.stash[_PRIVATE] = {"saved": saved, "factory": factory, "count": itertools.count()}


@pytest.fixture(autouse=True)
def _private_tmpdir(request: pytest.FixtureRequest) -> Iterator[None]:
    """Each test's own ``TMPDIR`` (``tempfile`` and every subprocess use it)."""
    state = request.config.stash[_PRIVATE]
    own = state["factory"].getbasetemp() / "tmpdir" / f"t{next(state['count'])}"
    own.mkdir()
    saved = os.environ["TMPDIR"]
    os.environ["TMPDIR"] = str(own)
    tempfile.tempdir = None
    try:
        yield
    finally:
        os.environ["TMPDIR"] = saved
        tempfile.tempdir = None


#: Test files, folders (or tests, by a node id's start) run on one worker, for their
#: module-, package- or session-scoped fixtures' sake (each worker would build its own
#: otherwise); the value names the unit.
_ONE_WORKER = {
    "tests/browser/": "browser",
    # The guide is built once per run for every worker (tests/docs/site.py); these four
    # files read one load of each page (the `visits` fixture of tests/docs/conftest.py).
    "tests/docs/test_browser.py": "docs-browser",
    "tests/docs/test_code_blocks.py": "docs-browser",
    "tests/docs/test_notebook_pages.py": "docs-browser",
    "tests/docs/test_images.py": "docs-browser",
    "tests/docs/test_recipes.py": "docs-recipes",
    "tests/sandbox/test_workers.py": "workers",
    "tests/sandbox/test_schemathesis.py": "schemathesis",
    # One two-worker sandbox without reconciler per backend, shared by the modules that
    # ask for it (``RECONCILER = False``, tests/sandbox/conftest.py): each start costs
    # about 4 s of CPU and 10 s. The newman run's stays apart: it waits for newman's
    # install. One for the HTTP limits' module.
    "tests/sandbox/subscriptions/test_cancel_during_renewal.py": "two-workers",
    "tests/sandbox/test_fidelity_two_workers.py": "two-workers",
    "tests/sandbox/sessions/test_transaction_id_race.py": "two-workers",
    "tests/sandbox/control/test_merchants_two_workers.py::test_a_deleted": "two-workers",
    "tests/sandbox/edge/test_http_limits.py": "http-limits",
    "tests/foundation/test_cli_listen.py": "cli-listen",
    "tests/foundation/test_cli_trigger.py": "cli-trigger",  # one sandbox for every trigger
    "tests/client/test_webhooks_docs.py": "webhooks-docs",
    # The plugin's sandbox is shared by every worker of the run: the check that no test's
    # merchant outlives its test would see the merchants of the tests running beside it.
    "tests/client/live/test_testing_fixtures.py": "testing-fixtures",
    "tests/notebooks/test_cli_run.py": "cli-run",
    "tests/parity/": "parity",
}


def _unit_of(nodeid: str) -> str:
    """The unit of work a test belongs to under pytest-xdist (itself, unless grouped)."""
    path = nodeid.split("::", 1)[0]
    if path.endswith(".ipynb"):
        return path  # the cells of one notebook share its kernel
    for prefix, unit in _ONE_WORKER.items():
        if nodeid.startswith(prefix):
            # The backends' servers are separate fixtures: each can go to another worker.
            return f"{unit}[postgres]" if "[postgres" in nodeid else unit
    return nodeid


#: Seconds a test takes on a quiet 2-core machine, roughly (``--durations``), where it is
#: far above the rest; by the longest prefix of its node id. Only the order matters: the
#: scheduler hands out the longest units first, so that none starts while the others
#: end and keeps one worker busy alone at the end of the run.
_EXPECTED_SECONDS = {
    "tests/docs/test_commands.py::test_the_install_commands": 30.0,  # 7 installs as written
    "tests/packaging/test_lowest.py": 15.0,  # each: resolved from the index, a new environment
    "tests/packaging/test_wheel.py": 25.0,  # each: fresh virtual environments' first runs
    "tests/packaging/test_pytest_plugin.py": 2.0,
    "tests/sandbox/test_workers_crash.py": 20.0,
    # Two worker processes, their attempts at a silent receiver timing out and retried.
    "tests/sandbox/test_webhook_receiver_never_answers.py::test_two_workers": 25.0,
    "tests/sandbox/control/test_advance_after_crash.py": 4.0,  # two sandbox processes
    "tests/client/live/test_plugin_runs.py": 8.0,  # pytest runs with two workers each
    "tests/sandbox/test_workers.py": 4.0,
    "tests/sandbox/test_fidelity_two_workers.py": 1.5,
    "tests/sandbox/test_restart.py": 5.0,
    "tests/sandbox/test_schemathesis.py": 15.0,
    "tests/sandbox/edge/test_http_limits.py": 1.0,
    "tests/sandbox/openapi/test_prism.py": 3.0,
    "tests/sandbox/subscriptions/test_cancel_during_renewal.py": 8.0,
    "tests/sandbox/subscriptions/test_portal_link_at_rest.py": 7.0,
    "tests/notebooks/test_nbval_breakage.py": 12.0,
    "tests/notebooks/test_lab_forms.py": 20.0,  # JupyterLab, a kernel and Chromium
    "tests/browser/": 1.5,
    # One unit with test_images and test_notebook_pages (one load of each page for the
    # three, the `visits` fixture of tests/docs/conftest.py): about 25 s in all.
    "tests/docs/test_browser.py": 0.8,
    "tests/docs/test_generated.py": 1.0,
    "notebooks/": 1.0,  # each cell
}
#: A test not in the table.
_USUAL_SECONDS = 0.2


def _expected_seconds(nodeid: str) -> float:
    """`_EXPECTED_SECONDS` of ``nodeid`` (by its longest matching prefix), else the usual."""
    found = [prefix for prefix in _EXPECTED_SECONDS if nodeid.startswith(prefix)]
    return _EXPECTED_SECONDS[max(found, key=len)] if found else _USUAL_SECONDS


def pytest_configure(config: pytest.Config) -> None:
    """Hypothesis without its per-example deadline (200 ms by default): a wall-clock limit,
    which a loaded machine exceeds whatever the code does (two property tests failed it
    at 403 ms while the next example took 0.19 ms)."""
    from hypothesis import settings

    settings.register_profile("workbench", deadline=None)
    settings.load_profile("workbench")


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """Hand out tests one by one, each unit of `_unit_of` whole (``--dist load``), the
    longest units first (`_EXPECTED_SECONDS`).

    xdist's own ``loadgroup`` cannot be used: it marks a group by rewriting a test's
    node id, which pytest 9 no longer reads.
    """
    if config.getoption("dist") not in ("load", "loadgroup"):
        return None
    from xdist.scheduler import LoadScopeScheduling  # type: ignore[import-untyped]

    class UnitScheduling(LoadScopeScheduling):  # type: ignore[misc]
        ordered = False

        def _split_scope(self, nodeid: str) -> str:
            return _unit_of(nodeid)

        def _assign_work_unit(self, node: Any) -> None:
            if not self.ordered:  # the queue is whole from the first assignment on
                units = sorted(
                    self.workqueue.items(),
                    key=lambda unit: -sum(_expected_seconds(test) for test in unit[1]),
                )
                self.workqueue.clear()
                self.workqueue.update(units)
                self.ordered = True
            super()._assign_work_unit(node)

    return UnitScheduling(config, log)


@pytest.hookimpl(trylast=True)  # after pytest-cov has started measuring
def pytest_sessionstart(session: pytest.Session) -> None:
    """Private folders; start the notebooks' sandbox and point ``WORKBENCH_*`` at it."""
    config = session.config
    _private_folders(config)
    if _is_xdist_controller(config) or not _runs_notebooks(config):
        return
    from workbench.config import (
        DEFAULT_API_KEY,
        DEFAULT_SECRET_KEY,
        ENV_API_KEY,
        ENV_BASE_URL,
        ENV_SECRET_KEY,
    )
    from workbench.sandbox import SandboxConfig, SandboxServer

    tmp = tempfile.TemporaryDirectory(prefix="workbench-nbval-")
    sandbox = SandboxConfig(
        db_url=f"sqlite:///{Path(tmp.name) / 'sandbox.db'}",
        api_key=DEFAULT_API_KEY,
        secret_key=DEFAULT_SECRET_KEY,
        run_reconciler_in_background=False,  # the notebooks tick it where the lesson needs it
    )
    server = SandboxServer(sandbox).start()
    names = (ENV_BASE_URL, ENV_API_KEY, ENV_SECRET_KEY)
    saved = {name: os.environ.get(name) for name in names}
    os.environ[ENV_BASE_URL] = server.base_url
    os.environ[ENV_API_KEY] = sandbox.api_key
    os.environ[ENV_SECRET_KEY] = sandbox.secret_key
    config.stash[_STATE] = {"server": server, "tmp": tmp, "saved": saved}


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Stop the notebooks' sandbox, delete its database, restore the environment."""
    private = session.config.stash.get(_PRIVATE, None)
    if private is not None:
        _restore(private["saved"])
        tempfile.tempdir = None
        del session.config.stash[_PRIVATE]
    state = session.config.stash.get(_STATE, None)
    if state is None:
        return
    state["server"].stop()
    state["tmp"].cleanup()
    _restore(state["saved"])
    del session.config.stash[_STATE]


def _restore(saved: dict[str, str | None]) -> None:
    """Put environment variables back as they were."""
    for name, value in saved.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
