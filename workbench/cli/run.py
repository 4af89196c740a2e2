"""``workbench run``: the main job — start the embedded sandbox, execute every flow notebook."""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import json
import os
import shutil
import signal
import tempfile
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
import httpx2

from workbench._extras import require
from workbench._transport import default_ssl_context
from workbench._unreachable import describe_failure
from workbench.cli._run_reports import exit_status, json_summary, junit_xml, write_json
from workbench.config import ENV_API_KEY, ENV_BASE_URL, ENV_SECRET_KEY, ConfigError, Settings
from workbench.notebook.shipped import GUIDE_SOURCE, discover, shipped_folder

if TYPE_CHECKING:
    from workbench.notebook.runner import FlowResult, RunInterrupted

__all__ = ["INTERRUPTED_EXIT_STATUS", "guide_hint", "run"]

#: The exit status after Ctrl-C, as a shell reports a command SIGINT ended (128 + 2).
INTERRUPTED_EXIT_STATUS = 130
#: This run's executed copies are written in a folder named so, beside ``_executed``.
STAGING_PREFIX = ".executed-"

#: How long ``--external`` waits for the base URL to answer before giving up.
REACHABLE_TIMEOUT = 5.0


def _unreachable(base_url: str, timeout: float = REACHABLE_TIMEOUT) -> str | None:
    """Why nothing answers HTTP at ``base_url``, or ``None`` when something does.

    Any HTTP answer counts (a 401 or 404 from the service's root included): this only
    tells a wrong address or a service that is down from one that is up.
    """
    try:
        httpx2.get(base_url, timeout=timeout, verify=default_ssl_context())
    except httpx2.TimeoutException:
        return f"no answer within {timeout:g} s"
    except httpx2.TransportError as exc:
        return describe_failure(exc, exc.request.url)
    except (httpx2.HTTPError, httpx2.InvalidURL) as exc:
        return str(exc) or type(exc).__name__
    return None


def _needs_control_routes(notebook: Path) -> str | None:
    from workbench.notebook.runner import control_calls

    calls = control_calls(notebook)
    if not calls:
        return None
    return f"needs the sandbox's control routes, which a real service lacks ({', '.join(calls)})"


@contextlib.contextmanager
def _embedded_sandbox(settings: Settings, db_dir: Path) -> Iterator[str]:
    require("workbench run (without --external)", "sandbox")
    from workbench.sandbox import SandboxConfig, SandboxServer

    config = SandboxConfig(
        db_url=f"sqlite:///{db_dir / 'sandbox.db'}",
        api_key=settings.api_key,
        secret_key=settings.secret_key,
    )
    with SandboxServer(config) as server:
        yield server.base_url


def _notebooks_folder(
    given: Path | None, update_stored: bool, echo: Callable[[str], None]
) -> tuple[Path, Path]:
    """The folder to run the notebooks of, and the one whose ``_executed/`` gets the copies.

    Without ``--notebooks``: ``notebooks/`` of the current folder when it has any, else
    the notebooks shipped with the package (their executed copies still go to
    ``notebooks/_executed/`` here: the installed files are not written to).
    """
    folder = Path("notebooks") if given is None else given
    if given is not None or discover(folder):
        return folder, folder
    shipped = shipped_folder()
    if shipped is None:
        return folder, folder
    if update_stored:
        raise click.UsageError(
            f"--update-stored rewrites notebooks in place; {folder}/ has none, and the "
            "ones shipped with the package are not to be written. Make a copy with "
            f"`workbench notebooks copy {folder}` first."
        )
    echo(f"No notebooks in {folder}/: running the ones shipped with the package ({shipped}/)")
    return shipped, folder


def _publish(staging: Path, output_dir: Path) -> None:
    """Make ``staging`` (this run's executed copies) the ``_executed`` folder; a run that
    wrote none leaves the folder as it was."""
    for partial in staging.glob(".*.partial"):
        partial.unlink()
    if not any(staging.iterdir()):
        staging.rmdir()
        return
    if output_dir.exists():
        earlier = staging.with_name(f"{staging.name}-earlier")
        output_dir.rename(earlier)
        staging.rename(output_dir)
        shutil.rmtree(earlier, ignore_errors=True)
    else:
        staging.rename(output_dir)


def _moved(result: FlowResult, output_dir: Path) -> FlowResult:
    if result.executed is None:
        return result
    return dataclasses.replace(result, executed=output_dir / result.executed.name)


