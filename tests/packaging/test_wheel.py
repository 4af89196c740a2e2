"""The built wheel, installed the way users install it, into new virtual environments.

The wheel is built once (``uv build``, `installs.Installs`) and each install is made
once for the run, every xdist worker included (each test may run on any worker): the
core alone, ``[sandbox]``, ``[sandbox,notebooks]`` and ``[testing]``. Each environment
first gets the versions ``uv.lock`` pins for that install (exported as a ``pylock.toml``),
then the wheel itself, so the wheel's own requirements are resolved against them and
must add nothing. Both steps read uv's cache only (``--offline``) and
go to the index only if the cache lacks something (the reason is printed).

Marked ``wheel``: ``make test`` runs it; ``-m "not wheel"`` leaves it out.
"""

from __future__ import annotations

import json
import socket
import subprocess
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell

from tests.ports import free_port
from workbench import Client
from workbench._exceptions import APIConnectionError
from workbench.testing import running_sandbox

from .installs import CLIENT_CALL, Installs
from .project import PYTEST_ARGS, ROOT, assert_project_passed, make_project

pytestmark = pytest.mark.wheel

#: Distributions that have no place in an install without the extra that brings them.
SERVER = {"fastapi", "starlette", "uvicorn", "httptools", "uvloop", "jinja2", "babel"}
DATABASE = {"sqlalchemy", "psycopg", "psycopg-binary", "psycopg-c", "greenlet"}
DATAFRAMES = {"pandas", "numpy"}
JUPYTER = {"jupyterlab", "jupyter-server", "ipykernel", "ipywidgets", "ipython", "nbclient"}
#: A notebook short enough for the install check, and what it needs from the sandbox.
NOTEBOOK = ROOT / "notebooks" / "01-quickstart-signing.ipynb"


def _refused(result: subprocess.CompletedProcess[str], extras: str) -> None:
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    assert "Traceback" not in output, output
    assert f"Install with: pip install 'payments-workbench[{extras}]'" in output, output


def test_the_client_alone_has_no_server_database_or_notebooks_and_signs(
    installs: Installs, tmp_path: Path
) -> None:
    core = installs("core")
    assert set(core.packages) & (SERVER | DATABASE | DATAFRAMES | JUPYTER | {"pytest"}) == set()
    with running_sandbox(run_reconciler_in_background=False) as server:  # this checkout's
        called = core.run("python", "-c", CLIENT_CALL, server.base_url, cwd=tmp_path)
    assert called.returncode == 0, called.stderr
    assert called.stdout.split("\n")[:3] == ["captured", "SVC-GW-1002", "[]"]
    signed = core.run("workbench", "sign", "GET", "/v1/payments/pay_1", cwd=tmp_path)
    assert signed.returncode == 0, signed.stderr
    assert "X-Signature:" in signed.stdout
    _refused(core.run("workbench", "sandbox", "--help", cwd=tmp_path), "sandbox")
    _refused(core.run("workbench", "run", "--help", cwd=tmp_path), "sandbox,notebooks")


def _wait_until_serving(base_url: str, process: subprocess.Popen[bytes], log: Path) -> None:
    """Until the sandbox answers (it has a minute), failing at once if it stopped."""
    deadline = time.monotonic() + 60
    with Client(base_url=base_url, max_retries=0, timeout=2) as probe:
        while True:
            assert process.poll() is None, log.read_text("utf-8", "replace")
            try:
                probe.sandbox.fixtures()
                return
            except APIConnectionError:
                assert time.monotonic() < deadline, log.read_text("utf-8", "replace")
                time.sleep(0.2)


