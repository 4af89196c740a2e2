"""Extras: the core never imports the heavy parts; a missing extra is named, not a traceback.

A missing package is simulated by ``sys.modules[name] = None``: ``import name`` then fails
with ``ModuleNotFoundError`` and ``importlib.util.find_spec(name)`` answers ``None``, as
in an environment where it was never installed. The real installs, from the built wheel,
are exercised by ``test_wheel.py``.
"""

from __future__ import annotations

import importlib.metadata
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from workbench._extras import (
    EXTRAS,
    MissingExtraError,
    extra_for_module,
    install_command,
    missing_extras,
    require,
)
from workbench.cli import main

ROOT = Path(__file__).resolve().parents[2]
#: What a merchant's server must not get from the client: web server, database drivers,
#: DataFrames, Jupyter.
HEAVY = (
    "fastapi",
    "starlette",
    "uvicorn",
    "sqlalchemy",
    "psycopg",
    "pandas",
    "numpy",
    "ipywidgets",
    "IPython",
    "nbclient",
    "jupyterlab",
    "jinja2",
)


def _block(monkeypatch: pytest.MonkeyPatch, *modules: str) -> None:
    """Make ``modules`` look uninstalled for the rest of the test."""
    for name in modules:
        monkeypatch.setitem(sys.modules, name, None)


