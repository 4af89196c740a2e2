"""``workbench run``: the main job — start the embedded sandbox, execute every flow notebook."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import click

from workbench.config import ENV_API_KEY, ENV_BASE_URL, ENV_SECRET_KEY, Settings
from workbench.notebook_runner import EXECUTED_DIR, discover, run_flows

__all__ = ["run"]


@contextlib.contextmanager
def _embedded_sandbox(settings: Settings, db_dir: Path) -> Iterator[str]:
    from workbench.sandbox import SandboxConfig, SandboxServer

    config = SandboxConfig(
        db_url=f"sqlite:///{db_dir / 'sandbox.db'}",
        api_key=settings.api_key,
        secret_key=settings.secret_key,
    )
    with SandboxServer(config) as server:
        yield server.base_url


@click.command("run")
@click.option(
    "--notebooks",
    "folder",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("notebooks"),
    show_default=True,
    help="Folder of flow notebooks.",
)
@click.option(
    "--external",
    is_flag=True,
    help="Use the sandbox at WORKBENCH_BASE_URL instead of starting the embedded one.",
)
@click.option(
    "--update-stored",
    is_flag=True,
    help="Write outputs back into the notebooks (regenerates what nbval and the guide show).",
)
@click.argument("only", nargs=-1)
def run(folder: Path, external: bool, update_stored: bool, only: tuple[str, ...]) -> None:
    """Execute every flow notebook (or ONLY those named) against a sandbox and summarise.

    By default a fresh embedded sandbox is started on a free port with a new
    database, so every run starts from the same state. Executed copies are left in
    NOTEBOOKS/_executed/; with --update-stored, each notebook that ran through also
    gets its stored outputs replaced (one that failed keeps its old ones).
    """
    notebooks = discover(folder)
    if only:
        notebooks = [p for p in notebooks if p.stem in only or p.name in only]
    if not notebooks:
        click.echo(f"No flow notebooks found in {folder}/: no flow ran.", err=True)
        raise SystemExit(1)
    settings = Settings.load()
    output_dir = folder / EXECUTED_DIR
    with contextlib.ExitStack() as stack:
        tmp = stack.enter_context(tempfile.TemporaryDirectory(prefix="workbench-run-"))
        if external:
            base_url = settings.base_url
            click.echo(f"Using the sandbox at {base_url}")
        else:
            base_url = stack.enter_context(_embedded_sandbox(settings, Path(tmp)))
            click.echo(f"Embedded sandbox listening at {base_url}")
        env = dict(os.environ)
        env.update(
            {
                ENV_BASE_URL: base_url,
                ENV_API_KEY: settings.api_key,
                ENV_SECRET_KEY: settings.secret_key,
            }
        )
        results = run_flows(
            notebooks,
            env=env,
            output_dir=output_dir,
            in_place=update_stored,
            progress=click.echo,
        )
    click.echo("")
    click.echo(f"{'flow':<32} {'result':<8} {'seconds':>8}")
    for r in results:
        click.echo(f"{r.name:<32} {'passed' if r.passed else 'FAILED':<8} {r.seconds:>8.1f}")
    passed = sum(r.passed for r in results)
    total = sum(r.seconds for r in results)
    click.echo(f"{passed} of {len(results)} flows passed in {total:.1f} s")
    click.echo(f"Executed notebooks: {output_dir.resolve()}")
    if update_stored:
        kept = [r.name for r in results if r.passed]
        click.echo(f"Stored outputs rewritten in {folder}/: {', '.join(kept) or 'none'}")
    click.echo("Guide: `make docs-serve`, then http://127.0.0.1:8000/")
    failed = [r for r in results if not r.passed]
    if failed:
        for r in failed:
            click.echo(f"FAILED {r.name}: {r.error}", err=True)
        raise SystemExit(1)
