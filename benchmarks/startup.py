"""Start-up costs, each against a baseline measured in the same run, from plain installs.

The wheel is built from this checkout and installed, with the versions ``uv.lock``
pins, into two new virtual environments as users install it: the core alone, and
``[testing]`` (which brings the sandbox). Then, alternating the measured command and
its baseline in every round:

1. **Sandbox start** (``[testing]`` install): from the command to the first answer to a
   signed ``GET /sandbox/fixtures`` (200), each round on a fresh SQLite file, for
   ``workbench sandbox --db sqlite:///... --no-reconciler`` against a bare uvicorn +
   Starlette app answering the same path. Target: at most 3x. For scale, a new
   interpreter that only imports FastAPI, SQLAlchemy and uvicorn is timed beside them.
2. **Client import** (core install): a new interpreter running ``import workbench;
   workbench.Client()`` against one running ``import <http library>``, the library
   being the one the client itself loads (``httpx``, or its successor). Target: at
   most 2x. ``python -c pass`` is printed beside them for scale.
3. **pytest plugin** (``[testing]`` install): ``pytest`` on a project with one test that
   uses no fixture, with the plugin (as installed) against ``-p no:workbench``.
   Target: at most 0.15 s more.

Prints the median, the spread (min-max) and the ratio (or difference) of the medians, of
wall time and of the measured process's CPU time (user + system; for a server, up to its
first answer): on a machine shared with other work, wall times swing with the load and
CPU times much less. Linux only (a server's CPU time is read from /proc).
``--here`` measures this checkout's own environment instead (no installs; quicker while
working, but the dev environment's extra packages change the baseline).
``--instructions`` counts, for the sandbox start, the instructions each command executes
under valgrind's callgrind instead (once each, from the command to its first answer or
the end of its imports): the same count whatever else the machine runs, so the ratios
hold on a loaded machine too (needs valgrind: ``apt-get install valgrind``). Run:
``uv run python -m benchmarks.startup``. Not run by the tests.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import http.client
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from benchmarks._callgrind import totals
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


@dataclass(frozen=True)
class Run:
    """One measured run: wall seconds, and CPU seconds of the measured process."""

    wall: float
    cpu: float


def _cpu_seconds(pid: int) -> float:
    """CPU seconds (user + system) process ``pid`` has used so far (Linux's /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def time_to_answer(command: list[str], port: int, env: dict[str, str], cwd: Path) -> Run:
    """From starting ``command`` to the first answer on ``port``."""
    start = time.perf_counter()
    process = subprocess.Popen(
        command, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    try:
        while not _answers(port):
            if process.poll() is not None:
                raise RuntimeError(f"{command[0]} stopped: {process.stderr.read().decode()}")  # type: ignore[union-attr]
            time.sleep(0.005)
        wall = time.perf_counter() - start
        return Run(wall, _cpu_seconds(process.pid))
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def time_to_exit(command: list[str], env: dict[str, str], cwd: Path) -> Run:
    """From starting ``command`` to its end (which must be a success)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed:\n{done.stdout}{done.stderr}")
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return Run(wall, cpu)


@dataclass(frozen=True)
class Figures:
    """The runs of one measured command, one per round."""

    label: str
    runs: list[Run]

    @property
    def wall(self) -> float:
        return statistics.median(run.wall for run in self.runs)

    @property
    def cpu(self) -> float:
        return statistics.median(run.cpu for run in self.runs)

    def line(self) -> str:
        walls, cpus = [run.wall for run in self.runs], [run.cpu for run in self.runs]
        return (
            f"  {self.label:<40} wall {self.wall:6.3f} s ({min(walls):.3f}-{max(walls):.3f})"
            f"  cpu {self.cpu:6.3f} s ({min(cpus):.3f}-{max(cpus):.3f})"
        )


def ratio(measured: Figures, base: Figures) -> str:
    """The ratio of the medians, wall and CPU."""
    return f"wall {measured.wall / base.wall:.2f}, cpu {measured.cpu / base.cpu:.2f}"


def alternate(rounds: int, measured: dict[str, Callable[[], Run]]) -> list[Figures]:
    """Each command once per round, in turn, after one unrecorded warm-up round."""
    for run in measured.values():
        run()
    runs: dict[str, list[Run]] = {label: [] for label in measured}
    for _ in range(rounds):
        for label, run in measured.items():
            runs[label].append(run())
    return [Figures(label, values) for label, values in runs.items()]


#: What every start of the sandbox imports before it can answer, whatever it does: the
#: web framework, the database toolkit, the server. Timed alone for scale, not a target.
STACK = "import fastapi, sqlalchemy, uvicorn"
#: What is left of the stack without FastAPI: the floor of a sandbox on Starlette alone.
NO_FASTAPI = "import pydantic, sqlalchemy, starlette.routing, uvicorn"


def imports_only(imports: str) -> str:
    """``imports`` as the sandbox makes them (garbage collector off, see
    `workbench.cli.sandbox`), ended as soon as they are done: an interpreter's teardown
    is no part of a start."""
    return f"import gc; gc.disable(); {imports}; import os; os._exit(0)"


@dataclass(frozen=True)
class Start:
    """A command timed in the sandbox-start comparison; ``port`` when it is a server."""

    command: list[str]
    port: int | None


def start_commands(testing: Python, work: Path) -> dict[str, Callable[[], Start]]:
    """The bare start, the sandbox start and the stack's imports, in that order, by label;
    each call makes its command afresh (a new port, a new database file)."""
    count = iter(range(10_000))
    python = functools.partial(testing.command, "python", "-c")

    def bare() -> Start:
        port = free_port()
        return Start(python(STARLETTE_APP, str(port)), port)

    def sandbox() -> Start:
        port = free_port()
        db = work / f"start-{next(count)}.db"  # a fresh file every time
        command = testing.command(
            "workbench", "sandbox", "--port", str(port), "--db", f"sqlite:///{db}",
            "--no-reconciler",
        )  # fmt: skip
        return Start(command, port)

    def stack() -> Start:
        return Start(python(imports_only(STACK)), None)

    def no_fastapi() -> Start:
        return Start(python(imports_only(NO_FASTAPI)), None)

    return {
        "bare uvicorn + Starlette": bare,
        "workbench sandbox (fresh SQLite)": sandbox,
        STACK: stack,
        NO_FASTAPI: no_fastapi,
    }


def _floor_lines(bare: float, sandbox: float, stack: float, no_fastapi: float) -> list[str]:
    """How many bare starts the stack's imports take, and the sandbox beyond them."""
    return [
        f"  the stack's imports alone (collector off, to their end): {stack / bare:.2f} bare "
        f"starts; without FastAPI: {no_fastapi / bare:.2f}",
        f"  the sandbox beyond the stack's imports: {(sandbox - stack) / bare:.2f} bare starts "
        f"(room the target leaves: {max(3 - stack / bare, 0):.2f})",
    ]


def sandbox_start(testing: Python, work: Path, rounds: int) -> None:
    def timed(make: Callable[[], Start]) -> Callable[[], Run]:
        def run() -> Run:
            start = make()
            if start.port is None:
                return time_to_exit(start.command, testing.env, work)
            return time_to_answer(start.command, start.port, testing.env, work)

        return run

    makers = start_commands(testing, work)
    base, measured, stack, no_fastapi = alternate(
        rounds, {label: timed(make) for label, make in makers.items()}
    )
    print("1. command to first answer (signed GET /sandbox/fixtures; cpu: the server's)")
    print(base.line())
    print(measured.line())
    print(f"  ratio {ratio(measured, base)} (target: at most 3)")
    print(stack.line())
    print(no_fastapi.line())
    print(*_floor_lines(base.wall, measured.wall, stack.wall, no_fastapi.wall), sep="\n")


def count_instructions(label: str, start: Start, env: dict[str, str], cwd: Path) -> int:
    """Instructions ``start`` executes, to its first answer or its end, under callgrind.

    A server's counters are dumped (``callgrind_control --dump``) once it has answered,
    then it is killed: its shutdown is no part of a start.
    """
    valgrind, control = shutil.which("valgrind"), shutil.which("callgrind_control")
    if valgrind is None or control is None:
        raise SystemExit("--instructions needs valgrind: apt-get install valgrind")
    with tempfile.TemporaryDirectory(prefix="wb-callgrind-") as out:
        counted = [valgrind, "--tool=callgrind", f"--callgrind-out-file={out}/run.%p"]
        process = subprocess.Popen(
            [*counted, *start.command], cwd=cwd, env=env,
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        try:
            if start.port is None:
                if process.wait() != 0:
                    raise RuntimeError(f"{label} failed: {process.communicate()[1]}")
                return totals(Path(out) / f"run.{process.pid}")
            while not _answers(start.port):
                if process.poll() is not None:
                    raise RuntimeError(f"{label} stopped: {process.communicate()[1]}")
                time.sleep(0.05)
            # callgrind_control finds the process by its pipes in TMPDIR: the same env.
            dumped = subprocess.run(
                [control, "--dump", str(process.pid)], env=env, capture_output=True, text=True
            )
            if dumped.returncode != 0 or "OK" not in dumped.stdout:
                raise RuntimeError(f"callgrind_control: {dumped.stdout}{dumped.stderr}")
            return totals(Path(out) / f"run.{process.pid}.1")
        finally:
            process.kill()
            process.wait()


def sandbox_start_instructions(testing: Python, work: Path) -> None:
    print("1. command to first answer, in instructions (callgrind; one run each)")
    counts = []
    for label, make in start_commands(testing, work).items():
        counts.append(count_instructions(label, make(), testing.env, work))
        print(f"  {label:<56} {counts[-1] / 1e9:6.3f} billion")
    base, measured, stack, no_fastapi = counts
    print(f"  ratio {measured / base:.2f} (target: at most 3)")
    print(*_floor_lines(base, measured, stack, no_fastapi), sep="\n")


def client_import(core: Python, work: Path, rounds: int) -> None:
    which = subprocess.run(
        core.command("python", "-c", WHICH_HTTP), env=core.env, cwd=work,
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip

    def python(code: str) -> Callable[[], Run]:
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
    print(f"  ratio {ratio(measured, base)} (target: at most 2)")


def pytest_plugin(testing: Python, work: Path, rounds: int) -> None:
    project = work / "project"
    project.mkdir()
    (project / "test_one.py").write_text(ONE_TEST, "utf-8")
    options = ("-q", "-p", "no:cacheprovider", "test_one.py")

    def pytest(*extra: str) -> Callable[[], Run]:
        command = testing.command("pytest", *extra, *options)
        return lambda: time_to_exit(command, testing.env, project)

    base, measured = alternate(
        rounds, {"pytest -p no:workbench": pytest("-p", "no:workbench"), "pytest": pytest()}
    )
    print("3. pytest on one test that uses no fixture ([testing] install)")
    print(base.line())
    print(measured.line())
    print(
        f"  the plugin adds wall {measured.wall - base.wall:+.3f} s, "
        f"cpu {measured.cpu - base.cpu:+.3f} s (target: at most 0.15 s)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--here", action="store_true", help="measure this environment")
    parser.add_argument(
        "--instructions", action="store_true", help="sandbox start: count instructions"
    )
    parser.add_argument(
        "--only", choices=["sandbox", "client", "pytest"], action="append", default=None
    )
    args = parser.parse_args()
    parts = args.only or ["sandbox", "client", "pytest"]
    with environments(args.here) as (core, testing), tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        if "sandbox" in parts and args.instructions:
            sandbox_start_instructions(testing, work)
        elif "sandbox" in parts:
            sandbox_start(testing, work, args.rounds)
        if "client" in parts:
            client_import(core, work, args.rounds)
        if "pytest" in parts:
            pytest_plugin(testing, work, args.rounds)


if __name__ == "__main__":
    main()
