"""The built wheel, installed the way users install it, into new virtual environments.

The wheel is built once per test run (``uv build``) and each install is made once per
run, on first use, in the folder every xdist worker of the run shares
(`tests.shared.run_folder`): the first worker to need one makes it under a lock, the
others wait for it and read what it recorded. Every ``uv`` step but the lowest versions'
resolution reads uv's cache only (``--offline``) and goes to the index only if the cache
lacks something (the reason is printed). A new environment gets the compiled modules
that this checkout's environment and the run's other ones hold for the same files
(`bytecode.share_bytecode`), so that its first runs do not compile them again.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from packaging.utils import canonicalize_name

from tests.shared import exclusive

from .bytecode import share_bytecode, site_packages
from .project import ROOT

#: This checkout's environment, whose compiled modules the new ones share (`bytecode`).
THIS_SITE = Path(sysconfig.get_paths()["purelib"])
#: Each install: its extras.
INSTALLS: dict[str, tuple[str, ...]] = {
    "core": (),
    "sandbox": ("sandbox",),
    "sandbox-notebooks": ("sandbox", "notebooks"),
    "testing": ("testing",),
}

#: A client's round trip: a charge, a refused signature, and what it imported.
CLIENT_CALL = """
import sys
from workbench import Client, SignatureError

base_url = sys.argv[1]
with Client("pk_test_wb_demo_0001", "sk_test_wb_demo_secret_0001", base_url) as client:
    charge = client.payments.charge_card(
        transaction_id="wheel-1", amount=2_500, card_token="tok_test_success"
    )
    print(charge.status)
with Client("pk_test_wb_demo_0001", "sk_test_not_the_secret", base_url, max_retries=0) as wrong:
    try:
        wrong.payments.retrieve(charge.payment_id)
    except SignatureError as exc:
        print(exc.code)
heavy = ("fastapi", "sqlalchemy", "pandas", "ipywidgets", "uvicorn", "psycopg")
print(sorted(name for name in heavy if name in sys.modules))
"""


def _uv() -> str:
    """uv as ``make`` finds it: on ``PATH``, else the one ``make setup`` put in .tools/."""
    found = shutil.which("uv") or str(ROOT / ".tools" / "bin" / "uv")
    assert Path(found).is_file(), "uv is missing: `make setup` installs it into .tools/"
    return found


def _clean_environment(tmp: Path) -> dict[str, str]:
    """This process's environment minus what points at another environment or config."""
    other = ("VIRTUAL_ENV", "CONDA_PREFIX", "PYTHONPATH", "PYTHONHOME")
    uv_target = ("UV_PYTHON", "UV_SYSTEM_PYTHON", "UV_PROJECT_ENVIRONMENT")  # not the cache
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in other + uv_target
        and not k.startswith(("PYTEST_", "WORKBENCH_", "COV_", "COVERAGE_"))
    }
    env.update(TMPDIR=str(tmp), UV_PYTHON_DOWNLOADS="never", UV_NO_PROGRESS="1")
    return env


@dataclass
class Environment:
    """One virtual environment with the wheel installed."""

    name: str
    path: Path
    packages: dict[str, str]
    env: dict[str, str] = field(repr=False)

    def run(
        self, *args: str | Path, cwd: Path, timeout: float = 300
    ) -> subprocess.CompletedProcess[str]:
        """Run one of the environment's programs (``workbench``, ``python``, ``pytest``)."""
        program, *rest = args
        return subprocess.run(
            [str(self.path / "bin" / program), *map(str, rest)],
            cwd=cwd,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )


class Installs:
    """The wheel, built once, and its installs, each made on first use.

    ``folder`` may be shared by several processes: what one has made there, another
    reads instead of making it again.
    """

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.uv = _uv()
        self.env = _clean_environment(Path(tempfile.mkdtemp(prefix="tmp-", dir=folder)))
        with exclusive(folder, "wheel"):
            self.wheel = self._build()
        self._made: dict[str, Environment] = {}

    def _uv_run(self, *args: str | Path, offline_first: bool = False, cwd: Path) -> None:
        command = [self.uv, *map(str, args)]
        if offline_first:
            done = subprocess.run(
                [*command, "--offline"], cwd=cwd, env=self.env, capture_output=True, text=True
            )
            if done.returncode == 0:
                return
            why = done.stderr.strip()
            print(f"not in uv's cache, from the index: {' '.join(command[1:3])}: {why}")
        done = subprocess.run(command, cwd=cwd, env=self.env, capture_output=True, text=True)
        assert done.returncode == 0, f"{' '.join(command)}\n{done.stdout}{done.stderr}"

    def _build(self) -> Path:
        """The wheel, built into ``dist/`` unless a process sharing the folder did."""
        dist = self.folder / "dist"
        if not dist.is_dir():
            building = self.folder / "dist.partial"
            shutil.rmtree(building, ignore_errors=True)  # a build that did not finish
            self._uv_run(
                "build", "--wheel", "--out-dir", building, ROOT, offline_first=True, cwd=ROOT
            )
            building.rename(dist)
        [wheel] = dist.glob("payments_workbench-*.whl")
        return wheel

    def __call__(self, name: str) -> Environment:
        if name not in self._made:
            self._made[name] = self._shared(name, lambda: self._install(name, INSTALLS[name]))
        return self._made[name]

    def _shared(self, key: str, make: Callable[[], dict[str, str]]) -> Environment:
        """Environment ``key``: made by ``make`` (which answers its packages), or, when a
        process sharing the folder has made it, read from what that process recorded."""
        path = self.folder / key
        record = self.folder / f"{key}.json"
        with exclusive(self.folder, key):
            if record.is_file():
                packages = json.loads(record.read_text("utf-8"))
            else:
                shutil.rmtree(path, ignore_errors=True)  # one that was not finished
                packages = make()
                made = [site_packages(self.folder / r.stem) for r in self.folder.glob("*.json")]
                shared = share_bytecode(site_packages(path), [THIS_SITE, *made])
                print(f"{key}: {shared} compiled modules shared with the other environments")
                partial = record.with_suffix(".partial")
                partial.write_text(json.dumps(packages), "utf-8")
                partial.replace(record)
        env = dict(self.env, PATH=f"{path / 'bin'}{os.pathsep}{self.env.get('PATH', '')}")
        return Environment(key, path, packages, env)

    def _install(self, name: str, extras: tuple[str, ...]) -> dict[str, str]:
        path = self.folder / name
        lock = self.folder / f"pylock.{name.replace('-', '_')}.toml"
        chosen = [arg for extra in extras for arg in ("--extra", extra)]
        self._uv_run(
            "export", "--frozen", "--format", "pylock.toml", "--no-dev", "--no-emit-project",
            *chosen, "--quiet", "--output-file", lock, cwd=ROOT,
        )  # fmt: skip
        self._uv_run("venv", "--quiet", "--python", sys.executable, path, cwd=self.folder)
        python = path / "bin" / "python"
        self._uv_run(
            "pip", "install", "--python", python, "-r", lock, offline_first=True, cwd=self.folder
        )
        locked = self._packages(python)
        spec = f"{self.wheel}[{','.join(extras)}]" if extras else str(self.wheel)
        self._uv_run(
            "pip", "install", "--python", python, spec, offline_first=True, cwd=self.folder
        )
        packages = self._packages(python)
        added = set(packages) - set(locked)
        assert added == {"payments-workbench"}, f"the wheel's requirements added {added}"
        print(f"{name}: {len(packages)} packages, payments-workbench included")
        return packages

    def lowest(self, name: str, extras: tuple[str, ...]) -> Environment:
        """An environment with the lowest versions pyproject.toml allows, then the wheel.

        ``uv pip compile --resolution lowest-direct`` (asking the index: see below): each
        requirement the package names at its floor (what it depends on through them, at
        the newest they allow).
        """
        key = f"lowest-{name}"
        if key not in self._made:
            self._made[key] = self._shared(key, lambda: self._lowest(key, extras))
        return self._made[key]

    def _lowest(self, key: str, extras: tuple[str, ...]) -> dict[str, str]:
        path = self.folder / key
        pinned = self.folder / f"{key}.txt"
        chosen = [arg for extra in extras for arg in ("--extra", extra)]
        # From the index, not offline: offline, uv resolves among the versions its cache
        # holds, and the lowest of those is a floor only when the cache has the floor.
        self._uv_run(
            "pip", "compile", ROOT / "pyproject.toml", *chosen, "--resolution", "lowest-direct",
            "--python", sys.executable, "--no-header", "--no-annotate", "--quiet",
            "--output-file", pinned, cwd=self.folder,
        )  # fmt: skip
        self._uv_run("venv", "--quiet", "--python", sys.executable, path, cwd=self.folder)
        python = path / "bin" / "python"
        self._uv_run(
            "pip", "install", "--python", python, "-r", pinned, offline_first=True, cwd=self.folder
        )
        self._uv_run("pip", "install", "--python", python, "--no-deps", self.wheel, cwd=self.folder)
        return self._packages(python)

    def _packages(self, python: Path) -> dict[str, str]:
        listed = subprocess.run(
            [self.uv, "pip", "list", "--python", str(python), "--format", "json"],
            env=self.env, capture_output=True, text=True, check=True,
        )  # fmt: skip
        rows: list[dict[str, Any]] = json.loads(listed.stdout)
        return {canonicalize_name(row["name"]): row["version"] for row in rows}
