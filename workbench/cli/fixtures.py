"""``workbench fixtures FILE``: set up the sandbox's state from a scenario file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import click

from workbench.cli._sandbox_settings import sandbox_settings
from workbench.config import Settings

if TYPE_CHECKING:
    from workbench.scenarios import Scenario

__all__ = ["fixtures_command"]


def _refuse(message: str) -> NoReturn:
    """Bad input: one line on standard error, exit status 2, nothing made."""
    click.echo(f"workbench fixtures: {message}", err=True)
    raise click.exceptions.Exit(2)


@click.command("fixtures")
@click.argument("scenario", required=False, metavar="FILE")
@click.option("--list", "show_list", is_flag=True, help="Name the shipped example scenarios.")
@click.option("--check", is_flag=True, help="Check the file and stop: nothing is sent.")
def fixtures_command(scenario: str | None, show_list: bool, check: bool) -> None:
    """Run a scenario FILE (YAML or JSON) against the sandbox: named steps, in order.

    Steps create a checkout session, charge, preauthorize, capture, void, refund,
    subscribe, advance the clock or set the webhook; a step uses an earlier one's result
    by name (${charge.id}). Each step and its result are printed as it is made. FILE may
    also be the name of a shipped example (--list names them).

    The whole file is checked first: an unknown action or field, a reference to no
    earlier step, or a file that is not YAML or JSON is one line naming the file, line
    and step, exit status 2, and nothing is made. A step the service refuses stops the
    run with its error envelope, exit status 1; the steps before it stay made.

    The sandbox is WORKBENCH_BASE_URL with WORKBENCH_API_KEY and WORKBENCH_SECRET_KEY, as
    for the client; the clock and the webhook are the local sandbox's control routes.
    Production is refused.
    """
    from workbench._extras import MissingExtraError
    from workbench.scenarios import EXAMPLES, ScenarioError, load_scenario

    if show_list:
        for name, path in EXAMPLES.items():
            click.echo(f"{name:<24} {load_scenario(path).name}")
        return
    if scenario is None:
        raise click.UsageError("name a scenario FILE, or pass --list to see the examples")
    path = EXAMPLES.get(scenario) or Path(scenario)
    try:
        loaded = load_scenario(path)
    except ScenarioError as exc:
        _refuse(str(exc))
    except MissingExtraError as exc:
        raise click.ClickException(str(exc)) from None
    if check:
        click.echo(f"{loaded.file}: {len(loaded.steps)} steps, checked")
        return
    settings = sandbox_settings("workbench fixtures makes test payments: not in production")
    _run(settings, loaded)


def _run(settings: Settings, loaded: Scenario) -> None:
    from workbench._client import Client
    from workbench._exceptions import APIConnectionError
    from workbench.scenarios import ScenarioError, StepFailed, StepResult, run_scenario

    def show(made: StepResult) -> None:
        click.echo(f"{made.step.number}. {made.step.label}: {made.summary()}")

    click.echo(f"Scenario {loaded.name!r} on {settings.base_url}")
    try:
        with Client(settings=settings) as client:
            results = run_scenario(client, loaded, on_step=show)
    except StepFailed as failed:
        click.echo(
            f"{failed.step.number}. {failed.step.label}: refused, HTTP {failed.status}", err=True
        )
        click.echo(json.dumps(failed.envelope), err=True)
        raise click.exceptions.Exit(1) from None
    except ScenarioError as exc:
        raise click.ClickException(str(exc)) from None
    except APIConnectionError as exc:
        raise click.ClickException(f"{settings.base_url} did not answer: {exc}") from None
    click.echo(f"Named results: {', '.join(results) or 'none'}")
