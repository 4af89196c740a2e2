"""``workbench postman``: a Postman collection of every endpoint that signs its requests."""

from __future__ import annotations

from pathlib import Path

import click

__all__ = ["postman"]


@click.command("postman")
@click.option(
    "--output",
    "-o",
    type=click.Path(dir_okay=False, writable=True, path_type=Path),
    default=None,
    help="Write the collection to this file instead of standard output.",
)
@click.option(
    "--base-url",
    default="http://127.0.0.1:8765",
    show_default=True,
    help="The default of the collection's baseUrl variable.",
)
def postman(output: Path | None, base_url: str) -> None:
    """Write a Postman collection (v2.1) of every endpoint, signed by a pre-request script.

    Import it in Postman (File > Import) or run it with newman:
    `newman run collection.json --env-var baseUrl=... --env-var apiKey=...
    --env-var secretKey=...`. baseUrl defaults to the local sandbox; the keys are empty,
    never read from the environment. With no keys, the run makes a scratch merchant
    first and deletes it last; with keys given, it works in that merchant and never
    resets or deletes anything of it. Requests are in the order a run needs (each keeps
    the identifiers the next ones use).
    """
    from workbench.sandbox.openapi.postman import postman_json

    text = postman_json(base_url)
    if output is None:
        click.echo(text, nl=False)
    else:
        output.write_text(text, encoding="utf-8")
