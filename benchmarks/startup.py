"""Start-up costs, each against a baseline measured in the same run, from plain installs.

The wheel is built from this checkout and installed, with the versions ``uv.lock``
pins, into two new virtual environments as users install it: the core alone, and
``[testing]`` (which brings the sandbox). Then, alternating the measured command and
its baseline in every round:

1. **Sandbox start** (``[testing]`` install): from the command to the first answer to a
   signed ``GET /sandbox/fixtures`` (200), each round on a fresh SQLite file, for
   ``workbench sandbox --db sqlite:///... --no-reconciler`` against a bare uvicorn +
   Starlette app answering the same path. Target: at most 3x.
2. **Client import** (core install): a new interpreter running ``import workbench;
   workbench.Client()`` against one running ``import <http library>``, the library
   being the one the client itself loads (``httpx``, or its successor). Target: at
   most 2x. ``python -c pass`` is printed beside them for scale.
3. **pytest plugin** (``[testing]`` install): ``pytest`` on a project with one test that
   uses no fixture, with the plugin (as installed) against ``-p no:workbench``.
   Target: at most 0.15 s more.

Prints the median, the spread (min-max) and the ratio (or difference) of the medians.
``--here`` measures this checkout's own environment instead (no installs; quicker while
working, but the dev environment's extra packages change the baseline). Run:
``uv run python -m benchmarks.startup``. Not run by the tests.
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from benchmarks._servers import free_port
from workbench.config import DEFAULT_API_KEY, DEFAULT_SECRET_KEY
from workbench.signing import sign_request

ROOT = Path(__file__).resolve().parents[1]
#: The request whose answer ends a start: signed, read from the database's fixtures.
PROBE = "/sandbox/fixtures"

STARLETTE_APP = """
import sys, uvicorn
from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.routing import Route
async def fixtures(request):
    return JSONResponse({"merchants": []})
