"""The flow forms without a browser: set values, click, and look at the state the click left."""

from __future__ import annotations

import ipywidgets as w
import pytest

from workbench._client import Client
from workbench.notebook.widgets import flow_form


def test_defaults_come_from_the_catalogue(client: Client) -> None:
    form = flow_form("card_3ds", client)
    assert form.controls["amount"].value == "125,00"
    assert form.controls["card_token"].value == "tok_test_3ds_challenge"
    assert form.values() == {
        "amount": 12_500,
        "card_token": "tok_test_3ds_challenge",
        "installments": 1,
        "three_d_secure": True,
        "capture": True,
        "challenge_code": "123456",
    }
    assert isinstance(form.widget, w.VBox)


def test_click_runs_the_flow_with_the_values_set(client: Client) -> None:
    form = flow_form("card_3ds", client)
    form.controls["amount"].value = "1.234,56"
    form.controls["card_token"].value = "tok_test_success"
    form.controls["capture"].value = False
    form.button.click()
    assert form.error is None
    assert form.last is not None
    assert form.last.params["amount"] == 123_456
    assert form.last.outcome["status"] == "authorized"
    assert form.status.value == "Ran card_3ds: 2 requests"
    assert form.runs == 1


def test_bad_amount_is_shown_and_nothing_runs(client: Client) -> None:
    form = flow_form("refunds", client)
    form.controls["amount"].value = "twelve"
    form.button.click()
    assert form.last is None
    assert form.error is not None
    assert "not a lira amount" in form.error
    assert form.status.value.startswith("<b>Not run</b>")


def test_flow_errors_are_kept_on_the_form(client: Client) -> None:
    form = flow_form("refunds", client, amount=10_000, partial=20_000)
    form.button.click()
    assert form.last is None
    assert form.error == "partial must be more than 0 and less than amount"


def test_second_click_replaces_the_last_run(client: Client) -> None:
    form = flow_form("preauth", client)
    form.button.click()
    first = form.last
    form.controls["then"].value = "void"
    form.button.click()
    assert form.runs == 2
    assert form.last is not first
    assert form.last is not None
    assert form.last.outcome["status"] == "voided"


def test_headless_run_uses_the_defaults(client: Client) -> None:
    run = flow_form("preauth", client).run()
    assert run.params == {"amount": 45_000, "card_token": "tok_test_success", "then": "capture"}
    assert run.outcome["status"] == "captured"


def test_unknown_flow_names_the_known_ones() -> None:
    with pytest.raises(KeyError, match="preauth"):
        flow_form("nope")


def test_the_form_displays_as_a_widget_with_a_readable_text(client: Client) -> None:
    form = flow_form("preauth", client)
    assert form.describe().startswith("Form: Preauthorization (Amount (TL)=450,00, ")
    bundle = form.widget._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
