"""``workbench fixtures FILE`` over real HTTP: each shipped scenario leaves the state it names.

One sandbox for the module (its reconciler off: a scenario's clock steps run what falls
due); the demo merchant's data is reset before each test, so its event list and objects
are the scenario's own.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from workbench._client import Client
from workbench.cli import main
from workbench.config import DEFAULT_API_KEY, DEFAULT_SECRET_KEY
from workbench.scenarios import EXAMPLES, ScenarioError, load_scenario


def _invoke(sandbox_url: str, *args: str) -> tuple[int, str, str]:
    env = {
        "WORKBENCH_BASE_URL": sandbox_url,
        "WORKBENCH_API_KEY": DEFAULT_API_KEY,
        "WORKBENCH_SECRET_KEY": DEFAULT_SECRET_KEY,
        "WORKBENCH_ENVIRONMENT": None,
    }
    result = CliRunner().invoke(main, ["fixtures", *args], env=env, terminal_width=200)
    return result.exit_code, result.stdout, result.stderr


def _types(client: Client) -> list[str]:
    return [e.type for e in client.sandbox.events().items]


def test_the_examples_are_the_four_the_guide_names() -> None:
    assert set(EXAMPLES) == {
        "refund-in-flight",
        "session-expired",
        "subscription-past-due",
        "threeds-timed-out",
    }


def test_a_subscription_past_due_after_two_failed_retries(client: Client, sandbox_url: str) -> None:
    code, out, err = _invoke(sandbox_url, "subscription-past-due")
    assert code == 0, out + err
    lines = out.splitlines()
    assert lines[0].startswith("Scenario 'A subscription past due after two failed retries'")
    assert [line.split(":")[0] for line in lines[1:5]] == [
        "1. subscription (subscribe)",
        "2. first_renewal (advance_clock)",
        "3. first_retry (advance_clock)",
        "4. second_retry (advance_clock)",
    ]
    [sub] = list(client.subscriptions.list())
    sub = client.subscriptions.retrieve(sub.id)
    assert sub.status == "past_due"
    assert _types(client).count("subscription.renewal_failed") == 3
    assert _types(client).count("subscription.past_due") == 1
    assert "subscription.expired" not in _types(client)
    charges = client.subscriptions.charges(sub.id)
    assert [c.status for c in charges.items] == ["declined"] * 3


def test_a_refund_in_flight(client: Client, sandbox_url: str) -> None:
    code, out, err = _invoke(sandbox_url, "refund-in-flight")
    assert code == 0, out + err
    assert "in flight (202)" in out
    assert _types(client) == ["payment.captured", "refund.pending"]
    [pending] = client.sandbox.events(type="refund.pending").items
    payment = client.payments.retrieve(pending.data["paymentId"])
    assert payment.amount == 40_000
    assert pending.data["amount"] == 15_000


def test_a_3ds_challenge_left_to_time_out(client: Client, sandbox_url: str) -> None:
    code, out, err = _invoke(sandbox_url, "threeds-timed-out")
    assert code == 0, out + err
    assert _types(client) == ["payment.3ds_pending", "payment.failed"]
    [failed] = client.sandbox.events(type="payment.failed").items
    assert failed.data["reason"] == "3-D Secure challenge timed out"
    assert client.payments.retrieve(failed.data["paymentId"]).status == "failed"


def test_a_session_expired_unpaid(client: Client, sandbox_url: str) -> None:
    code, out, err = _invoke(sandbox_url, "session-expired")
    assert code == 0, out + err
    assert _types(client) == ["session.expired"]
    [expired] = client.sandbox.events().items
    assert expired.data["transactionId"].startswith("scenario-")


def test_later_steps_use_earlier_results_and_the_named_results_are_listed(
    client: Client, sandbox_url: str, tmp_path: Path
) -> None:
    scenario = tmp_path / "capture.json"
    scenario.write_text(
        json.dumps(
            {
                "steps": [
                    {"name": "hold", "preauthorize": {"amount": 12000, "installments": 3}},
                    {"name": "taken", "capture": {"paymentId": "${hold.id}"}},
                    {"refund": {"paymentId": "${taken.id}", "amount": 2000}},
                ]
            },
            indent=2,
        ),
        encoding="utf-8",
    )
    code, out, err = _invoke(sandbox_url, str(scenario))
    assert code == 0, out + err
    assert out.splitlines()[-1] == "Named results: hold, taken"
    assert _types(client) == ["payment.authorized", "payment.captured", "payment.refunded"]


def test_a_failing_step_stops_with_its_envelope(
    client: Client, sandbox_url: str, tmp_path: Path
) -> None:
    scenario = tmp_path / "too-much.yaml"
    scenario.write_text(
        "steps:\n"
        "  - name: charge\n"
        "    charge: {amount: 10000}\n"
        "  - refund: {paymentId: '${charge.id}', amount: 20000}\n"
        "  - advance_clock: {days: 1}\n",
        encoding="utf-8",
    )
    code, out, err = _invoke(sandbox_url, str(scenario))
    assert code == 1, out + err
    assert out.splitlines()[-1].startswith("1. charge (charge): pay_")
    first, envelope = err.splitlines()
    assert first.startswith("2. refund: refused, HTTP 4")
    assert set(json.loads(envelope)) == {"code", "message", "requestId"}
    assert json.loads(envelope)["code"].startswith("SVC-")
    assert _types(client) == ["payment.captured"]  # the clock step never ran


@pytest.mark.parametrize(
    ("text", "where", "what"),
    [
        (
            "steps:\n  - charge: {amount: 100}\n  - explode: {}\n",
            ":3: step 2",
            "unknown action 'explode'",
        ),
        (
            "steps:\n  - charge:\n      amount: 100\n      colour: red\n",
            ":4: step 1",
            "charge has no field 'colour'",
        ),
        ("steps:\n  - charge: {amount: 12.5}\n", ":2: step 1", "amount is a whole number"),
        ("steps:\n  - refund: {paymentId: '${nope.id}'}\n", ":2: step 1", "names no earlier step"),
        (
            "steps:\n  - name: c\n    charge: {amount: 100}\n"
            "  - refund: {paymentId: '${c.bogus}'}\n",
            ":4: step 2",
            "has no result field 'bogus'",
        ),
        ("steps:\n  - refund: {amount: 100}\n", ":2: step 1", "refund needs paymentId"),
        ("steps:\n  - charge: {amount: 100\n", ":3", "not YAML or JSON"),
        ('{"steps": [{"charge": {"amount": 100}},]}', ":1", "not JSON"),
        ("name: x\n", ":1", "has no steps list"),
        ("steps: []\nextra: 1\n", ":2", "unknown key 'extra'"),
    ],
)
def test_bad_input_is_one_line_naming_file_line_and_step_exit_2_nothing_made(
    text: str, where: str, what: str, client: Client, sandbox_url: str, tmp_path: Path
) -> None:
    scenario = tmp_path / ("bad.json" if text.startswith("{") else "bad.yaml")
    scenario.write_text(text, encoding="utf-8")
    code, out, err = _invoke(sandbox_url, str(scenario))
    assert code == 2, out + err
    assert out == ""
    assert err.count("\n") == 1, err
    assert err.startswith(f"workbench fixtures: {scenario}{where}"), err
    assert what in err
    assert client.sandbox.events().items == []
    with pytest.raises(ScenarioError):
        load_scenario(scenario)


def test_a_missing_file_is_named_exit_2(sandbox_url: str, tmp_path: Path) -> None:
    code, _out, err = _invoke(sandbox_url, str(tmp_path / "nowhere.yaml"))
    assert code == 2
    assert (
        err
        == f"workbench fixtures: {tmp_path / 'nowhere.yaml'}: cannot be read: FileNotFoundError\n"
    )


def test_list_names_the_examples(sandbox_url: str) -> None:
    code, out, _err = _invoke(sandbox_url, "--list")
    assert code == 0
    assert [line.split()[0] for line in out.splitlines()] == list(EXAMPLES)