@pytest.fixture
def sandbox_command(installs: Installs, tmp_path: Path) -> Iterator[str]:
    """``workbench sandbox`` of the ``[sandbox]`` install, running; its base URL."""
    env = installs("sandbox")
    port = free_port()
    log = tmp_path / "sandbox.log"
    command = [
        str(env.path / "bin" / "workbench"), "sandbox", "--port", str(port),
        "--db", f"sqlite:///{tmp_path / 'sandbox.db'}", "--no-reconciler",
    ]  # fmt: skip
    with log.open("wb") as out:
        process = subprocess.Popen(command, cwd=tmp_path, env=env.env, stdout=out, stderr=out)
    try:
        _wait_until_serving(f"http://127.0.0.1:{port}", process, log)
        yield f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def test_the_sandbox_extra_runs_workbench_sandbox(
    installs: Installs, sandbox_command: str, tmp_path: Path
) -> None:
    env = installs("sandbox")
    assert {"fastapi", "uvicorn", "sqlalchemy"} <= set(env.packages)
    assert set(env.packages) & ({"psycopg", "psycopg-binary"} | DATAFRAMES | JUPYTER) == set()
    with Client(base_url=sandbox_command) as client:
        charge = client.payments.charge_card(
            transaction_id="wheel-2", amount=1_000, card_token="tok_test_success"
        )
        assert client.payments.retrieve(charge.payment_id).status == "captured"
    _refused(env.run("workbench", "run", "--help", cwd=tmp_path), "notebooks")


