"""Fixtures of the guide's tests: one strict build per session, served on loopback."""

from __future__ import annotations

import functools
import http.server
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.chromium import QuietFileHandler, serving
from tests.paths import ROOT


@pytest.fixture(scope="session")
def build_result(tmp_path_factory: pytest.TempPathFactory) -> subprocess.CompletedProcess[str]:
    """`mkdocs build --strict`, exactly as `make docs` runs it, into a temporary folder."""
    site = tmp_path_factory.mktemp("site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


@pytest.fixture(scope="session")
def site(build_result: subprocess.CompletedProcess[str]) -> Path:
    """The built site's folder; fails with mkdocs' own output when the build failed."""
    assert build_result.returncode == 0, build_result.stdout + build_result.stderr
    return Path(build_result.args[-1])


@pytest.fixture(scope="session")
def site_url(site: Path) -> Iterator[str]:
    """The built site served by http.server on 127.0.0.1, stopped after the session."""
    handler = functools.partial(QuietFileHandler, directory=str(site))
    with serving(http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)) as port:
        yield f"http://127.0.0.1:{port}/"