def _table(results: list[FlowResult], output_dir: Path, echo: Callable[[str], None]) -> None:
    """The summary: one line per flow (result, seconds), the counts, where the copies are."""
    echo(f"{'flow':<32} {'result':<8} {'seconds':>8}")
    for r in results:
        word = "skipped" if r.skipped else "passed" if r.passed else "FAILED"
        echo(f"{r.name:<32} {word:<8} {r.seconds:>8.1f}")
    ran = [r for r in results if not r.skipped]
    skipped = [r for r in results if r.skipped]
    passed = sum(r.passed for r in ran)
    total = sum(r.seconds for r in ran)
    summary = f"{passed} of {len(ran)} flows passed in {total:.1f} s"
    if skipped:
        summary += f"; {len(skipped)} skipped"
    echo(summary)
    for r in skipped:
        echo(f"SKIPPED {r.name}: {r.skipped}")
    if any(r.executed for r in results):
        echo(f"Executed notebooks: {output_dir.resolve()}")


def _interrupted(
    stop: RunInterrupted,
    results: list[FlowResult],
    output_dir: Path,
    echo: Callable[[str], None],
) -> None:
    """Ctrl-C's one line, then the summary of the flows that finished before it."""
    left = len(stop.unfinished)
    line = f"Interrupted (Ctrl-C): {len(results)} of {len(results) + left} flows finished"
    if left:
        after = f" and {left - 1} after it" if left > 1 else ""
        line += f", {left} did not ({stop.unfinished[0].stem}{after})"
    click.echo(line, err=True)
    if results:
        _table(results, output_dir, echo)


