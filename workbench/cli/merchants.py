"""``workbench merchants create | list | delete``: merchants of your own on a sandbox.

Each engineer, notebook run or test run works in a merchant of its own, so nothing one
does resets or moves another's data. ``create --env`` prints the new merchant's keys as
``export WORKBENCH_...=...`` lines, for ``eval "$(workbench merchants create --env)"``
or a ``.env`` file. The sandbox is ``WORKBENCH_BASE_URL`` (or ``--base-url``); a
sandbox reachable beyond loopback (a team host) asks for its admin token
(``--admin-token`` or ``WORKBENCH_SANDBOX_ADMIN_TOKEN``).
"""

from __future__ import annotations

import functools
import json
import re
import shlex
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, TypeVar

import click

from workbench.cli._sandbox_settings import sandbox_settings
from workbench.config import (
    ENV_API_KEY,
    ENV_BASE_URL,
    ENV_SECRET_KEY,
)

if TYPE_CHECKING:
    from workbench._client import Client
    from workbench.models import MerchantSummary

__all__ = ["merchants", "parse_age"]

#: Where the admin token is read from (the sandbox command reads the same variable).
ENV_ADMIN_TOKEN = "WORKBENCH_SANDBOX_ADMIN_TOKEN"
#: The webhook secret `workbench listen` verifies with.
ENV_WEBHOOK_SECRET = "WORKBENCH_WEBHOOK_SECRET"

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86_400, "w": 7 * 86_400}
_T = TypeVar("_T")


def parse_age(text: str) -> timedelta:
    """``7d``, ``12h``, ``30m``, ``2w``, ``90s`` as a `timedelta`.

    Raises:
        click.BadParameter: anything else.
    """
    found = re.fullmatch(r"\s*(\d{1,6})\s*([smhdw])\s*", text)
    if found is None:
        raise click.BadParameter(
            f"{text!r} is not an age: a number and a unit (s, m, h, d, w), e.g. 7d",
            param_hint="--older-than",
        )
    return timedelta(seconds=int(found[1]) * _UNITS[found[2]])


def _base_url_option(command: Callable[..., None]) -> Callable[..., None]:
    command = click.option(
        "--admin-token",
        envvar=ENV_ADMIN_TOKEN,
        default=None,
        help=f"A team sandbox's admin token (or set {ENV_ADMIN_TOKEN}); a sandbox only "
        "this machine reaches needs none.",
    )(command)
    return click.option(
        "--base-url",
        default=None,
        help=f"The sandbox's address (default: {ENV_BASE_URL}, else the local sandbox).",
    )(command)


@contextmanager
def _client(base_url: str | None) -> Iterator[Client]:
    """A client for the sandbox; the keys are the environment's (they sign a delete)."""
    settings = sandbox_settings("merchants are made on a sandbox, not in production", base_url)
    from workbench._client import Client

    with Client(settings=settings, max_retries=1) as client:
        yield client


def _call(client: Client, action: Callable[[], _T]) -> _T:
    """``action()``; a refusal or a sandbox that does not answer is one line, exit 1."""
    from workbench._exceptions import APIConnectionError, APIError

    try:
        return action()
    except APIConnectionError as exc:
        raise click.ClickException(f"{client.base_url} did not answer: {exc}") from None
    except APIError as exc:
        raise click.ClickException(str(exc)) from None


@click.group("merchants")
def merchants() -> None:
    """Make, list and delete merchants of your own on a sandbox.

    A merchant has its own store, keys, webhook secret, customers and business clock:
    what you do in it leaves every other merchant's data and clock as they were.
    """


@merchants.command("create")
@click.option("--name", default=None, help="What to call it (at most 100 characters).")
@click.option("--json", "as_json", is_flag=True, help="Print the answer as JSON.")
@click.option(
    "--env",
    "as_env",
    is_flag=True,
    help='Print export WORKBENCH_...=... lines: eval "$(workbench merchants create --env)".',
)
@_base_url_option
def create(
    name: str | None, as_json: bool, as_env: bool, base_url: str | None, admin_token: str | None
) -> None:
    """Make a merchant; print its keys (the secret key is shown this once)."""
    if as_json and as_env:
        raise click.UsageError("--json and --env are exclusive: choose one")
    with _client(base_url) as client:
        made = _call(
            client, lambda: client.sandbox.create_merchant(name=name, admin_token=admin_token)
        )
        base = client.base_url
    c = made
    if as_json:
        click.echo(json.dumps(c.model_dump(mode="json", by_alias=True), indent=2))
        return
    values = {
        ENV_BASE_URL: base,
        ENV_API_KEY: c.api_key,
        ENV_SECRET_KEY: c.secret_key,
        ENV_WEBHOOK_SECRET: c.webhook_secret,
    }
    if as_env:
        for key, value in values.items():
            click.echo(f"export {key}={shlex.quote(value)}")
        return
    click.echo(f"merchant {c.merchant_id} ({c.name}), store {c.store_id}")
    click.echo("its keys (the secret key and webhook secret are shown this once):")
    for key, value in values.items():
        click.echo(f"  {key}={value}")


def _age_of(merchant: MerchantSummary, now: datetime) -> timedelta | None:
    """How long since it was made or last used, whichever is later (``None``: unknown)."""
    moments = [m for m in (merchant.created, merchant.last_used) if m is not None]
    return now - max(moments) if moments else None


def _when(moment: datetime | None) -> str:
    return "-" if moment is None else moment.strftime("%Y-%m-%d %H:%M")


@merchants.command("list")
@_base_url_option
def list_command(base_url: str | None, admin_token: str | None) -> None:
    """Every merchant: id, made, last used, name (no secret)."""
    with _client(base_url) as client:
        found = _call(client, lambda: client.sandbox.list_merchants(admin_token=admin_token))
    click.echo(f"{'merchant':<30} {'made (UTC)':<17} {'last used':<17} name")
    for m in found.items:
        name = f"{m.name or ''}{' (built in)' if m.built_in else ''}"
        click.echo(f"{m.merchant_id:<30} {_when(m.created):<17} {_when(m.last_used):<17} {name}")


@merchants.command("delete")
@click.argument("merchant_ids", nargs=-1, metavar="[ID]...")
@click.option(
    "--older-than",
    default=None,
    help="Delete every merchant made on demand not made or used for this long (7d, 12h).",
)
@_base_url_option
def delete(
    merchant_ids: tuple[str, ...],
    older_than: str | None,
    base_url: str | None,
    admin_token: str | None,
) -> None:
    """Delete merchants and all their data; their keys stop working at once.

    The built-in merchants stay. Signed with WORKBENCH_API_KEY's keys (your own
    merchant), or with the admin token on a team sandbox.
    """
    if bool(merchant_ids) == bool(older_than):
        raise click.UsageError("name merchant IDs, or give --older-than (not both)")
    age = parse_age(older_than) if older_than else None
    with _client(base_url) as client:
        ids = list(merchant_ids)
        if age is not None:
            listed = _call(client, lambda: client.sandbox.list_merchants(admin_token=admin_token))
            now = datetime.now(UTC)
            for m in listed.items:
                idle = _age_of(m, now)
                if not m.built_in and idle is not None and idle > age:
                    ids.append(m.merchant_id)
            if not ids:
                click.echo(f"no merchant made on demand is older than {older_than}")
        for merchant_id in ids:
            remove = functools.partial(
                client.sandbox.delete_merchant, merchant_id, admin_token=admin_token
            )
            done = _call(client, remove)
            rows = sum(done.deleted.values())
            click.echo(f"deleted {merchant_id} ({rows} rows)")
