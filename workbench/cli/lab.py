"""``workbench lab``: the sandbox and JupyterLab together, already pointed at each other."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from pathlib import Path

import click

from workbench.cli.notebooks import copy_into
from workbench.cli.sandbox import prepare_database
from workbench.config import ENV_API_KEY, ENV_BASE_URL, ENV_INTERACTIVE, ENV_SECRET_KEY, Settings
from workbench.notebook.shipped import discover

__all__ = ["HIDDEN", "lab", "lab_command"]

#: What JupyterLab answers with a printout, before anything else (traitlets' `Application`
#: looks for these up to a ``--``): help and version need no sandbox and no notebooks.
_INFORMATIONAL = frozenset({"-h", "--help", "--help-all", "-V", "--version"})
#: What JupyterLab's file browser does not list: its own defaults (jupyter_server's
#: ``ContentsManager.hide_globs``), then the clone's ruff settings for the notebooks
#: (notebooks/ruff.toml), which are not for the reader.
HIDDEN = ("__pycache__", "*.pyc", "*.pyo", ".DS_Store", "*~", "ruff.toml")


def _only_informs(lab_args: tuple[str, ...]) -> bool:
    """Whether JupyterLab, given ``lab_args``, prints something and exits without serving."""
    read = lab_args[: lab_args.index("--")] if "--" in lab_args else lab_args
    return any(arg in _INFORMATIONAL for arg in read)


def lab_command(folder: Path, lab_args: tuple[str, ...]) -> list[str]:
    """The command that runs JupyterLab on ``folder`` with ``lab_args``, as `lab` runs it.

    The file browser leaves out `HIDDEN` besides JupyterLab's own hidden files (unless
    ``lab_args`` sets ``hide_globs`` itself).
    """
    # `python -m jupyterlab` without jsonschema's IRI parsers (see the module).
    command = [sys.executable, "-m", "workbench.notebook._lab_main", str(folder)]
    if not any("hide_globs" in arg for arg in lab_args):
        command.append(f"--ContentsManager.hide_globs={list(HIDDEN)!r}")
    command += lab_args
    if hasattr(os, "geteuid") and os.geteuid() == 0 and "--allow-root" not in lab_args:
        # Containers and CI machines often run as root, which JupyterLab refuses by default.
        command.append("--allow-root")
    return command


def _jupyterlab(folder: Path, lab_args: tuple[str, ...], env: dict[str, str]) -> int:
    """Run JupyterLab on ``folder`` until it ends; its exit status (0 when interrupted)."""
    command = lab_command(folder, lab_args)
    status = 0
    with contextlib.suppress(KeyboardInterrupt):
        status = subprocess.run(command, env=env, check=False).returncode  # noqa: S603
    return status


@click.command("lab", context_settings={"ignore_unknown_options": True})
@click.option(
    "--notebooks",
    "folder",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("notebooks"),
    show_default=True,
)
@click.option("--db", "db_url", default=None, help="Sandbox database URL (default: user data dir).")
@click.option("--port", default=0, show_default=True, help="Sandbox port (0: a free one).")
@click.argument("lab_args", nargs=-1, type=click.UNPROCESSED)
def lab(folder: Path, db_url: str | None, port: int, lab_args: tuple[str, ...]) -> None:
    """Start the local sandbox, then JupyterLab on the notebooks with WORKBENCH_* set.

    Where the notebooks folder holds no notebook, the ones shipped with the package are
    copied into it first (a notebook already there is never overwritten), so what you
    edit is your own copy. Extra arguments go to `jupyter lab`. Stopping JupyterLab
    stops the sandbox; the command exits with JupyterLab's status. JupyterLab's -h,
    --help-all, -V and --version are answered without a sandbox or a copy.
    """
    if _only_informs(lab_args):
        status = _jupyterlab(folder, lab_args, dict(os.environ))
    else:
        status = _lab_session(folder, db_url, port, lab_args)
    if status:
        click.echo(f"JupyterLab exited with status {status}.", err=True)
        raise SystemExit(status if status > 0 else 1)


def _lab_session(folder: Path, db_url: str | None, port: int, lab_args: tuple[str, ...]) -> int:
    """The sandbox, then JupyterLab pointed at it until it ends; JupyterLab's exit status."""
    from workbench.sandbox import SandboxConfig, SandboxServer

    if not discover(folder):
        copy_into(folder)

    settings = Settings.load()
    config = SandboxConfig(api_key=settings.api_key, secret_key=settings.secret_key)
    if db_url:
        config.db_url = db_url
    prepare_database(config)  # a database this version cannot serve: a message, not a trace
    with SandboxServer(config, port=port) as server:
        click.echo(f"Sandbox at {server.base_url}; starting JupyterLab on {folder}/")
        env = dict(os.environ)
        env.update(
            {
                ENV_BASE_URL: server.base_url,
                ENV_API_KEY: settings.api_key,
                ENV_SECRET_KEY: settings.secret_key,
                ENV_INTERACTIVE: "1",
            }
        )
        return _jupyterlab(folder, lab_args, env)
