"""``workbench openapi``: the sandbox's OpenAPI document, for code generators and test tools."""

from __future__ import annotations

from pathlib import Path

import click

__all__ = ["openapi"]


@click.command("openapi")
@click.option(
    "--output",
    "-o",
    type=click.Path(dir_okay=False, writable=True, path_type=Path),
    default=None,
    help="Write the document to this file instead of standard output.",
)
def openapi(output: Path | None) -> None:
    """Print the sandbox's OpenAPI 3.1 document (JSON): stable operationIds, tags, examples.

    Hand it to a client generator, a mock server or a test tool:
    `workbench openapi > openapi.json`. Nothing is started and no database is opened.
    """
    from workbench.sandbox.app import create_app
    from workbench.sandbox.openapi import openapi_json

    text = openapi_json(create_app())
    if output is None:
        click.echo(text, nl=False)
    else:
        output.write_text(text, encoding="utf-8")
