"""``workbench --help`` lists every command from the registry without importing them;
``workbench run --help`` imports none of what running notebooks needs."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from tests.cli_imports import workbench_imports
from workbench.cli import _COMMANDS, main

HEAVY = ("workbench.notebook.runner", "workbench.sandbox.app", "pandas", "nbformat", "fastapi")


def test_help_lists_every_command_with_its_summary() -> None:
    result = CliRunner().invoke(main, ["--help"], terminal_width=200)
    assert result.exit_code == 0, result.output
    for name, (_module, _attr, summary) in _COMMANDS.items():
        assert f"  {name} " in result.output
        assert summary in result.output


@pytest.mark.parametrize(
    ("args", "shown"), [(["--help"], "Commands:"), (["run", "--help"], "--update-stored")]
)
def test_help_imports_no_command_module(args: list[str], shown: str) -> None:
    done, imported = workbench_imports(args, HEAVY, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    assert shown in done.stdout
    assert imported == [], f"--help imported {imported}"


@pytest.mark.parametrize("name", sorted(_COMMANDS))
def test_a_commands_help_shows_no_docstring_markup(name: str) -> None:
    result = CliRunner().invoke(main, [name, "--help"], terminal_width=200)
    assert result.exit_code == 0, result.output
    assert "``" not in result.output, "reStructuredText literal markup shown as is"