@click.command("run")
@click.option(
    "--notebooks",
    "folder",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Folder of flow notebooks.  [default: notebooks, or where it has none, the "
    "notebooks shipped with the package]",
)
@click.option(
    "--external",
    is_flag=True,
    help=(
        "Run against the service at WORKBENCH_BASE_URL (with WORKBENCH_API_KEY and "
        "WORKBENCH_SECRET_KEY) instead of starting the embedded sandbox. The address is "
        "checked first; notebooks that call the sandbox's control routes "
        "(client.sandbox.*) are skipped, each with the reason printed."
    ),
)
@click.option(
    "--base-url",
    "sandbox_url",
    default=None,
    help="Run against the sandbox already running at this address (a persistent or a "
    "team's one) instead of starting one: each notebook makes a merchant of its own "
    "there, so the run leaves every other merchant's data and clock as they were.",
)
@click.option(
    "--update-stored",
    is_flag=True,
    help="Write outputs back into the notebooks (regenerates what nbval and the guide show).",
)
@click.option(
    "--junit",
    "junit_path",
    type=click.Path(dir_okay=False, writable=True, path_type=Path),
    default=None,
    metavar="PATH",
    help="Also write the results as JUnit XML to PATH: one test case per notebook.",
)
@click.option(
    "--json",
    "json_path",
    type=click.Path(dir_okay=False, writable=True, allow_dash=True, path_type=Path),
    default=None,
    metavar="PATH",
    help="Also write a JSON summary to PATH; with '-', to standard output, and everything "
    "else the command prints goes to standard error.",
)
@click.argument("only", nargs=-1)
def run(
    folder: Path | None,
    external: bool,
    sandbox_url: str | None,
    update_stored: bool,
    junit_path: Path | None,
    json_path: Path | None,
    only: tuple[str, ...],
) -> None:
    """Execute every flow notebook (or ONLY those named) against a sandbox and summarise.

    By default a fresh embedded sandbox is started on a free port with a new
    database, so every run starts from the same state. Executed copies are left in
    NOTEBOOKS/_executed/, which then holds this run's copies only; with --update-stored,
    each notebook that ran through also
    gets its stored outputs replaced (one that failed keeps its old ones). Without
    --notebooks, where notebooks/ holds none, the notebooks shipped with the package
    run (`workbench notebooks copy DIR` makes an editable copy of them).

    With --external the notebooks run against WORKBENCH_BASE_URL instead, treated as a
    real service: if nothing answers there within a few seconds the command stops with
    one message and exit status 1. A notebook with a client.sandbox.<method> call in a
    code cell needs the sandbox's control routes (clock, fixtures, fail-next,
    reconciler), which a real service does not have: it is skipped, the reason printed.

    Exit status: 0 when every notebook that ran passed (skipped ones aside) and at least
    one ran; 1 when one failed, none ran or none could (no notebook, nothing answering
    with --external, a setting or an extra missing); 2 for a wrong option or argument;
    130 after Ctrl-C, which prints one line and the summary of the flows finished.
    --junit and --json are written whenever notebooks ran (not after Ctrl-C), before the
    command exits.
    """
    # Not at import: `workbench run --help` needs neither nbformat nor nbclient.
    from workbench.notebook.runner import EXECUTED_DIR, RunInterrupted, run_flows

    to_stdout = json_path is not None and str(json_path) == "-"
    echo = functools.partial(click.echo, err=to_stdout)
    source, folder = _notebooks_folder(folder, update_stored, echo)
    notebooks = discover(source)
    if only:
        notebooks = [p for p in notebooks if p.stem in only or p.name in only]
    if not notebooks:
        click.echo(f"No flow notebooks found in {source}/: no flow ran.", err=True)
        raise SystemExit(1)
    if external and sandbox_url:
        raise click.UsageError("--external and --base-url are exclusive: choose one")
    try:
        settings = Settings.load(base_url=sandbox_url)
    except ConfigError as exc:
        raise click.ClickException(str(exc)) from None
    base_url = settings.base_url
    if external or sandbox_url:
        reason = _unreachable(settings.base_url)
        if reason is not None:
            click.echo(
                f"Nothing answers at {settings.base_url} (WORKBENCH_BASE_URL): {reason}. "
                "No flow ran.",
                err=True,
            )
            raise SystemExit(1)
    output_dir = folder / EXECUTED_DIR
    started = datetime.now(UTC)
    # This run's copies are written apart and replace the folder's at the end, Ctrl-C
    # included: it never holds fresh copies beside stale ones of an earlier run.
    staging = folder / f"{STAGING_PREFIX}{os.getpid()}-{started:%Y%m%dT%H%M%S}"
    staging.mkdir(parents=True)
    interrupted: RunInterrupted | None = None
    ctrl_c: Any = None  # SIGINT's handler while the sandbox stops after a Ctrl-C
    results: list[FlowResult] = []
    try:
        with contextlib.ExitStack() as stack:
            stack.callback(_publish, staging, output_dir)
            tmp = stack.enter_context(tempfile.TemporaryDirectory(prefix="workbench-run-"))
            if external:
                base_url = settings.base_url
                echo(
                    f"Using the service at {base_url}; notebooks that call "
                    "client.sandbox.* are skipped"
                )
            elif sandbox_url:
                echo(f"Using the sandbox at {base_url}; each notebook makes a merchant of its own")
            else:
                base_url = stack.enter_context(_embedded_sandbox(settings, Path(tmp)))
                echo(f"Embedded sandbox listening at {base_url}")
            env = dict(os.environ)
            env.update(
                {
                    ENV_BASE_URL: base_url,
                    ENV_API_KEY: settings.api_key,
                    ENV_SECRET_KEY: settings.secret_key,
                }
            )
            try:
                results = run_flows(
                    notebooks,
                    env=env,
                    output_dir=staging,
                    in_place=update_stored,
                    progress=echo,
                    skip=_needs_control_routes if external else None,
                )
            except RunInterrupted as exc:
                interrupted = exc
                results = exc.finished
                # A second Ctrl-C while the sandbox stops would print its traceback.
                ctrl_c = signal.signal(signal.SIGINT, signal.SIG_IGN)
    except KeyboardInterrupt:  # before the first notebook: the sandbox was starting
        interrupted = RunInterrupted([], notebooks)
    finally:
        if ctrl_c is not None:
            signal.signal(signal.SIGINT, ctrl_c)
    results = [_moved(r, output_dir) for r in results]
    if interrupted is not None:
        _interrupted(interrupted, results, output_dir, echo)
        raise SystemExit(INTERRUPTED_EXIT_STATUS)
    echo("")
    _table(results, output_dir, echo)
    if update_stored:
        kept = [r.name for r in results if r.passed]
        echo(f"Stored outputs rewritten in {folder}/: {', '.join(kept) or 'none'}")
    echo(f"Guide: {guide_hint(Path.cwd())}")
    if junit_path is not None:
        junit_path.parent.mkdir(parents=True, exist_ok=True)
        junit_path.write_bytes(junit_xml(results, started=started))
        echo(f"JUnit XML: {junit_path.resolve()}")
    if json_path is not None:
        report = json_summary(results, started=started, base_url=base_url, external=external)
        if to_stdout:
            click.echo(json.dumps(report, indent=2))
        else:
            write_json(report, json_path)
            echo(f"JSON summary: {json_path.resolve()}")
    ran = [r for r in results if not r.skipped]
    failed = [r for r in ran if not r.passed]
    for r in failed:
        click.echo(f"FAILED {r.name}: {r.error}", err=True)
    if not ran:
        click.echo("No flow ran: every notebook was skipped.", err=True)
    status = exit_status(results)
    if status:
        raise SystemExit(status)


def guide_hint(folder: Path) -> str:
    """Where the reader finds the guide from ``folder``: served from a clone (which has
    ``mkdocs.yml``), else as published."""
    if (folder / "mkdocs.yml").is_file():
        return "`make docs-serve`, then http://127.0.0.1:8000/"
    return GUIDE_SOURCE
