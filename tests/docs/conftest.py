"""Fixtures of the guide's tests: one strict build per run, served on loopback.

The build (`tests.docs.site`) is made once for the whole run, every xdist worker
included, and starts in the background as soon as a process has collected a test that
reads it.
"""

from __future__ import annotations

import functools
import http.server
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.chromium import QuietFileHandler, serving
from tests.docs import site as guide


def pytest_collection_finish(session: pytest.Session) -> None:
    """Start the guide's build now if a test to run reads it."""
    if session.config.option.collectonly:
        return
    if any("build_result" in getattr(item, "fixturenames", ()) for item in session.items):
        factory: pytest.TempPathFactory = session.config._tmp_path_factory  # type: ignore[attr-defined]
        guide.start(guide.folder(factory))


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Let a build this process started finish: another worker may be waiting for it."""
    guide.finish()


@pytest.fixture(scope="session")
def build_result(tmp_path_factory: pytest.TempPathFactory) -> subprocess.CompletedProcess[str]:
    """`mkdocs build --strict`, exactly as `make docs` runs it, into a temporary folder."""
    return guide.result(guide.folder(tmp_path_factory))


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
