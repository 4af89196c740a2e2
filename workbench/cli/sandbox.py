"""``workbench sandbox``: run the local sandbox server in the foreground."""

from __future__ import annotations

import os

import click

from workbench.config import DEFAULT_API_KEY, DEFAULT_SECRET_KEY, ENV_API_KEY, ENV_SECRET_KEY

__all__ = ["sandbox"]


@click.command("sandbox")
@click.option("--host", default="127.0.0.1", show_default=True, help="Interface to listen on.")
@click.option("--port", default=8765, show_default=True, type=int, help="Port to listen on.")
@click.option(
    "--db",
    "db_url",
    default=None,
    help="SQLAlchemy URL (default: an SQLite file in the user data dir).",
)
@click.option("--no-reconciler", is_flag=True, help="Do not run the background reconciler.")
def sandbox(host: str, port: int, db_url: str | None, no_reconciler: bool) -> None:
    """Run the local sandbox; WORKBENCH_API_KEY / WORKBENCH_SECRET_KEY set the demo keys."""
    import uvicorn

    from workbench.sandbox import SandboxConfig, create_app

    api_key = os.environ.get(ENV_API_KEY) or DEFAULT_API_KEY
    secret_key = os.environ.get(ENV_SECRET_KEY) or DEFAULT_SECRET_KEY
    config = SandboxConfig(
        api_key=api_key, secret_key=secret_key, run_reconciler_in_background=not no_reconciler
    )
    if db_url:
        config.db_url = db_url
    app = create_app(config)
    base = f"http://{host}:{port}"
    click.echo(f"Payments Workbench sandbox at {base}  (OpenAPI: {base}/docs)")
    click.echo(f"database: {config.db_url}")
    click.echo(f"demo merchant mrc_demo0001 / store sto_demo0001: {config.describe_credentials()}")
    uvicorn.run(app, host=host, port=port, log_level="info")
