"""The stored notebooks: no secret, local path or machine name in any output; the nbval rules."""

from __future__ import annotations

import json
import re
import socket
from pathlib import Path
from typing import Any

import pytest

from tests.paths import ROOT
from workbench.config import DEFAULT_SECRET_KEY
from workbench.flows import FLOWS

NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
SECRET = re.compile(r"\bsk_[A-Za-z0-9]")
LOCAL_PATHS = ("/work", "/home", "/root", "/tmp")
#: Notebooks with no flow to fill in a form for (the webhooks one runs a receiver).
NO_FORM = {"09-webhooks"}


def _load(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def _output_texts(notebook: dict[str, Any]) -> list[str]:
    texts = []
    for cell in notebook["cells"]:
        for output in cell.get("outputs", []):
            texts.append(json.dumps(output, ensure_ascii=False))
    return texts


def test_there_are_flow_notebooks() -> None:
    names = [p.stem for p in NOTEBOOKS]
    for expected in ("01-quickstart-signing", "02-hosted-checkout", "03-card-3ds",
                     "04-preauthorization",
                     "05-refunds", "06-subscriptions", "07-buyer-portal",
                     "08-idempotency-errors", "09-webhooks"):  # fmt: skip
        assert expected in names


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_outputs_hold_no_secret_path_or_hostname(path: Path) -> None:
    texts = _output_texts(_load(path))
    assert texts, "the notebook has no stored outputs: run `make notebooks`"
    host = socket.gethostname()
    for text in texts:
        assert DEFAULT_SECRET_KEY not in text
        assert not SECRET.search(text), SECRET.search(text)
        for local in LOCAL_PATHS:
            assert local not in text, f"local path {local} in an output"
        if len(host) >= 4 and host != "localhost":
            assert host not in text, "the machine's name in an output"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_follows_the_nbval_rules(path: Path) -> None:
    notebook = _load(path)
    assert "widgets" not in notebook["metadata"], "widget state stored"
    cells = notebook["cells"]
    for cell in cells:
        source = "".join(cell["source"])
        if cell["cell_type"] == "markdown":
            assert "```mermaid" not in source, "a mermaid block loads mermaid from a CDN"
        else:
            assert "interact(" not in source
            assert "execution" not in cell["metadata"], "timings stored"
            assert not any(o.get("output_type") == "error" for o in cell.get("outputs", []))
    forms = [i for i, c in enumerate(cells) if "= flow_form(" in "".join(c["source"])]
    if path.stem not in NO_FORM:
        assert len(forms) == 1, "one form per notebook"
        form = forms[0]
        assert "nbval-ignore-output" in cells[form]["metadata"].get("tags", [])
        assert "form.run()" in "".join(cells[form + 1]["source"])
    else:
        assert forms == []
    asserts = sum("assert " in "".join(c["source"]) for c in cells if c["cell_type"] == "code")
    assert asserts >= 2, "a notebook asserts its outcomes in code"
    assert "merchant's server" in "".join(cells[-1]["source"])


SERVICE_CALL = re.compile(r"\bclient\.(payments|sessions|subscriptions|portal|cards)\.\w+\(")
DECLINE_STATUS = re.compile(r"\b402\b")
FLOW_CALL = re.compile(r"\bflows\.(" + "|".join(FLOWS) + r")\(")


def _code(notebook: dict[str, Any]) -> list[str]:
    return ["".join(c["source"]) for c in notebook["cells"] if c["cell_type"] == "code"]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_makes_the_service_calls_in_its_cells(path: Path) -> None:
    code = _code(_load(path))
    calls = sum(len(SERVICE_CALL.findall(source)) for source in code)
    assert calls >= 1, "the lesson's service calls are written in the cells"
    for source in code:
        assert not FLOW_CALL.search(source), (
            "a flow function in a lesson cell (only the form runs one)"
        )


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_sandbox_control_calls_are_marked_and_nothing_hard_codes_a_decline(path: Path) -> None:
    notebook = _load(path)
    for source in _code(notebook):
        if "client.sandbox." in source:
            assert "sandbox-only" in source, source
    for cell in notebook["cells"]:
        source = "".join(cell["source"])
        assert not DECLINE_STATUS.search(source), "a decline's HTTP status is not the lesson's"
        assert "press run" not in source.lower(), "the published page has no Run button"
        for output in cell.get("outputs", []):
            text = json.dumps(output.get("text", "")) + json.dumps(
                output.get("data", {}).get("text/plain", "")
            )
            assert not DECLINE_STATUS.search(text), text


SHOWN_PAGE = re.compile(r"\bshow_page\(\s*(\w+)\.checkout_url")
#: Calls that read a hosted page without acting on it.
READS_PAGE = {"show_page", "open_page", "qr_payload"}


@pytest.mark.parametrize(
    "path",
    [p for p in NOTEBOOKS if "show_page(" in p.read_text(encoding="utf-8")],
    ids=lambda p: p.stem,
)
def test_the_last_page_a_notebook_shows_is_left_for_the_reader(path: Path) -> None:
    """After Run All, the live page the reader is told to use still takes their action."""
    code = "\n".join(_code(_load(path)))
    shown = SHOWN_PAGE.findall(code)
    assert shown, "no hosted page shown"
    last = shown[-1]
    used = re.findall(rf"\b(\w+)\(\s*{last}\.checkout_url", code)
    assert set(used) <= READS_PAGE, f"a cell acts on {last}'s page: {sorted(set(used))}"
