"""``workbench notebooks``: the flow notebooks that ship with the package."""

from __future__ import annotations

from pathlib import Path

import click

from workbench.notebook.shipped import copy_notebooks, shipped_folder, shipped_notebooks

__all__ = ["copy_into", "notebooks"]


def copy_into(target: Path) -> None:
    """Copy the shipped notebooks into ``target``, saying what was copied and what kept.

    Raises:
        click.ClickException: nothing shipped, or ``target`` cannot be written.
    """
    try:
        report = copy_notebooks(target)
    except FileNotFoundError as exc:
        raise click.ClickException(str(exc)) from None
    except OSError as exc:
        raise click.ClickException(
            f"cannot write the notebooks into {target}/: {exc.strerror or exc}"
        ) from None
    if report.copied:
        click.echo(f"Copied {len(report.copied)} notebooks into {target}/")
    if report.kept:
        names = ", ".join(p.name for p in report.kept)
        click.echo(f"Kept your copies in {target}/ as they are: {names}")


@click.group("notebooks")
def notebooks() -> None:
    """The flow notebooks that ship with the package."""


@notebooks.command("copy")
@click.argument("folder", type=click.Path(file_okay=False, path_type=Path))
def copy(folder: Path) -> None:
    """Copy the shipped notebooks into FOLDER (created if missing) to edit and run them.

    A notebook FOLDER has already is kept as it is, never overwritten: copying again
    after an upgrade adds only the notebooks that are new.
    """
    copy_into(folder)


@notebooks.command("list")
def list_() -> None:
    """Print where the shipped notebooks are, then their names."""
    folder = shipped_folder()
    if folder is None:
        raise click.ClickException("this install of payments-workbench ships no notebooks")
    click.echo(f"{folder}/")
    for path in shipped_notebooks():
        click.echo(f"  {path.name}")
