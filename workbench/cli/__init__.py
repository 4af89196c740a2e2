"""The ``workbench`` command line: one small module per command.

Commands are registered lazily so that ``workbench sign`` does not import the
sandbox's web stack. A command whose extra is not installed is listed all the same
and, when run (``--help`` included), says which ``pip install`` it needs and exits 1.
"""

from __future__ import annotations

import importlib
import importlib.util
from typing import Any

import click

from workbench._extras import (
    MissingExtraError,
    extra_for_module,
    install_command,
    missing_extras,
)
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
    "notebooks": (
        "workbench.cli.notebooks",
        "notebooks",
        "Copy the flow notebooks that ship with the package.",
    ),
    "listen": ("workbench.cli.listen", "listen", "Receive, verify and forward webhooks locally."),
    "trigger": (
        "workbench.cli.trigger",
        "trigger_command",
        "Make the sandbox send one event (payment.captured...) to your webhook.",
    ),
    "fixtures": (
        "workbench.cli.fixtures",
        "fixtures_command",
        "Set up the sandbox's state from a scenario file (YAML or JSON).",
    ),
    "parity": (
        "workbench.cli.parity",
        "parity",
        "Run the flows against two targets and report where they differ.",
    ),
    "openapi": ("workbench.cli.openapi", "openapi", "Print the sandbox's OpenAPI document."),
    "merchants": (
        "workbench.cli.merchants",
        "merchants",
        "Make, list and delete merchants of your own on a sandbox.",
    ),
    "postman": (
        "workbench.cli.postman",
        "postman",
        "Write a Postman collection of every endpoint, signed.",
    ),
}

#: command name -> (extras it cannot start without, extras some of its uses need as well).
#: A command not listed needs the core install only.
_EXTRAS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "sandbox": (("sandbox",), ()),
    "run": (("notebooks",), ("sandbox",)),  # --external needs no sandbox of its own
    "lab": (("sandbox", "notebooks"), ()),
    "openapi": (("sandbox",), ()),
    "postman": (("sandbox",), ()),
    # The flows draw their tables with pandas; the reports are jinja2 templates.
    "parity": (("sandbox", "notebooks"), ()),
}


def _missing_extras_of(name: str) -> MissingExtraError | None:
    """What a command lacks to start (every extra it may use named), ``None`` if nothing."""
    needed, also = _EXTRAS.get(name, ((), ()))
    if not missing_extras(*needed):
        return None
    return MissingExtraError(f"workbench {name}", missing_extras(*needed, *also))


def _short_help(summary: str, error: MissingExtraError) -> str:
    """A missing-extra command's line in the command list."""
    return f"{summary} (needs the [{','.join(error.extras)}] extra)"


def _missing_extra_command(name: str, summary: str, error: MissingExtraError) -> click.Command:
    """A stand-in for a command whose extras are missing: it says what to install, exits 1."""

    def explain() -> None:
        raise click.ClickException(str(error))

    return click.Command(
        name,
        callback=explain,
        help=f"{summary} Needs {install_command(error.extras)}.",
        short_help=_short_help(summary, error),
        add_help_option=False,  # ``--help`` explains what is missing too
        context_settings={"ignore_unknown_options": True, "allow_extra_args": True},
    )


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
        module, attr, summary = _COMMANDS[cmd_name]
        missing = _missing_extras_of(cmd_name)
        if missing is not None:
            return _missing_extra_command(cmd_name, summary, missing)
        try:
            command: Any = getattr(importlib.import_module(module), attr)
        except ModuleNotFoundError as exc:
            extra = extra_for_module(exc.name or "")
            if extra is None:
                raise
            error = MissingExtraError(f"workbench {cmd_name}", [extra])
            return _missing_extra_command(cmd_name, summary, error)
        assert isinstance(command, click.Command)
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """List the commands from the registry's summaries, importing none of them.

        Click's own listing loads every command for its short help, which made
        ``workbench --help`` import the notebook runner and pandas.
        """
        rows = []
        for name in self.list_commands(ctx):
            summary = _COMMANDS[name][2]
            error = _missing_extras_of(name)
            rows.append((name, summary if error is None else _short_help(summary, error)))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)

    def invoke(self, ctx: click.Context) -> Any:
        """Run the command; an extra found missing on the way is named, not a traceback."""
        try:
            return super().invoke(ctx)
        except MissingExtraError as exc:
            raise click.ClickException(str(exc)) from None
        except ModuleNotFoundError as exc:
            extra = extra_for_module(exc.name or "")
            if extra is None:
                raise
            what = f"workbench {ctx.invoked_subcommand or ''}".strip()
            raise click.ClickException(str(MissingExtraError(what, [extra]))) from None


@click.group(cls=_LazyGroup)
@click.version_option(__version__, prog_name="workbench")
def main() -> None:
    """Payments Workbench: sign requests, run the local sandbox, execute the flows."""
