"""``workbench --help`` lists every command from the registry without importing them;
``workbench run --help`` imports none of what running notebooks needs."""

from __future__ import annotations

import subprocess
import sys

import pytest
from click.testing import CliRunner

from workbench.cli import _COMMANDS, main

PROBE = """
import sys
from workbench.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
heavy = ("workbench.notebook.runner", "workbench.sandbox.app", "pandas", "nbformat", "fastapi")
print(",".join(name for name in heavy if name in sys.modules))
"""


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
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *args],
        capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    assert shown in done.stdout
    imported = done.stdout.splitlines()[-1]
    assert imported == "", f"--help imported {imported}"
