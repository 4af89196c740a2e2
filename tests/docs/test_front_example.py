"""README.md and the guide's Home open with the same short Python example, and it works.

The example is read from each page (its first code block), run exactly as shown in a
Python process of its own against a sandbox this test starts (``WORKBENCH_BASE_URL``
points the client at it, as the pages say), and what it prints must be what the pages
show it printing.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.paths import ROOT
from workbench import Client
from workbench.config import DEFAULT_API_KEY, DEFAULT_SECRET_KEY
from workbench.testing import running_sandbox

PAGES = (ROOT / "README.md", ROOT / "docs" / "index.md")
MAX_LINES = 12
FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```", re.MULTILINE | re.DOTALL)
PRINTED = re.compile(r"^captured (pay_[0-9a-f]{24}) 15000$")


def _first_block(page: Path) -> tuple[str, str]:
    match = FENCE.search(page.read_text(encoding="utf-8"))
    assert match is not None, f"{page.name} has no code block"
    return match[1], match[2]


@pytest.fixture(scope="module")
def sandbox_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with running_sandbox(db_dir=tmp_path_factory.mktemp("front-example")) as server:
        yield server.base_url


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_the_page_opens_with_a_short_python_example(page: Path) -> None:
    language, code = _first_block(page)
    assert language == "python", f"{page.name} opens with a {language or 'plain'} block"
    lines = code.rstrip("\n").splitlines()
    assert len(lines) <= MAX_LINES, f"{page.name}: {len(lines)} lines"
    assert "Client(" in code
    assert "charge_card(" in code
    assert "print(" in code
    text = page.read_text(encoding="utf-8")
    before = text[: text.index("```python")]
    assert "##" not in before, "a section comes before the example"


def test_readme_and_home_show_the_same_example() -> None:
    readme, home = (_first_block(p)[1] for p in PAGES)
    assert readme == home


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_the_example_runs_as_shown_and_prints_what_the_page_says(
    page: Path, sandbox_url: str, tmp_path: Path
) -> None:
    _language, code = _first_block(page)
    env = {k: v for k, v in os.environ.items() if not k.startswith("WORKBENCH_")}
    env["WORKBENCH_BASE_URL"] = sandbox_url
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,  # no .env of the checkout is read
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    printed = done.stdout.strip()
    match = PRINTED.match(printed)
    assert match, printed
    with Client(DEFAULT_API_KEY, DEFAULT_SECRET_KEY, sandbox_url) as client:
        payment = client.payments.retrieve(match[1])
    assert (payment.status, payment.amount) == ("captured", 15_000)
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
