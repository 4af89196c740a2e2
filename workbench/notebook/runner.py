"""Execute the flow notebooks headless, one fresh kernel each, and report per flow.

Used by ``workbench run`` (the README's main command) and by the command that
regenerates the notebooks' stored outputs. The kernels inherit the environment
given here, which is how they find the sandbox (``WORKBENCH_*`` variables).

Which notebooks need the sandbox's control routes (``/sandbox/*``: the business clock,
fixtures, fail-next, the reconciler, ...) is read from their code: the notebooks call
every control route through the client as ``client.sandbox.<method>(...)``, so a
notebook with ``client.sandbox.`` in a code cell (outside a comment line) needs them.
`control_calls` lists those calls; ``workbench run --external`` skips such a notebook
against a real service, which has no control routes, and prints that list as the reason.
A notebook that reaches the controls some other way is not detected and will fail there.

Ctrl-C stops a run between two awaits of the notebook's execution: the kernel is ended as
after a last cell, no executed copy is written for the notebook cut short, and
`run_flows` raises `RunInterrupted` holding the flows that finished before.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shutil
import signal
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

# isort: off
import workbench.notebook._no_iri  # noqa: F401  (before nbformat: see there)
import nbformat

# isort: on
from jupyter_client.kernelspec import KernelSpec, KernelSpecManager
from jupyter_client.manager import AsyncKernelManager
from jupyter_core.paths import jupyter_path
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError
from traitlets import default
from traitlets.config import Config

from workbench.notebook.shipped import discover

__all__ = [
    "FlowResult",
    "RunInterrupted",
    "control_calls",
    "discover",
    "execute_notebook",
    "run_flows",
]

EXECUTED_DIR = "_executed"

#: ``client.sandbox.<method>``, also as ``async_client.sandbox.<method>``.
_CONTROL_CALL = re.compile(r"client\.sandbox\.([A-Za-z_]\w*)")


@dataclass(frozen=True, slots=True)
class FlowResult:
    """The outcome of executing one flow notebook.

    Attributes:
        name: the notebook's file stem.
        source: the notebook executed.
        passed: every cell ran without an error (false when skipped).
        seconds: wall time of the execution.
        executed: where the executed copy was written (``None`` if nothing was written).
        error: the first error, one line, when not passed.
        skipped: why the notebook was not executed, when it was not.
    """

    name: str
    source: Path
    passed: bool
    seconds: float
    executed: Path | None
    error: str | None = None
    skipped: str | None = None


class RunInterrupted(Exception):
    """Ctrl-C stopped `run_flows`.

    Attributes:
        finished: the results of the notebooks that ended before it, in order.
        unfinished: the notebooks that did not end: the one running (no executed copy
            written for it), and those after it.
    """

    def __init__(self, finished: list[FlowResult], unfinished: list[Path]) -> None:
        super().__init__(f"interrupted after {len(finished)} notebooks")
        self.finished = finished
        self.unfinished = unfinished


class _StoppableClient(NotebookClient):
    """A notebook client that Ctrl-C stops by cancelling the execution.

    nbclient's own SIGINT handler kills the kernel under the running cell: the cell then
    fails with DeadKernelError, and nbclient's clean-up with an AssertionError (the
    kernel manager already gone), which ``workbench run`` printed as two tracebacks.
    Cancelled instead, the execution ends through nbclient's usual clean-up (the
    kernel ended as after a last cell) and `interrupted` says why it ended.
    """

    interrupted = False

    async def async_start_new_kernel(self, **kwargs: object) -> None:
        # nbclient has just set its handlers (SIGINT, SIGTERM); SIGINT's is replaced here,
        # and nbclient removes it when the execution ends.
        task = asyncio.current_task()
        with contextlib.suppress(NotImplementedError, RuntimeError):  # no signals, or a thread
            asyncio.get_running_loop().add_signal_handler(signal.SIGINT, self._interrupt, task)
        await super().async_start_new_kernel(**kwargs)

    def _interrupt(self, task: asyncio.Task[object] | None) -> None:
        if self.interrupted or task is None:
            return  # a second Ctrl-C while the kernel is being ended
        self.interrupted = True
        task.cancel()


def control_calls(notebook: Path) -> list[str]:
    """The sandbox control calls a notebook's code cells make, as ``client.sandbox.<method>``.

    Full-line comments are ignored; the list is sorted and without repeats, empty when
    the notebook needs no control route.
    """
    book = nbformat.read(notebook, as_version=4)  # type: ignore[no-untyped-call]
    found: set[str] = set()
    for cell in book.cells:
        if cell.cell_type != "code":
            continue
        for line in cell.source.splitlines():
            if not line.lstrip().startswith("#"):
                found.update(_CONTROL_CALL.findall(line))
    # Making a merchant of the run's own is a notebook's first step on a sandbox only:
    # notebook 01 guards it on the environment, and runs against a real service too.
    found.discard("create_merchant")
    return [f"client.sandbox.{name}" for name in sorted(found)]


def _one_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    # nbclient puts the traceback first and "ename: evalue" near the end.
    for line in reversed(text):
        if line and not line.startswith((" ", "-", "Cell In")):
            return line[:300]
    return type(error).__name__


def _holds_kernel(folders: list[str], name: str) -> bool:
    """Whether one of ``folders`` has a kernel spec ``name``, as `KernelSpecManager` finds one."""
    for folder in folders:
        if not os.path.isdir(folder):
            continue
        for entry in os.listdir(folder):
            if entry.lower() == name and os.path.isfile(os.path.join(folder, entry, "kernel.json")):
                return True
    return False


class _KernelSpecs(KernelSpecManager):
    """Kernel specs found as Jupyter finds them, without importing IPython when it can.

    Jupyter looks in its data folders, then in IPython's (``~/.ipython/kernels``), and
    locating that one imports IPython, which only the kernels use. When a data folder
    holds the kernel, IPython's folder, searched last, cannot change what is found.
    """

    def get_kernel_spec(self, kernel_name: str) -> KernelSpec:
        if not self.trait_has_value("kernel_dirs"):
            folders = jupyter_path("kernels")
            if _holds_kernel(folders, kernel_name.lower()):
                self.kernel_dirs = folders
        spec: KernelSpec = super().get_kernel_spec(kernel_name)
        return spec


class _KernelManager(AsyncKernelManager):
    @default("kernel_spec_manager")
    def _kernel_specs(self) -> KernelSpecManager:
        return _KernelSpecs(data_dir=self.data_dir)


def _kernel_transport(folder: Path) -> Config:
    """Talk to the kernel over Unix sockets in ``folder`` where there are any.

    Over loopback TCP, ipykernel 7 warns on every start that traffic is unencrypted;
    sockets in a private folder are neither unencrypted network traffic nor warned about.
    """
    if os.name != "posix":
        return Config()
    return Config({"KernelManager": {"transport": "ipc", "ip": str(folder / "kernel")}})


def execute_notebook(
    source: Path,
    *,
    env: Mapping[str, str],
    output: Path | None,
    timeout: int = 180,
    kernel_name: str = "python3",
) -> FlowResult:
    """Execute ``source`` in a new kernel that sees ``env``; write the executed copy to ``output``.

    Args:
        source: the notebook to execute (not modified unless ``output`` is ``source``).
        env: the kernel's environment.
        output: where to write the executed notebook, or ``None`` to discard it.
        timeout: seconds allowed per cell.
        kernel_name: the Jupyter kernel to start.
    """
    notebook = nbformat.read(source, as_version=4)  # type: ignore[no-untyped-call]
    started = time.perf_counter()
    error: str | None = None
    with tempfile.TemporaryDirectory(prefix="wb-kernel-") as sockets:
        client = _StoppableClient(
            notebook,
            timeout=timeout,
            kernel_name=kernel_name,
            kernel_manager_class=_KernelManager,
            resources={"metadata": {"path": str(source.parent)}},
            # Widget state would be stored in the notebook and make nbconvert load the
            # widget manager from a CDN; per-cell timings are noise in a reviewed file.
            store_widget_state=False,
            record_timing=False,
            # Once every cell has run and its outputs are in, the kernel is ended (its
            # process group killed), not asked to shut itself down: ipykernel's own
            # shutdown tears its sockets down on one thread while another still sends the
            # request's last status, and under load that printed a ZMQError traceback.
            shutdown_kernel="immediate",
            config=_kernel_transport(Path(sockets)),
            # https://no-color.org: the kernel's tracebacks, stored in the executed copy,
            # carry no colour codes either where NO_COLOR is set and not empty.
            extra_arguments=["--colors=NoColor"] if env.get("NO_COLOR") else [],
        )
        try:
            client.execute(env=dict(env))
        except (CellExecutionError, CellTimeoutError, DeadKernelError) as exc:
            if client.interrupted:
                raise KeyboardInterrupt from None
            error = _one_line(exc)
        except asyncio.CancelledError:
            if client.interrupted:
                raise KeyboardInterrupt from None
            raise
    seconds = time.perf_counter() - started
    notebook.metadata.pop("widgets", None)
    if output is not None:
        output.parent.mkdir(parents=True, exist_ok=True)
        # Written whole or not at all: a Ctrl-C while writing leaves no half a notebook.
        partial = output.with_name(f".{output.name}.partial")
        nbformat.write(notebook, partial)  # type: ignore[no-untyped-call]
        partial.replace(output)
    return FlowResult(source.stem, source, error is None, seconds, output, error)


def run_flows(
    notebooks: list[Path],
    *,
    env: Mapping[str, str] | None = None,
    output_dir: Path | None,
    in_place: bool = False,
    progress: Callable[[str], None] | None = None,
    skip: Callable[[Path], str | None] | None = None,
) -> list[FlowResult]:
    """Execute each notebook in turn and return one result per notebook.

    Args:
        notebooks: the notebooks, in the order to run them.
        env: the kernels' environment (default: this process's).
        output_dir: where executed copies go (needed for ``in_place``).
        in_place: also overwrite each source that ran through with its executed copy
            (regenerates stored outputs); a failed one is left as it was.
        progress: called with a line of text before and after each notebook.
        skip: called with each notebook first; a reason it returns skips that notebook
            (not executed, stored outputs untouched, ``FlowResult.skipped`` set).

    Raises:
        RunInterrupted: Ctrl-C (SIGINT) stopped the run; it holds the finished results.
    """
    kernel_env = dict(os.environ if env is None else env)
    results: list[FlowResult] = []
    try:
        for index, source in enumerate(notebooks, start=1):
            results.append(
                _run_one(
                    source, index, len(notebooks), kernel_env, output_dir, in_place, progress, skip
                )
            )
    except KeyboardInterrupt:
        raise RunInterrupted(results, notebooks[len(results) :]) from None
    return results


def _run_one(
    source: Path,
    index: int,
    count: int,
    kernel_env: Mapping[str, str],
    output_dir: Path | None,
    in_place: bool,
    progress: Callable[[str], None] | None,
    skip: Callable[[Path], str | None] | None,
) -> FlowResult:
    reason = skip(source) if skip else None
    if reason:
        if progress:
            progress(f"[{index}/{count}] {source.stem}: skipped: {reason}")
        return FlowResult(source.stem, source, False, 0.0, None, skipped=reason)
    if progress:
        progress(f"[{index}/{count}] {source.stem} ...")
    target = output_dir / source.name if output_dir else None
    result = execute_notebook(source, env=kernel_env, output=target)
    if in_place and result.passed and target is not None:
        # Only a notebook that ran through replaces its stored outputs; a failed run
        # stays in the executed copy for reading.
        shutil.copyfile(target, source)
    if progress:
        word = "passed" if result.passed else f"FAILED: {result.error}"
        progress(f"[{index}/{count}] {source.stem}: {word} ({result.seconds:.1f} s)")
    return result