def test_the_wheel_carries_the_hosted_pages_catalogue_and_speaks_turkish(
    installs: Installs, tmp_path: Path
) -> None:
    with zipfile.ZipFile(installs.wheel) as wheel:
        names = set(wheel.namelist())
    assert "workbench/sandbox/checkout/locale/tr/LC_MESSAGES/messages.po" in names
    assert "workbench/sandbox/checkout/templates/merchant_return.html" in names
    env = installs("sandbox")
    script = (
        "import workbench.sandbox.checkout.languages as lang\n"
        "print(lang.__file__.startswith(sys.prefix))\n"
        "print(lang.translations('tr').gettext('Card number'))\n"
        "print(lang.amount(123456, 'tr'), '|', lang.amount(123456, 'en'))\n"
    )
    result = env.run("python", "-c", f"import sys\n{script}", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["True", "Kart numarası", "1.234,56 TL | TRY 1,234.56"]


def test_sandbox_and_notebooks_run_a_flow_notebook(installs: Installs, tmp_path: Path) -> None:
    env = installs("sandbox-notebooks")
    folder = tmp_path / "notebooks"
    folder.mkdir()
    book = nbformat.read(NOTEBOOK, as_version=4)
    book.cells.append(new_code_cell("import sys\nprint(sys.prefix)"))  # which Python ran it
    nbformat.write(book, folder / NOTEBOOK.name)
    result = env.run(
        "workbench", "run", "--notebooks", folder, NOTEBOOK.stem, "--json", "-", cwd=tmp_path
    )
    assert result.returncode == 0, result.stdout + result.stderr
    summary = json.loads(result.stdout)
    assert (summary["passed"], summary["failed"]) == (1, 0), summary
    executed = nbformat.read(folder / "_executed" / NOTEBOOK.name, as_version=4)
    assert executed.cells[-1].outputs[0]["text"].strip() == str(env.path)


def test_sandbox_and_notebooks_run_the_shipped_notebooks_in_an_empty_folder(
    installs: Installs, tmp_path: Path
) -> None:
    env = installs("sandbox-notebooks")
    shipped = env.run("workbench", "notebooks", "list", cwd=tmp_path)
    assert shipped.returncode == 0, shipped.stderr
    names = [line.strip() for line in shipped.stdout.splitlines()[1:]]
    assert names == sorted(p.name for p in (ROOT / "notebooks").glob("*.ipynb")), names
    assert str(env.path) in shipped.stdout.splitlines()[0]  # from the install, not the checkout
    result = env.run("workbench", "run", NOTEBOOK.stem, "--json", "-", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "running the ones shipped with the package" in result.stderr, result.stderr
    summary = json.loads(result.stdout)
    assert (summary["passed"], summary["failed"]) == (1, 0), summary
    assert (tmp_path / "notebooks" / "_executed" / NOTEBOOK.name).is_file()
    assert not list((tmp_path / "notebooks").glob("*.ipynb"))  # nothing else written here


def test_lab_opens_jupyterlab_on_a_copy_that_keeps_the_readers_edits(
    installs: Installs, tmp_path: Path
) -> None:
    env = installs("sandbox-notebooks")
    db = ("--db", f"sqlite:///{tmp_path / 'sandbox.db'}")
    # A session whose JupyterLab stops at its configuration: the copy is made first.
    first = env.run("workbench", "lab", *db, "--ServerApp.port=none", cwd=tmp_path)
    assert first.returncode == 1, first.stdout + first.stderr
    assert "The 'port' trait of a ServerApp instance" in first.stderr, first.stderr  # it ran
    assert "JupyterLab exited with status 1." in first.stderr, first.stderr
    copies = sorted(p.name for p in (tmp_path / "notebooks").glob("*.ipynb"))
    assert copies == sorted(p.name for p in (ROOT / "notebooks").glob("*.ipynb"))
    assert f"Copied {len(copies)} notebooks into notebooks/" in first.stdout, first.stdout
    edited = tmp_path / "notebooks" / NOTEBOOK.name
    edited.write_text('{"reader": "edits"}', "utf-8")
    (tmp_path / "notebooks" / "03-card-3ds.ipynb").unlink()
    again = env.run("workbench", "notebooks", "copy", "notebooks", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert "Copied 1 notebooks" in again.stdout, again.stdout
    assert edited.read_text("utf-8") == '{"reader": "edits"}'


def test_lab_leaves_the_readers_copy_and_fails_with_jupyterlab(
    installs: Installs, tmp_path: Path
) -> None:
    """A run of its own (another worker may take it): the reader's folder holds one edited
    notebook, which lab opens as it is; JupyterLab cannot listen and lab says so."""
    env = installs("sandbox-notebooks")
    edited = tmp_path / "notebooks" / NOTEBOOK.name
    edited.parent.mkdir()
    edited.write_text('{"reader": "edits"}', "utf-8")
    with socket.socket() as taken:  # JupyterLab cannot listen here and must say so
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        failed = env.run(
            "workbench", "lab", "--db", f"sqlite:///{tmp_path / 'sandbox.db'}", "--no-browser",
            f"--ServerApp.port={port}", "--ServerApp.port_retries=0", cwd=tmp_path,
        )  # fmt: skip
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert f"port {port} is not available" in failed.stderr, failed.stderr  # JupyterLab's
    assert "JupyterLab exited with status 1." in failed.stderr, failed.stderr
    assert "Copied" not in failed.stdout, failed.stdout
    assert list((tmp_path / "notebooks").glob("*.ipynb")) == [edited]
    assert edited.read_text("utf-8") == '{"reader": "edits"}'


def test_the_testing_extra_gives_a_fresh_project_the_fixtures(
    installs: Installs, tmp_path: Path
) -> None:
    env = installs("testing")
    assert {"pytest", "fastapi"} <= set(env.packages)
    assert set(env.packages) & (DATAFRAMES | JUPYTER) == set()
    project = make_project(tmp_path / "project")
    assert_project_passed(env.run("pytest", *PYTEST_ARGS, cwd=project))


def test_the_wheel_holds_the_notebook_and_testing_packages_and_the_plugins_entry_point(
    installs: Installs,
) -> None:
    with zipfile.ZipFile(installs.wheel) as wheel:
        names = set(wheel.namelist())
        [entry_points] = [n for n in names if n.endswith(".dist-info/entry_points.txt")]
        declared = wheel.read(entry_points).decode("utf-8")
    assert {
        "workbench/notebook/__init__.py",
        "workbench/notebook/widgets.py",
        "workbench/notebook/runner.py",
        "workbench/notebook/shipped.py",
        "workbench/testing/__init__.py",
        "workbench/testing/pytest_plugin.py",
        "workbench/notebooks/01-quickstart-signing.ipynb",
    } <= names
    moved = {"workbench/testing.py", "workbench/pytest_plugin.py", "workbench/widgets.py"}
    assert moved & names == set()
    assert "workbench/notebooks/ruff.toml" not in names  # the clone's, not the reader's
    assert "[pytest11]\nworkbench = workbench.testing.pytest_plugin\n" in declared