def _invoke(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def _refused(result: Result, extras: str) -> None:
    """The command stopped with status 1 and one message naming ``pip install``."""
    assert result.exit_code == 1, result.output
    assert isinstance(result.exception, SystemExit), result.exception  # nothing escaped
    assert "Traceback" not in result.output
    assert f"pip install 'payments-workbench[{extras}]'" in result.output, result.output


def test_import_workbench_and_a_client_load_none_of_the_heavy_parts() -> None:
    code = (
        "import sys, workbench, workbench.webhooks, workbench.signing\n"
        "client = workbench.Client('pk_test_x', 'sk_test_x', 'http://127.0.0.1:9')\n"
        "aclient = workbench.AsyncClient('pk_test_x', 'sk_test_x', 'http://127.0.0.1:9')\n"
        "client.close()\n"
        f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"


def test_lab_loads_neither_nbformat_nor_pandas_before_starting_jupyterlab() -> None:
    """JupyterLab loads nbformat itself; loading it first (JSON Schema's formats: seconds)
    only delayed JupyterLab's start."""
    code = (
        "import sys, workbench.cli.lab\n"
        "print(sorted(m for m in ('nbformat', 'jsonschema', 'pandas') if m in sys.modules))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"


@pytest.mark.parametrize(
    ("args", "blocked", "extras"),
    [
        (("sandbox", "--help"), ("fastapi",), "sandbox"),
        (("sandbox", "--port", "0"), ("sqlalchemy",), "sandbox"),
        (("run", "--help"), ("nbclient",), "notebooks"),
        (("run",), ("nbformat", "uvicorn"), "sandbox,notebooks"),
        (("lab", "--help"), ("jupyterlab",), "notebooks"),
        (("lab",), ("segno", "pandas"), "sandbox,notebooks"),
    ],
)
def test_a_command_without_its_extra_names_the_install(
    monkeypatch: pytest.MonkeyPatch, args: tuple[str, ...], blocked: tuple[str, ...], extras: str
) -> None:
    _block(monkeypatch, *blocked)
    result = _invoke(*args)
    _refused(result, extras)
    assert result.output.startswith(f"Error: workbench {args[0]} needs the [{extras}] extra")


def test_the_command_list_still_shows_what_each_missing_command_needs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _block(monkeypatch, "fastapi")
    result = _invoke("--help")
    assert result.exit_code == 0, result.output
    listed = " ".join(result.output.split())  # help text is wrapped to the terminal
    assert "sandbox Run the local sandbox server. (needs the [sandbox] extra)" in listed
    assert "sign Sign a request and diagnose signature mismatches." in listed  # core: unaffected


def test_run_without_the_sandbox_extra_stops_before_any_notebook(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    notebook = tmp_path / "01-flow.ipynb"
    notebook.write_text(
        '{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}', encoding="utf-8"
    )
    _block(monkeypatch, "httptools")
    result = _invoke("run", "--notebooks", str(tmp_path))
    _refused(result, "sandbox")
    assert "workbench run (without --external) needs the [sandbox] extra" in result.output
    assert not (tmp_path / "_executed").exists()


def test_a_postgresql_sandbox_without_the_driver_names_the_postgres_extra(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _block(monkeypatch, "psycopg")
    result = _invoke("sandbox", "--port", "0", "--db", "postgresql+psycopg://127.0.0.1:9/none")
    _refused(result, "postgres")


def test_the_sandbox_on_sqlite_needs_no_postgresql_driver() -> None:
    # storage/statements.py compares psycopg's transaction status by value: same value, no import
    from psycopg.pq import TransactionStatus

    from workbench.sandbox.storage import statements

    assert statements._IDLE == TransactionStatus.IDLE
    code = (
        "import sys\nsys.modules['psycopg'] = None\n"
        "from workbench.testing import client_for, running_sandbox\n"
        "with running_sandbox(run_reconciler_in_background=False) as server:\n"
        "    with client_for(server) as client:\n"
        "        print(client.payments.charge_card(transaction_id='o-1', amount=100,"
        " card_token='tok_test_success').status)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    ).stdout
    assert out.strip() == "captured"


def test_require_and_the_message() -> None:
    assert install_command(["notebooks", "sandbox"]) == (
        "pip install 'payments-workbench[sandbox,notebooks]'"
    )
    require("anything")  # nothing asked, nothing missing
    assert missing_extras("sandbox", "notebooks", "testing", "postgres") == ()
    with pytest.raises(ValueError, match="no such extra: gpu"):
        missing_extras("gpu")
    error = MissingExtraError("workbench lab", ["notebooks", "sandbox"])
    assert isinstance(error, ModuleNotFoundError)
    assert error.extras == ("sandbox", "notebooks")
    assert str(error) == (
        "workbench lab needs the [sandbox,notebooks] extras of payments-workbench, not "
        "installed here. Install with: pip install 'payments-workbench[sandbox,notebooks]'"
    )
    assert extra_for_module("sqlalchemy.orm") == "sandbox"
    assert extra_for_module("starlette") == "sandbox"
    assert extra_for_module("IPython.display") == "notebooks"
    assert extra_for_module("httpx2") is None


def test_require_names_only_what_is_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    _block(monkeypatch, "ipykernel")
    with pytest.raises(MissingExtraError) as caught:
        require("a flow", "sandbox", "notebooks")
    assert caught.value.extras == ("notebooks",)


def _extras_declared() -> dict[str, set[str]]:
    """Each extra of pyproject.toml with the distributions it requires, self-references
    (``payments-workbench[sandbox]``) expanded."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    declared: dict[str, list[Requirement]] = {
        name: [Requirement(line) for line in lines]
        for name, lines in project["optional-dependencies"].items()
    }

    def expand(extra: str) -> set[str]:
        found: set[str] = set()
        for req in declared[extra]:
            if req.name == project["name"]:
                for inner in req.extras:
                    found |= expand(inner)
            else:
                found.add(canonicalize_name(req.name))
        return found

    return {name: expand(name) for name in declared}


def test_the_extras_table_matches_pyproject() -> None:
    declared = _extras_declared()
    assert set(EXTRAS) | {"all"} == set(declared)
    assert declared["all"] == set().union(*(declared[name] for name in EXTRAS))
    assert declared["testing"] >= declared["sandbox"]
    providers = importlib.metadata.packages_distributions()
    for extra, modules in EXTRAS.items():
        for module in modules:
            dists = {canonicalize_name(d) for d in providers[module]}
            assert dists & declared[extra], f"{module} of [{extra}] comes from {dists}"
    assert declared["postgres"] == {"psycopg"}  # plain: the binary wheel is the app's choice


def test_the_core_requires_nothing_heavy() -> None:
    requires = importlib.metadata.requires("payments-workbench") or []
    core = {canonicalize_name(Requirement(r).name) for r in requires if "extra ==" not in r}
    assert core == {"httpx2", "pydantic", "pydantic-core", "python-dotenv", "click"}
