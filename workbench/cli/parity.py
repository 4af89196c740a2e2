"""``workbench parity``: run the flows against two targets and report where they differ."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import click
from dotenv import dotenv_values

from workbench.config import (
    DEFAULT_API_KEY,
    DEFAULT_SECRET_KEY,
    ENV_API_KEY,
    ENV_BASE_URL,
    ENV_ENVIRONMENT,
    ENV_SECRET_KEY,
    ConfigError,
    Environment,
    Settings,
)

if TYPE_CHECKING:
    from workbench.flows import FlowSpec
    from workbench.parity import FlowRecord, FlowRecorder, Recording

__all__ = ["parity"]

#: Exit statuses: the comparison found nothing, found differences, or could not run.
EXIT_SAME, EXIT_DIFFERENT, EXIT_ERROR = 0, 1, 2


def _fail(message: str) -> NoReturn:
    click.echo(f"workbench parity: {message}", err=True)
    raise SystemExit(EXIT_ERROR)


@contextlib.contextmanager
def _fresh_sandbox() -> Iterator[str]:
    """A new local sandbox for the run: in-memory database, free port, demo keys."""
    from workbench.sandbox import SandboxConfig, SandboxServer

    config = SandboxConfig(
        db_url="sqlite://",
        api_key=DEFAULT_API_KEY,
        secret_key=DEFAULT_SECRET_KEY,
        run_reconciler_in_background=False,  # the flows run it when they need it
    )
    with SandboxServer(config) as server:
        yield server.base_url


def _b_settings(b_url: str | None) -> Settings:
    """Target B: ``--b-url`` or ``WORKBENCH_BASE_URL``, with the ``WORKBENCH_*`` keys."""
    dotenv = dotenv_values(".env") if Path(".env").is_file() else {}
    if not b_url and not (os.environ.get(ENV_BASE_URL) or dotenv.get(ENV_BASE_URL)):
        _fail(
            f"no target B: set {ENV_BASE_URL} (with {ENV_API_KEY} and {ENV_SECRET_KEY}), "
            "or pass --b-url or --against-recording"
        )
    try:
        settings = Settings.load(base_url=b_url)
    except (ConfigError, ValueError) as exc:
        _fail(f"target B: {exc}")
    if settings.environment is Environment.PRODUCTION:
        _fail(
            f"target B, {settings.base_url}, is a production address: the flows charge test "
            f"cards, so parity runs only against a test environment. Point {ENV_BASE_URL} at "
            f"the provider's test environment (or set {ENV_ENVIRONMENT}=sandbox if this "
            "address is one)"
        )
    return settings


class _Recorded:
    """A recording standing in for target B: each flow is looked up instead of run."""

    def __init__(self, recording: Recording, path: Path) -> None:
        self.recording = recording
        self.name = f"recording {path} of {recording.target} ({recording.created_at})"
        self.control_routes = recording.control_routes

    def run(self, spec: FlowSpec) -> FlowRecord | None:
        return self.recording.flow(spec.name)


def _yes(value: bool) -> str:
    return "yes" if value else "no, steps that need them are skipped"


@click.command("parity")
@click.argument("names", nargs=-1, metavar="[FLOW]...")
@click.option(
    "--a-url",
    metavar="URL",
    help="Target A, a local sandbox with the demo keys. Default: a fresh local sandbox "
    "started for the run.",
)
@click.option(
    "--b-url",
    metavar="URL",
    help=f"Target B, with {ENV_API_KEY} and {ENV_SECRET_KEY}. Default: {ENV_BASE_URL}.",
)
@click.option(
    "--against-recording",
    "against",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Compare A with this recording instead of a live B (no credentials needed).",
)
@click.option(
    "--record",
    "record_to",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Save B's exchanges here (A's with --against-recording), secrets redacted.",
)
@click.option(
    "--report-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("parity-report"),
    show_default=True,
    help="Where parity.md and parity.html are written.",
)
def parity(
    names: tuple[str, ...],
    a_url: str | None,
    b_url: str | None,
    against: Path | None,
    record_to: Path | None,
    report_dir: Path,
) -> None:
    """Run the flows (all, or each FLOW named) against targets A and B and compare them.

    The flows are the code behind the notebooks. Every exchange is kept (method, path,
    status, X-Request-Id, Idempotent-Replayed, Retry-After, body; secrets and card data
    redacted); ids, timestamps, request ids and URLs become placeholders that keep
    identity; then each step is reported as same, differs (field, A, B), only in A or
    only in B. Steps that need the local sandbox's control routes are skipped on a
    target without them, each with the reason. A line is printed per flow as it runs,
    then a summary table; the whole report is written as Markdown and HTML.

    Exit status: 0 nothing differed, 1 something did, 2 the comparison could not run.
    """
    from workbench.flows import FLOWS
    from workbench.parity import (
        FlowRecorder,
        ParityReport,
        RecordingError,
        Target,
        TargetError,
        compare_flow,
        load_recording,
        progress_line,
        render_html,
        render_markdown,
        save_recording,
        summary_table,
    )

    unknown = [n for n in names if n not in FLOWS]
    if unknown:
        _fail(f"no flow named {', '.join(unknown)}; the flows are {', '.join(FLOWS)}")
    if against is not None and b_url is not None:
        _fail("--b-url and --against-recording both name target B: pass one")
    side_b: FlowRecorder | _Recorded
    if against is not None:
        try:
            side_b = _Recorded(load_recording(against), against)
        except RecordingError as exc:
            _fail(str(exc))
    else:
        settings_b = _b_settings(b_url)
        side_b = FlowRecorder(Target(settings_b.base_url, settings_b))
    chosen = list(names) or list(FLOWS)
    with contextlib.ExitStack() as stack:
        url = a_url or stack.enter_context(_fresh_sandbox())
        name_a = f"local sandbox at {a_url}" if a_url else f"fresh local sandbox at {url}"
        side_a = FlowRecorder(Target(name_a, Settings(base_url=url)))
        name_b = side_b.name if isinstance(side_b, _Recorded) else side_b.target.name
        runs_a: list[FlowRecord] = []
        runs_b: list[FlowRecord] = []
        results = []
        try:
            click.echo(f"A: {name_a} (control routes: {_yes(side_a.control_routes)})")
            click.echo(f"B: {name_b} (control routes: {_yes(side_b.control_routes)})")
            for index, name in enumerate(chosen, start=1):
                flow_a, flow_b = side_a.run(FLOWS[name]), side_b.run(FLOWS[name])
                runs_a.append(flow_a)
                runs_b.extend([flow_b] if flow_b is not None else [])
                result = compare_flow(
                    flow_a,
                    flow_b,
                    a_control=side_a.control_routes,
                    b_control=side_b.control_routes,
                )
                results.append(result)
                click.echo(progress_line(index, len(chosen), result))
        except TargetError as exc:
            _fail(str(exc))
    report = ParityReport(name_a, name_b, tuple(results))
    click.echo("")
    click.echo(summary_table(report))
    report_dir.mkdir(parents=True, exist_ok=True)
    markdown, page = report_dir / "parity.md", report_dir / "parity.html"
    markdown.write_text(render_markdown(report), encoding="utf-8")
    page.write_text(render_html(report), encoding="utf-8")
    click.echo(f"\nReports: {markdown} and {page}")
    if record_to is not None:
        if isinstance(side_b, _Recorded):
            kept = side_a.recording(runs_a)
        else:
            kept = side_b.recording(runs_b)
        save_recording(kept, record_to)
        click.echo(f"Recording of {kept.target}: {record_to}")
    raise SystemExit(EXIT_SAME if report.ok else EXIT_DIFFERENT)
