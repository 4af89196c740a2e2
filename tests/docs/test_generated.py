"""The generated pages cannot drift from the code they are generated from."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.paths import ROOT
from tools import docgen
from workbench import _exceptions
from workbench._exceptions import error_class_for
from workbench.cli import main as cli_main
from workbench.sandbox.cards import TEST_CARDS
from workbench.spec import ERRORS, PAYMENT, SUBSCRIPTION

REGENERATE = "regenerate with `make docs-gen` and commit the result"


def test_committed_pages_match_the_code() -> None:
    stale = docgen.check(ROOT)
    assert stale == [], f"stale generated files {[str(p) for p in stale]}: {REGENERATE}"


def test_error_table_has_one_row_per_code_with_its_anchor_and_class() -> None:
    table = docgen.errors_table()
    rows = [line for line in table.splitlines() if line.startswith("| <span id=")]
    assert [row.split("`")[1] for row in rows] == list(ERRORS)
    for row, (code, spec) in zip(rows, ERRORS.items(), strict=True):
        assert row.startswith(f'| <span id="{code.lower()}"></span>`{code}`')
        cls = error_class_for(code, spec.http_status)
        assert f"[`{cls.__name__}`][workbench._exceptions.{cls.__name__}]" in row


def test_exception_table_lists_every_class_and_the_code_that_raises_it() -> None:
    table = docgen.exceptions_table()
    classes = [name for name in _exceptions.__all__ if isinstance(getattr(_exceptions, name), type)]
    for name in classes:
        assert f"[`{name}`][workbench._exceptions.{name}]" in table, name
    for code, spec in ERRORS.items():
        cls = error_class_for(code, spec.http_status)
        row = next(line for line in table.splitlines() if f"[`{cls.__name__}`]" in line)
        assert f"#{code.lower()})" in row, (code, cls.__name__)
        assert f"`{code}`: {'yes' if spec.retryable else 'no'}" in row


def test_every_decline_code_of_the_sandbox_is_on_the_errors_page() -> None:
    page = docgen.errors_table()
    declines = page.split("## Declines in the sandbox", 1)[1]
    for code in ("SVC-PAY-3001", "SVC-PAY-3002", "SVC-PAY-3003"):
        assert f"[`{code}`](#{code.lower()})" in declines


def test_test_card_table_has_a_row_per_card_and_every_brand() -> None:
    page = docgen.test_cards_table()
    for card in TEST_CARDS:
        assert f"`{card.token}`" in page
    for brand in ("Visa", "Mastercard", "Amex", "Troy"):
        assert f"| {brand} |" in page, brand
    assert "| debit |" in page
    assert "| credit |" in page


def test_production_page_splits_spec_codes_from_sandbox_decisions() -> None:
    page = docgen.production_page()
    spec_part, sandbox_part = page.split("## Decided by the sandbox")
    for code, spec in ERRORS.items():
        link = f"[`{code}`](errors.md#{code.lower()})"
        assert link in (spec_part if spec.origin == "spec" else sandbox_part), code
        assert link not in (sandbox_part if spec.origin == "spec" else spec_part), code


def test_state_page_carries_the_machines_diagram_and_every_row() -> None:
    page = docgen.state_machine(PAYMENT)
    for diagram in docgen.diagrams(PAYMENT):
        assert f"```mermaid\n{diagram}\n```" in page
    rows = [line for line in page.splitlines() if line.startswith("    | ") and "`" in line]
    assert len(rows) == len(PAYMENT.transitions)


def test_a_vector_the_code_does_not_reproduce_stops_generation(tmp_path: Path) -> None:
    data = json.loads((ROOT / "tests/data/signing-vectors.json").read_text(encoding="utf-8"))
    data["vectors"][0]["signature"] = "0" * 64
    (tmp_path / "tests/data").mkdir(parents=True)
    (tmp_path / "tests/data/signing-vectors.json").write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ValueError, match="does not reproduce vector"):
        docgen.load_vectors(tmp_path)


def test_the_worked_example_shows_the_vector_and_its_signature() -> None:
    vectors = docgen.load_vectors(ROOT)
    page = docgen.signing_example(vectors)
    charge = vectors["card-charge"]
    assert charge.canonical in page
    assert charge.signature in page


def test_every_usual_mistake_is_named_by_the_debugger() -> None:
    page = docgen.signing_mistakes(docgen.load_vectors(ROOT))
    for name in (
        "empty-body-as-object",
        "empty-body-as-null",
        "query-string-included",
        "lowercase-method",
        "trailing-slash",
        "timestamp-with-offset",
    ):
        assert f"`{name}`" in page


def test_cli_reference_lists_every_command_of_the_group() -> None:
    import click

    from workbench.cli import main

    page = docgen.cli_reference()
    ctx = click.Context(main, info_name="workbench")
    assert isinstance(main, click.Group)
    commands = main.list_commands(ctx)
    assert commands, "the workbench group lists no command"
    for name in commands:
        assert f"## `workbench {name}`" in page
        assert f"Usage: workbench {name} " in page


def test_openapi_summary_has_a_row_per_operation() -> None:
    schema: dict[str, Any] = {
        "openapi": "3.1.0",
        "info": {"title": "Sandbox", "version": "1"},
        "paths": {
            "/v1/payments/{id}": {"get": {"summary": "Get a payment", "responses": {"200": {}}}},
            "/v1/payments/card": {
                "post": {"summary": "Charge", "responses": {"200": {}, "402": {}}}
            },
        },
    }
    page = docgen.openapi_summary(schema)
    assert "2 operations" in page
    assert "| `GET` | `/v1/payments/{id}` | Get a payment | 200 |" in page
    assert "| `POST` | `/v1/payments/card` | Charge | 200, 402 |" in page


def test_notebooks_are_listed_in_the_nav_and_the_flows_page(tmp_path: Path) -> None:
    shutil.copy(ROOT / "mkdocs.yml", tmp_path / "mkdocs.yml")
    (tmp_path / "notebooks").mkdir()
    cells = [{"cell_type": "markdown", "metadata": {}, "source": "# Refund in flight\n\nA 202."}]
    notebook = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (tmp_path / "notebooks" / "03-refund.ipynb").write_text(json.dumps(notebook))
    found = docgen.notebooks(tmp_path)
    assert [(n.file, n.title, n.summary) for n in found] == [
        ("03-refund.ipynb", "Refund in flight", "A 202.")
    ]
    nav = docgen.nav_with_notebooks((tmp_path / "mkdocs.yml").read_text(), found)
    assert "      - notebooks/03-refund.ipynb\n" in nav
    page = docgen.flows_page(found)
    assert "[Refund in flight](../notebooks/03-refund.ipynb)" in page
    assert 'href="../notebooks/03-refund/03-refund.ipynb" download' in page


def test_nav_without_the_generated_block_is_refused() -> None:
    with pytest.raises(ValueError, match="BEGIN generated notebooks"):
        docgen.nav_with_notebooks("nav:\n  - Home: index.md\n", [])


def test_check_mode_reports_stale_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert docgen.main(["--check", "--root", str(ROOT)]) == 0
    for relative in ("mkdocs.yml", "tests/data/signing-vectors.json"):
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / relative, tmp_path / relative)
    assert docgen.main(["--check", "--root", str(tmp_path)]) == 1
    assert "stale: docs/_generated/errors.md" in capsys.readouterr().out
    assert docgen.main(["--root", str(tmp_path)]) == 0
    assert docgen.main(["--check", "--root", str(tmp_path)]) == 0


def test_the_guides_openapi_json_is_the_export(tmp_path: Path) -> None:
    rendered = docgen.render(ROOT)[docgen.OPENAPI_JSON]
    out = tmp_path / "openapi.json"
    result = CliRunner().invoke(cli_main, ["openapi", "--output", str(out)])
    assert result.exit_code == 0, result.output
    assert rendered == out.read_text(encoding="utf-8")
    assert "| `POST` | `/v1/payments/card` | Charge a card by vault token |" in (
        docgen.openapi_summary(json.loads(rendered))
    )


def test_subscription_cancellations_get_a_diagram_of_their_own() -> None:
    main, cancelled = docgen.diagrams(SUBSCRIPTION)
    assert "--> cancelled" not in main
    into = [line for line in cancelled.splitlines() if "-->" in line]
    assert into
    assert all(line.split("-->")[1].startswith(" cancelled:") for line in into)
    sources = {t.source for t in SUBSCRIPTION.transitions if t.target == "cancelled"}
    assert {line.split("-->")[0].strip() for line in into} == sources - {"cancelled"}
