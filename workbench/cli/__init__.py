"""The ``workbench`` command line: one small module per command.

Commands are registered lazily so that ``workbench sign`` does not import the
sandbox's web stack.
"""

from __future__ import annotations

import importlib
import importlib.util
from typing import Any

import click

from workbench._version import __version__

__all__ = ["main"]

#: command name -> (module, attribute, one-line help)
_COMMANDS: dict[str, tuple[str, str, str]] = {
    "sign": (
        "workbench.cli.sign",
        "sign_command",
        "Sign a request and diagnose signature mismatches.",
    ),
    "sandbox": ("workbench.cli.sandbox", "sandbox", "Run the local sandbox server."),
    "run": ("workbench.cli.run", "run", "Execute every flow notebook against a sandbox."),
    "lab": ("workbench.cli.lab", "lab", "Start the sandbox and JupyterLab on the notebooks."),
    "listen": ("workbench.cli.listen", "listen", "Receive, verify and forward webhooks locally."),
    "openapi": ("workbench.cli.openapi", "openapi", "Print the sandbox's OpenAPI document."),
}


class _LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(name for name in _COMMANDS if self._available(name))

    @staticmethod
    def _available(name: str) -> bool:
        module = _COMMANDS[name][0]
        return importlib.util.find_spec(module) is not None

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in _COMMANDS or not self._available(cmd_name):
            return None
        module, attr, _ = _COMMANDS[cmd_name]
        command: Any = getattr(importlib.import_module(module), attr)
        assert isinstance(command, click.Command)
        return command


@click.group(cls=_LazyGroup)
@click.version_option(__version__, prog_name="workbench")
def main() -> None:
    """Payments Workbench: sign requests, run the local sandbox, execute the flows."""
