"""Fixtures of the guide's tests: one strict build per run, served on loopback, and read
once in Chromium.

The build (`tests.docs.site`) is made once for the whole run, every xdist worker
included, and starts in the background as soon as a process has collected a test that
reads it. The browser checks (test_browser, test_images, test_notebook_pages,
test_code_blocks) share one load of each page and width (`visits`); the root conftest
keeps them on one worker.
"""

from __future__ import annotations

import functools
import http.server
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.chromium import QuietFileHandler, chromium, serving
from tests.docs import site as guide
from tests.docs.visits import Visit, plan, visit_all


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


@pytest.fixture(scope="session")
def visits(site: Path, site_url: str) -> dict[tuple[str, int], Visit]:
    """Each page the browser checks read, by path and width: loaded once, side by side,
    and read for all of them. The browser is closed before the tests run."""
    with chromium("the browser checks of the guide") as browser:
        return {(v.path, v.width): v for v in visit_all(browser, site, site_url, plan(site))}
