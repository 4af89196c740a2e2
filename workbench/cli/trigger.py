"""``workbench trigger EVENT``: make the sandbox send one event, like ``stripe trigger``."""

from __future__ import annotations

from typing import TYPE_CHECKING, NoReturn

import click

from workbench.cli._sandbox_settings import sandbox_settings
from workbench.config import Environment
from workbench.triggers import (
    TRIGGERS,
    TriggerError,
    TriggerValueError,
    check_values,
    trigger,
)

if TYPE_CHECKING:
    from workbench.triggers import Triggered

__all__ = ["trigger_command"]


def _list() -> None:
    width = max(len(name) for name in TRIGGERS)
    for name, found in TRIGGERS.items():
        local = "  (local sandbox only)" if found.needs_control else ""
        click.echo(f"{name:<{width}}  {found.summary}{local}")


def _refuse(message: str) -> NoReturn:
    """Bad input: one line on standard error, exit status 2, nothing made."""
    click.echo(f"workbench trigger: {message}", err=True)
    raise click.exceptions.Exit(2)


def _pairs(option: str, given: tuple[str, ...]) -> dict[str, str]:
    pairs: dict[str, str] = {}
    for item in given:
        name, equals, value = item.partition("=")
        if not equals or not name:
            _refuse(f"{option} {item!r}: give FIELD=VALUE, e.g. {option} amount=25000")
        if name in pairs:
            _refuse(f"{option} {name}: given twice")
        pairs[name] = value
    return pairs


@click.command("trigger")
@click.argument("event", required=False, metavar="EVENT")
@click.option("--list", "show_list", is_flag=True, help="Name every event it can trigger.")
@click.option(
    "--override",
    "overrides",
    multiple=True,
    metavar="FIELD=VALUE",
    help="Make the objects with this value of a field the trigger sends (amount, "
    "transactionId, customerId, description, reason); repeatable.",
)
@click.option(
    "--add",
    "additions",
    multiple=True,
    metavar="FIELD=VALUE",
    help="Give a field the trigger leaves out (installments, customerId, description); repeatable.",
)
def trigger_command(
    event: str | None, show_list: bool, overrides: tuple[str, ...], additions: tuple[str, ...]
) -> None:
    """Make the sandbox send EVENT (payment.captured, refund.settled...) to your webhook.

    Creates, with the client, the objects whose change sends EVENT: a charge, a refund,
    a checkout session paid on its hosted page, a subscription moved along the sandbox's
    clock. Prints each step and the events made, the one asked for marked with `*`, and
    their delivery state. The store's webhook URL is where they go: point it at your
    handler, or run `workbench listen --set-webhook` in another terminal.

    --override and --add make those objects with your own values
    (--override amount=25000 --add installments=3), so the event carries them; a field
    the event has no place for, or a value it cannot take, is refused with one line
    naming the field and exit status 2, before anything is made.

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
        _refuse(
            f"{event!r} is not an event the sandbox sends; `workbench trigger --list` names them"
        )
    given = _pairs("--override", overrides), _pairs("--add", additions)
    try:
        check_values(event, *given)
    except TriggerValueError as exc:
        _refuse(str(exc))
    settings = sandbox_settings("workbench trigger makes test payments: not in production")
    if found.needs_control and settings.environment is not Environment.LOCAL:
        raise click.ClickException(
            f"{event} needs the local sandbox's control routes; {settings.base_url} is "
            f"{settings.environment.value}"
        )
    from workbench._client import Client
    from workbench._exceptions import APIConnectionError, APIError

    calls: list[tuple[str, str, int, str | None]] = []
    try:
        with Client(settings=settings) as client:
            check_values(event, *given, client=client)  # a customer it names: is it there?
            click.echo(f"Triggering {event} on {settings.base_url}")
            client.add_observer(
                lambda info, _body: calls.append(
                    (info.method, info.path, info.status_code, info.request_id)
                )
            )
            done = trigger(client, event, overrides=given[0], additions=given[1])
    except TriggerValueError as exc:
        _refuse(str(exc))
    except APIConnectionError as exc:
        raise click.ClickException(f"{settings.base_url} did not answer: {exc}") from None
    except (APIError, TriggerError) as exc:
        raise click.ClickException(str(exc)) from None
    for step in done.steps:
        click.echo(f"  {step}")
    pages = [(call, settings.request_page(call[3])) for call in calls]
    if any(page for _, page in pages):
        click.echo("Its requests, each on its page in the sandbox's dashboard:")
        for (method, path, status, _), page in pages:
            click.echo(f"  {method} {path} -> {status}  {page or '-'}")
    click.echo("Events made (* the one asked for), with their delivery state:")
    wanted = {e.id for e in done.matching}
    for made in done.events:
        mark = "*" if made.id in wanted else " "
        state = made.delivery.get("state") or "-"
        obj = done.object_of(made) or "-"
        click.echo(f"{mark} {made.id}  {made.type:<30} {obj:<30} {state}")
    if settings.environment is Environment.LOCAL:
        _dashboard_lines(settings.base_url, done)


def _dashboard_lines(base_url: str, done: Triggered) -> None:
    """Where the dashboard shows the asked-for events and their objects."""
    from workbench.cli._dashboard_links import dashboard_link

    links: list[str] = []
    for event in done.matching:
        for found in (done.object_of(event), event.id):
            link = dashboard_link(base_url, found) if found else None
            if link and link not in links:
                links.append(link)
    if links:
        click.echo(
            "In the sandbox's dashboard (sign in with the link `workbench sandbox` printed):"
        )
        for link in links:
            click.echo(f"  {link}")
