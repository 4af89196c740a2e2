"""``workbench trigger EVENT``: make the sandbox send one event, like ``stripe trigger``."""

from __future__ import annotations

import click

from workbench.config import ConfigError, Environment, Settings
from workbench.triggers import TRIGGERS, TriggerError, trigger

__all__ = ["trigger_command"]


def _list() -> None:
    width = max(len(name) for name in TRIGGERS)
    for name, found in TRIGGERS.items():
        local = "  (local sandbox only)" if found.needs_control else ""
        click.echo(f"{name:<{width}}  {found.summary}{local}")


@click.command("trigger")
@click.argument("event", required=False, metavar="EVENT")
@click.option("--list", "show_list", is_flag=True, help="Name every event it can trigger.")
def trigger_command(event: str | None, show_list: bool) -> None:
    """Make the sandbox send EVENT (payment.captured, refund.settled...) to your webhook.

    Creates, with the client, the objects whose change sends EVENT: a charge, a refund,
    a checkout session paid on its hosted page, a subscription moved along the sandbox's
    clock. Prints each step and the events made, the one asked for marked with `*`, and
    their delivery state. The store's webhook URL is where they go: point it at your
    handler, or run `workbench listen --set-webhook` in another terminal.

    The sandbox is WORKBENCH_BASE_URL with WORKBENCH_API_KEY and WORKBENCH_SECRET_KEY, as
    for the client. A trigger marked "local sandbox only" in --list uses its control
    routes (it moves the merchant's business clock, answers the 3-D Secure page or
    settles refunds). Production is refused.
    """
    if show_list:
        _list()
        return
    if event is None:
        raise click.UsageError("name an EVENT, or pass --list to see them")
    found = TRIGGERS.get(event)
    if found is None:
        raise click.BadParameter(
            f"{event!r} is not an event the sandbox sends; `workbench trigger --list` names them",
            param_hint="EVENT",
        )
    try:
        settings = Settings.load()
    except ConfigError as exc:
        raise click.ClickException(str(exc)) from None
    if settings.environment is Environment.PRODUCTION:
        raise click.ClickException("workbench trigger makes test payments: not in production")
    if found.needs_control and settings.environment is not Environment.LOCAL:
        raise click.ClickException(
            f"{event} needs the local sandbox's control routes; {settings.base_url} is "
            f"{settings.environment.value}"
        )
    from workbench._client import Client
    from workbench._exceptions import APIConnectionError, APIError

    click.echo(f"Triggering {event} on {settings.base_url}")
    try:
        with Client(settings=settings) as client:
            done = trigger(client, event)
    except APIConnectionError as exc:
        raise click.ClickException(f"{settings.base_url} did not answer: {exc}") from None
    except (APIError, TriggerError) as exc:
        raise click.ClickException(str(exc)) from None
    for step in done.steps:
        click.echo(f"  {step}")
    click.echo("Events made (* the one asked for), with their delivery state:")
    wanted = {e.id for e in done.matching}
    for made in done.events:
        mark = "*" if made.id in wanted else " "
        state = made.delivery.get("state") or "-"
        obj = done.object_of(made) or "-"
        click.echo(f"{mark} {made.id}  {made.type:<30} {obj:<30} {state}")
