"""``workbench run``: per-notebook results, a failure never reported as success, stored outputs
replaced only for a notebook that ran through; ``--external`` checks the address first and
skips the notebooks that need the sandbox's control routes."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import nbformat
import pytest
from click.testing import CliRunner
from jupyter_client.kernelspec import KernelSpecManager
from nbformat.v4 import new_code_cell, new_notebook

from tests.cli_imports import workbench_imports
from tests.ports import free_port
from workbench.cli.run import run
from workbench.config import ENV_API_KEY, ENV_BASE_URL, ENV_ENVIRONMENT, ENV_SECRET_KEY
from workbench.notebook.runner import _KernelSpecs, control_calls, execute_notebook
from workbench.sandbox import SandboxServer
from workbench.testing import running_sandbox


def _write(path: Path, *sources: str) -> None:
    book = new_notebook(cells=[new_code_cell(source) for source in sources])
    book.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nbformat.write(book, path)


def test_a_failing_notebook_fails_the_run_and_keeps_its_stored_outputs(tmp_path: Path) -> None:
    _write(
        tmp_path / "01-ok.ipynb",
        'import os\nprint(os.environ["WORKBENCH_BASE_URL"].startswith("http://127.0.0.1:"))',
    )
    _write(tmp_path / "02-broken.ipynb", 'assert False, "broken on purpose"')
    result = CliRunner().invoke(run, ["--notebooks", str(tmp_path), "--update-stored"])
    assert result.exit_code == 1, result.output
    lines = result.output.splitlines()
    assert any(line.split()[:2] == ["01-ok", "passed"] for line in lines), result.output
    assert any(line.split()[:2] == ["02-broken", "FAILED"] for line in lines), result.output
    assert "1 of 2 flows passed" in result.output
    assert "broken on purpose" in result.output
    stored_ok = nbformat.read(tmp_path / "01-ok.ipynb", as_version=4)
    assert stored_ok.cells[0].outputs[0]["text"] == "True\n"
    stored_broken = nbformat.read(tmp_path / "02-broken.ipynb", as_version=4)
    assert stored_broken.cells[0].outputs == []
    executed = nbformat.read(tmp_path / "_executed" / "02-broken.ipynb", as_version=4)
    assert executed.cells[0].outputs[0]["output_type"] == "error"
    assert "widgets" not in executed.metadata


def test_no_color_leaves_colour_codes_out_of_the_executed_tracebacks(tmp_path: Path) -> None:
    _write(tmp_path / "broken.ipynb", 'raise ValueError("broken on purpose")')
    env = {**os.environ, "NO_COLOR": "1"}
    result = execute_notebook(tmp_path / "broken.ipynb", env=env, output=tmp_path / "out.ipynb")
    assert not result.passed
    [error] = nbformat.read(tmp_path / "out.ipynb", as_version=4).cells[0].outputs
    assert "broken on purpose" in "\n".join(error["traceback"])
    assert not any("\x1b[" in line for line in error["traceback"]), error["traceback"]


def test_no_notebook_is_not_a_success(tmp_path: Path) -> None:
    result = CliRunner().invoke(run, ["--notebooks", str(tmp_path)])
    assert result.exit_code == 1
    assert "no flow ran" in result.output
    assert "passed" not in result.output


def test_kernels_run_over_private_sockets_without_warnings(
    tmp_path: Path, capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # A temporary folder of this test's own (other runs on the machine use theirs), short:
    # the kernel's socket paths live under it and a Unix socket path holds 107 bytes.
    own_tmp = Path(tempfile.mkdtemp(prefix="k"))
    monkeypatch.setenv("TMPDIR", str(own_tmp))
    monkeypatch.setattr(tempfile, "tempdir", None)  # gettempdir() reads TMPDIR again
    assert tempfile.gettempdir() == str(own_tmp)
    _write(tmp_path / "ok.ipynb", "print(6 * 7)")
    result = execute_notebook(tmp_path / "ok.ipynb", env=dict(os.environ), output=None)
    assert result.passed, result.error
    err = capfd.readouterr().err
    if os.name == "posix":
        assert "without encryption" not in err
    assert "Traceback" not in err
    assert not list(own_tmp.glob("wb-kernel-*"))


def test_a_finished_kernel_is_ended_not_asked_to_shut_itself_down(tmp_path: Path) -> None:
    # ipykernel's own shutdown closes its sockets on one thread while another still sends
    # the request's last status: under load that printed a ZMQError traceback, so the
    # runner never sends the request (the kernel here records one if it comes).
    asked = tmp_path / "asked"
    _write(
        tmp_path / "ok.ipynb",
        "kernel = get_ipython().kernel\n\n\n"
        "async def record(stream, ident, parent):\n"
        f"    open({str(asked)!r}, 'w').close()\n\n\n"
        'kernel.control_handlers["shutdown_request"] = record',
        "print(6 * 7)",
    )
    result = execute_notebook(tmp_path / "ok.ipynb", env=dict(os.environ), output=None)
    assert result.passed, result.error
    assert not asked.exists()


def _service_env(base_url: str) -> dict[str, str | None]:
    """The variables ``--external`` reads: this address, the default demo keys."""
    return {ENV_BASE_URL: base_url, ENV_API_KEY: None, ENV_SECRET_KEY: None, ENV_ENVIRONMENT: None}


def test_external_stops_with_one_message_when_nothing_answers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # no .env of the working copy
    _write(tmp_path / "01-ok.ipynb", 'open("ran", "w").close()')
    url = f"http://127.0.0.1:{free_port()}"
    result = CliRunner().invoke(
        run, ["--notebooks", str(tmp_path), "--external"], env=_service_env(url)
    )
    assert result.exit_code == 1, result.output
    assert f"Nothing answers at {url} (WORKBENCH_BASE_URL)" in result.output
    assert f"connection refused by {url.split('//')[1]};" in result.output
    assert "No flow ran." in result.output
    assert len(result.output.strip().splitlines()) == 1, result.output
    assert not (tmp_path / "ran").exists()
    assert not (tmp_path / "_executed").exists()


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SandboxServer]:
    """A sandbox already running, that ``--external`` treats as the real service."""
    folder = tmp_path_factory.mktemp("external")
    with running_sandbox(db_dir=folder, run_reconciler_in_background=False) as running:
        yield running


_MERCHANT_ONLY = 'import os\nprint(os.environ["WORKBENCH_BASE_URL"])'
_NEEDS_CONTROLS = (
    'open("ran-controls", "w").close()',
    "from workbench import Client\n\nclient = Client()\nclient.sandbox.advance_clock(seconds=60)",
    "client.sandbox.tick()\nclient.sandbox.tick()",
)
_COMMENT_ONLY = ("# Against the sandbox one could call client.sandbox.tick() here.", "print(42)")


def test_control_calls_are_read_from_code_cells_outside_comments(tmp_path: Path) -> None:
    _write(tmp_path / "controls.ipynb", *_NEEDS_CONTROLS)
    _write(tmp_path / "comment.ipynb", *_COMMENT_ONLY)
    book = new_notebook(cells=[nbformat.v4.new_markdown_cell("`client.sandbox.reset()`")])
    nbformat.write(book, tmp_path / "prose.ipynb")
    assert control_calls(tmp_path / "controls.ipynb") == [
        "client.sandbox.advance_clock",
        "client.sandbox.tick",
    ]
    assert control_calls(tmp_path / "comment.ipynb") == []
    assert control_calls(tmp_path / "prose.ipynb") == []


def test_external_skips_notebooks_that_need_control_routes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, service: SandboxServer
) -> None:
    monkeypatch.chdir(tmp_path)
    _write(tmp_path / "01-merchant.ipynb", _MERCHANT_ONLY)
    _write(tmp_path / "02-controls.ipynb", *_NEEDS_CONTROLS)
    _write(tmp_path / "03-comment.ipynb", *_COMMENT_ONLY)
    result = CliRunner().invoke(
        run, ["--notebooks", str(tmp_path), "--external"], env=_service_env(service.base_url)
    )
    assert result.exit_code == 0, result.output
    assert f"Using the service at {service.base_url}" in result.output
    lines = result.output.splitlines()
    assert any(line.split()[:2] == ["01-merchant", "passed"] for line in lines), result.output
    assert any(line.split()[:2] == ["02-controls", "skipped"] for line in lines), result.output
    assert any(line.split()[:2] == ["03-comment", "passed"] for line in lines), result.output
    reason = (
        "SKIPPED 02-controls: needs the sandbox's control routes, which a real service lacks "
        "(client.sandbox.advance_clock, client.sandbox.tick)"
    )
    assert reason in lines, result.output
    assert "2 of 2 flows passed" in result.output
    assert "; 1 skipped" in result.output
    # Not executed at all: its first cell, which needs no control route, never ran.
    assert not (tmp_path / "ran-controls").exists()
    assert not (tmp_path / "_executed" / "02-controls.ipynb").exists()
    executed = nbformat.read(tmp_path / "_executed" / "01-merchant.ipynb", as_version=4)
    assert executed.cells[0].outputs[0]["text"] == service.base_url + "\n"


def test_external_with_every_notebook_skipped_is_not_a_success(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, service: SandboxServer
) -> None:
    monkeypatch.chdir(tmp_path)
    _write(tmp_path / "02-controls.ipynb", *_NEEDS_CONTROLS)
    result = CliRunner().invoke(
        run, ["--notebooks", str(tmp_path), "--external"], env=_service_env(service.base_url)
    )
    assert result.exit_code == 1, result.output
    assert "0 of 0 flows passed" in result.output
    assert "No flow ran: every notebook was skipped." in result.output
    assert not (tmp_path / "ran-controls").exists()


def test_the_run_parent_imports_none_of_what_only_the_kernels_use(
    tmp_path: Path, service: SandboxServer
) -> None:
    _write(tmp_path / "01-kernel.ipynb", 'import sys\nprint("IPython" in sys.modules)')
    env = {k: v for k, v in os.environ.items() if k not in _service_env("")}
    env[ENV_BASE_URL] = service.base_url
    args = ["run", "--notebooks", str(tmp_path), "--external"]
    kernel_only = ["IPython", "ipywidgets", "pandas"]
    done, imported = workbench_imports(args, kernel_only, cwd=tmp_path, env=env, timeout=180)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 of 1 flows passed" in done.stdout, done.stdout
    assert imported == [], done.stderr
    executed = nbformat.read(tmp_path / "_executed" / "01-kernel.ipynb", as_version=4)
    assert executed.cells[0].outputs[0]["text"] == "True\n"  # the kernel has IPython


def test_the_runner_finds_the_kernel_spec_jupyter_finds() -> None:
    ours = _KernelSpecs().get_kernel_spec("python3")
    jupyters = KernelSpecManager().get_kernel_spec("python3")
    assert (ours.resource_dir, ours.argv) == (jupyters.resource_dir, jupyters.argv)


def test_the_runner_finds_a_kernel_spec_only_ipythons_folder_has(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("IPYTHONDIR", str(tmp_path))
    folder = tmp_path / "kernels" / "only-in-ipython"
    folder.mkdir(parents=True)
    spec = {"argv": ["python", "-m", "ipykernel_launcher"], "display_name": "x", "language": "py"}
    (folder / "kernel.json").write_text(json.dumps(spec), "utf-8")
    assert _KernelSpecs().get_kernel_spec("only-in-ipython").resource_dir == str(folder)
