"""README.md and the guide's Home open with the same first run: two commands and the example.

The commands are copied as a reader copies them (`make sandbox` in one terminal, the
example with the project's Python in another); the example the pages show is
``examples/first_charge.py`` to the byte, and that file is run by the pages' command, as
written, from the checkout, against a sandbox this test starts (``WORKBENCH_BASE_URL``
points the client at it, where the reader's default address is taken). What it prints
must be what the pages show it printing.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.paths import ROOT
from workbench import Client
from workbench.config import DEFAULT_API_KEY, DEFAULT_BASE_URL, DEFAULT_SECRET_KEY
from workbench.testing import running_sandbox

PAGES = (ROOT / "README.md", ROOT / "docs" / "index.md")
EXAMPLE = ROOT / "examples" / "first_charge.py"
MAX_LINES = 12
FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```", re.MULTILINE | re.DOTALL)
PRINTED = re.compile(r"^captured (pay_[0-9a-f]{24}) 15000$")


def _blocks(page: Path) -> list[tuple[str, str]]:
    return [(m[1], m[2]) for m in FENCE.finditer(page.read_text(encoding="utf-8"))]


def _first_run(page: Path) -> tuple[str, str, str]:
    """The page's first three blocks: the sandbox's command, the example's, the example."""
    blocks = _blocks(page)
    assert len(blocks) >= 3, f"{page.name} has fewer than three code blocks"
    (lang1, start), (lang2, run), (lang3, example) = blocks[:3]
    assert (lang1, lang2, lang3) == ("sh", "sh", "python"), page.name
    return start.strip(), run.strip(), example


@pytest.fixture(scope="module")
def sandbox_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with running_sandbox(db_dir=tmp_path_factory.mktemp("front-example")) as server:
        yield server.base_url


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_the_page_opens_with_two_commands_and_the_example_file(page: Path) -> None:
    start, run, example = _first_run(page)
    assert start == "make sandbox"
    assert run == ".venv/bin/python examples/first_charge.py"
    assert example == EXAMPLE.read_text(encoding="utf-8"), "the page shows the file as it is"
    assert len(example.rstrip("\n").splitlines()) <= MAX_LINES
    text = page.read_text(encoding="utf-8")
    assert "##" not in text[: text.index("```")], "a section comes before the first run"


def test_make_sandbox_starts_the_sandbox_at_the_clients_default_address() -> None:
    planned = subprocess.run(
        ["make", "-n", "sandbox"], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert planned.returncode == 0, planned.stderr
    last = planned.stdout.strip().splitlines()[-1]
    assert last.endswith("workbench sandbox"), planned.stdout  # no --port: 8765
    assert DEFAULT_BASE_URL == "http://127.0.0.1:8765"


def test_the_example_runs_as_the_pages_say_and_prints_what_they_show(sandbox_url: str) -> None:
    _start, run, _example = _first_run(PAGES[0])
    command = shlex.split(run)
    assert command[0] == ".venv/bin/python"
    command[0] = sys.executable  # the checkout's .venv/bin/python, wherever the suite runs
    env = {k: v for k, v in os.environ.items() if not k.startswith("WORKBENCH_")}
    env.update(
        WORKBENCH_BASE_URL=sandbox_url,
        WORKBENCH_API_KEY=DEFAULT_API_KEY,  # over any .env of the checkout
        WORKBENCH_SECRET_KEY=DEFAULT_SECRET_KEY,
        WORKBENCH_ENVIRONMENT="local",
    )
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    printed = done.stdout.strip()
    match = PRINTED.match(printed)
    assert match, printed
    with Client(DEFAULT_API_KEY, DEFAULT_SECRET_KEY, sandbox_url) as client:
        payment = client.payments.retrieve(match[1])
    assert (payment.status, payment.amount) == ("captured", 15_000)
    for page in PAGES:
        shown = re.findall(r"captured pay_[0-9a-f]{24} 15000", page.read_text(encoding="utf-8"))
        assert shown, f"{page.name} does not show what the example prints"


def _python_blocks(page: Path) -> list[str]:
    return [m[2] for m in FENCE.finditer(page.read_text(encoding="utf-8")) if m[1] == "python"]


def _run(code: str, sandbox_url: str, cwd: Path) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("WORKBENCH_")}
    env["WORKBENCH_BASE_URL"] = sandbox_url
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_getting_started_first_request_uses_the_client_and_runs(
    sandbox_url: str, tmp_path: Path
) -> None:
    page = ROOT / "docs" / "getting-started.md"
    text = page.read_text(encoding="utf-8")
    section = text[text.index("## The first request") :]
    first = next(m[2] for m in FENCE.finditer(section) if m[1] == "python")
    assert "Client()" in first
    assert "sign_request" not in first
    assert "httpx" not in first
    once, twice = _run(first, sandbox_url, tmp_path), _run(first, sandbox_url, tmp_path)
    assert re.fullmatch(r"captured pay_[0-9a-f]{24}\ncaptured\n", once), once
    assert twice == once, "the same transactionId answers with the same payment"


def test_the_signing_page_signs_and_sends_a_request_by_hand(
    sandbox_url: str, tmp_path: Path
) -> None:
    [by_hand] = [
        code
        for code in _python_blocks(ROOT / "docs" / "concepts" / "signing.md")
        if "sign_request(" in code
    ]
    printed = _run(by_hand, sandbox_url, tmp_path)
    assert printed.startswith("201 {"), printed
    assert "'status': 'captured'" in printed