app = Starlette(routes=[Route("/sandbox/fixtures", fixtures)])
uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
"""

#: Which HTTP library the client loads, asked of the install itself.
WHICH_HTTP = """
import sys, workbench
workbench.Client()
print(next(name for name in ("httpx2", "httpx") if name in sys.modules))
"""

ONE_TEST = "def test_nothing_of_the_plugin():\n    assert 1 + 1 == 2\n"


@dataclass(frozen=True)
class Python:
    """An environment to measure in: its ``bin`` folder and the variables to run it with."""

    bin: Path
    env: dict[str, str]

    def command(self, program: str, *args: str) -> list[str]:
        return [str(self.bin / program), *args]


def _clean_environment(tmp: Path) -> dict[str, str]:
    """This environment minus what points at another environment, config or sandbox."""
    other = ("VIRTUAL_ENV", "CONDA_PREFIX", "PYTHONPATH", "PYTHONHOME", "UV_PROJECT_ENVIRONMENT")
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in other and not k.startswith(("PYTEST_", "WORKBENCH_", "COV_", "COVERAGE_"))
    }
    env.update(TMPDIR=str(tmp), UV_PYTHON_DOWNLOADS="never", UV_NO_PROGRESS="1")
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # every install is measured with its caches
    return env


def _uv() -> str:
    found = shutil.which("uv") or str(ROOT / ".tools" / "bin" / "uv")
    if not Path(found).is_file():
        raise SystemExit("uv is missing: `make setup` installs it into .tools/")
    return found


def _run_uv(uv: str, *args: str | Path, env: dict[str, str], cwd: Path) -> None:
    """A uv command from its cache first, from the index only if the cache lacks something."""
    command = [uv, *map(str, args)]
    for extra in (["--offline"], []):
        done = subprocess.run([*command, *extra], cwd=cwd, env=env, capture_output=True, text=True)
        if done.returncode == 0:
            return
    raise SystemExit(f"{' '.join(command)} failed:\n{done.stdout}{done.stderr}")


def install(folder: Path, extras: tuple[str, ...], wheel: Path, env: dict[str, str]) -> Python:
    """A new virtual environment: the locked versions of ``extras``, then the wheel."""
    uv = _uv()
    name = "-".join(extras) or "core"
    lock = folder / f"pylock.{name}.toml"
    chosen = [arg for extra in extras for arg in ("--extra", extra)]
    _run_uv(
        uv, "export", "--frozen", "--format", "pylock.toml", "--no-dev", "--no-emit-project",
        *chosen, "--quiet", "--output-file", lock, env=env, cwd=ROOT,
    )  # fmt: skip
    path = folder / name
    _run_uv(uv, "venv", "--quiet", "--python", sys.executable, path, env=env, cwd=folder)
    python = path / "bin" / "python"
    _run_uv(uv, "pip", "install", "--python", python, "-r", lock, env=env, cwd=folder)
    spec = f"{wheel}[{','.join(extras)}]" if extras else str(wheel)
    _run_uv(uv, "pip", "install", "--python", python, spec, env=env, cwd=folder)
    bin_dir = path / "bin"
    run_env = dict(env, PATH=f"{bin_dir}{os.pathsep}{env.get('PATH', '')}")
    # Compile once, as the first run of a real install would, so no round pays for it.
    subprocess.run([str(python), "-m", "compileall", "-q", str(path / "lib")], env=run_env)
    return Python(bin_dir, run_env)


@contextlib.contextmanager
def environments(here: bool) -> Iterator[tuple[Python, Python]]:
    """The core and the ``[testing]`` environments (both this one's with ``here``)."""
    with tempfile.TemporaryDirectory(prefix="wb-startup-") as work:
        folder = Path(work)
        (folder / "tmp").mkdir()
        env = _clean_environment(folder / "tmp")
        if here:
            this = Python(Path(sys.executable).parent, env)
            yield this, this
            return
        print("building the wheel and two installs (core, [testing]) ...", flush=True)
        _run_uv(_uv(), "build", "--wheel", "--out-dir", folder / "dist", ROOT, env=env, cwd=ROOT)
        [wheel] = (folder / "dist").glob("payments_workbench-*.whl")
        yield install(folder, (), wheel, env), install(folder, ("testing",), wheel, env)


def _answers(port: int) -> bool:
    """Whether a signed probe gets a 200 now (a refused connection is not an answer)."""
    headers = sign_request(
        api_key=DEFAULT_API_KEY, secret_key=DEFAULT_SECRET_KEY, method="GET", url=PROBE
    ).as_dict()
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        connection.request("GET", PROBE, headers=headers)
        response = connection.getresponse()
        response.read()
    except (ConnectionRefusedError, ConnectionResetError, http.client.RemoteDisconnected):
        return False
    finally:
        connection.close()
    if response.status != 200:
        raise RuntimeError(f"{PROBE} answered {response.status}")
    return True


def time_to_answer(command: list[str], port: int, env: dict[str, str], cwd: Path) -> float:
    """Seconds from starting ``command`` to the first answer on ``port``."""
    start = time.perf_counter()
    process = subprocess.Popen(
        command, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    try:
        while not _answers(port):
            if process.poll() is not None:
                raise RuntimeError(f"{command[0]} stopped: {process.stderr.read().decode()}")  # type: ignore[union-attr]
            time.sleep(0.005)
        return time.perf_counter() - start
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def time_to_exit(command: list[str], env: dict[str, str], cwd: Path) -> float:
    """Seconds ``command`` takes to run to its end (which must be a success)."""
    start = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed:\n{done.stdout}{done.stderr}")
    return elapsed


@dataclass(frozen=True)
class Figures:
    """Seconds of each round of one measured command."""

    label: str
    seconds: list[float]

    @property
    def median(self) -> float:
        return statistics.median(self.seconds)

    def line(self) -> str:
        low, high = min(self.seconds), max(self.seconds)
        return (
            f"  {self.label:<44} median {self.median:6.3f} s"
            f"  (spread {low:.3f}-{high:.3f}, {len(self.seconds)} rounds)"
        )


def alternate(rounds: int, measured: dict[str, Callable[[], float]]) -> list[Figures]:
    """Each command once per round, in turn, after one unrecorded warm-up round."""
    for run in measured.values():
        run()
    seconds: dict[str, list[float]] = {label: [] for label in measured}
    for _ in range(rounds):
        for label, run in measured.items():
            seconds[label].append(run())
    return [Figures(label, values) for label, values in seconds.items()]


def sandbox_start(testing: Python, work: Path, rounds: int) -> None:
    count = iter(range(10_000))

    def bare() -> float:
        port = free_port()
        command = testing.command("python", "-c", STARLETTE_APP, str(port))
        return time_to_answer(command, port, testing.env, work)

    def sandbox() -> float:
        port = free_port()
        db = work / f"start-{next(count)}.db"  # a fresh file every time
        command = testing.command(
            "workbench", "sandbox", "--port", str(port), "--db", f"sqlite:///{db}",
            "--no-reconciler",
        )  # fmt: skip
        return time_to_answer(command, port, testing.env, work)

    base, measured = alternate(
        rounds, {"bare uvicorn + Starlette": bare, "workbench sandbox (fresh SQLite)": sandbox}
    )
    print("1. command to first answer (signed GET /sandbox/fixtures)")
    print(base.line())
    print(measured.line())
    print(f"  ratio {measured.median / base.median:.2f} (target: at most 3)")


def client_import(core: Python, work: Path, rounds: int) -> None:
    which = subprocess.run(
        core.command("python", "-c", WHICH_HTTP), env=core.env, cwd=work,
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip

    def python(code: str) -> Callable[[], float]:
        return lambda: time_to_exit(core.command("python", "-c", code), core.env, work)

    empty, base, measured = alternate(
        rounds,
        {
            "python -c pass": python("pass"),
            f"import {which}": python(f"import {which}"),
            "import workbench; workbench.Client()": python("import workbench; workbench.Client()"),
        },
    )
    print(f"2. a new interpreter importing (core install; the client loads {which})")
    print(empty.line())
    print(base.line())
    print(measured.line())
    print(f"  ratio {measured.median / base.median:.2f} (target: at most 2)")


def pytest_plugin(testing: Python, work: Path, rounds: int) -> None:
    project = work / "project"
    project.mkdir()
    (project / "test_one.py").write_text(ONE_TEST, "utf-8")
    options = ("-q", "-p", "no:cacheprovider", "test_one.py")

    def pytest(*extra: str) -> Callable[[], float]:
        command = testing.command("pytest", *extra, *options)
        return lambda: time_to_exit(command, testing.env, project)

    base, measured = alternate(
        rounds, {"pytest -p no:workbench": pytest("-p", "no:workbench"), "pytest": pytest()}
    )
    print("3. pytest on one test that uses no fixture ([testing] install)")
    print(base.line())
    print(measured.line())
    print(f"  the plugin adds {measured.median - base.median:+.3f} s (target: at most 0.15 s)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--here", action="store_true", help="measure this environment")
    parser.add_argument(
        "--only", choices=["sandbox", "client", "pytest"], action="append", default=None
    )
    args = parser.parse_args()
    parts = args.only or ["sandbox", "client", "pytest"]
    with environments(args.here) as (core, testing), tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        if "sandbox" in parts:
            sandbox_start(testing, work, args.rounds)
        if "client" in parts:
            client_import(core, work, args.rounds)
        if "pytest" in parts:
            pytest_plugin(testing, work, args.rounds)


if __name__ == "__main__":
    main()
