"""Parity between targets: the same flows, compared step by step after normalisation."""

from __future__ import annotations

import json
import secrets
import uuid
from html.parser import HTMLParser
from pathlib import Path

import httpx2
import pytest

from tests.parity.proxy import DEVIATIONS
from tests.parity.runs import Seen, run_flows
from tests.parity.secrets import assert_no_secrets, luhn
from workbench.config import DEFAULT_API_KEY, DEFAULT_SECRET_KEY, Settings
from workbench.flows import FLOWS
from workbench.parity import (
    FORMAT_VERSION,
    FlowRecorder,
    ParityReport,
    Recording,
    RecordingError,
    Target,
    compare,
    load_recording,
    render_html,
    render_markdown,
    save_recording,
    summary_table,
)
from workbench.sandbox import SandboxServer


def _named(report: ParityReport) -> list[tuple[str, str, str, str]]:
    return sorted((d.flow, d.request, d.kind, d.field) for d in report.differences)


def _assert_the_four_deviations(report: ParityReport) -> None:
    assert _named(report) == sorted(DEVIATIONS), summary_table(report)
    found = {d.flow: d for d in report.differences}
    assert (found["quickstart"].a, found["quickstart"].b) == ("12189", "12190")
    assert (found["subscriptions"].a, found["subscriptions"].b) == ("checkAt", "pollAt")
    assert (found["portal"].a, found["portal"].b) == ("201", "200")
    assert '"type": "session.completed"' in found["checkout"].a
    assert found["checkout"].b == "—"


def test_sqlite_and_postgres_sandboxes_agree_on_every_flow(
    sqlite_run: Recording, postgres_run: Recording
) -> None:
    report = compare(sqlite_run, postgres_run)
    assert report.differences == [], summary_table(report)
    assert [f.name for f in report.flows] == list(FLOWS)
    for flow in report.flows:
        assert flow.steps, flow.name
        assert {s.outcome for s in flow.steps} == {"same"}, flow.name
        assert flow.steps_a == flow.steps_b
        # every flow ends with the events of its objects, read on both sides
        assert flow.steps[-1].observed
    checkout = next(f for f in postgres_run.flows if f.name == "checkout")
    events = checkout.exchanges[-1].response
    assert isinstance(events, dict)
    assert [e["type"] for e in events["items"]] == ["payment.captured", "session.completed"]


def test_the_deviating_proxy_shows_exactly_its_four_changes(
    sqlite_run: Recording, deviating_run: Recording
) -> None:
    report = compare(sqlite_run, deviating_run)
    print(summary_table(report))
    _assert_the_four_deviations(report)
    assert not report.ok
    assert report.skipped == 0


def test_a_recording_matches_a_second_run_and_shows_the_same_four_against_the_proxy(
    sqlite_run: Recording,
    sqlite_sandbox: SandboxServer,
    deviating_run: Recording,
    files: Path,
) -> None:
    path = files / "sqlite.json"
    save_recording(sqlite_run, path)
    recorded = load_recording(path)
    assert recorded == sqlite_run
    second = run_flows(sqlite_sandbox.base_url, "SQLite sandbox, second run")
    again = compare(recorded, second)
    assert again.differences == [], summary_table(again)
    assert again.skipped == 0
    _assert_the_four_deviations(compare(recorded, deviating_run))


class _LuhnRequestIds(httpx2.BaseTransport):
    """Sends each request with an X-Request-Id whose last group is a Luhn-valid digit run.

    The sandbox answers under the id it is given; about one UUID in 2,800 has such a last
    group, which the recorder once cut out of an error envelope as a card number.
    """

    def __init__(self) -> None:
        self._inner = httpx2.HTTPTransport()

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        digits = f"{secrets.randbelow(10**11):011d}"
        check = next(d for d in "0123456789" if luhn(digits + d))
        request.headers["X-Request-Id"] = f"{uuid.uuid4()}"[:24] + digits + check
        return self._inner.handle_request(request)

    def close(self) -> None:
        self._inner.close()


def test_request_ids_that_look_like_card_numbers_in_part_change_nothing(
    sqlite_run: Recording, sqlite_sandbox: SandboxServer
) -> None:
    settings = Settings(base_url=sqlite_sandbox.base_url, api_key=DEFAULT_API_KEY,
                        secret_key=DEFAULT_SECRET_KEY)  # fmt: skip
    recorder = FlowRecorder(Target("luhn ids", settings), transport=_LuhnRequestIds)
    names = ["quickstart", "refunds"]
    run = recorder.recording(recorder.run(FLOWS[name]) for name in names)
    envelopes = [
        e for f in run.flows for e in f.exchanges if isinstance(e.response, dict)
        and "requestId" in e.response
    ]  # fmt: skip
    assert len(envelopes) == 3
    assert all(e.response["requestId"] == e.request_id for e in envelopes)  # type: ignore[index]
    report = compare(sqlite_run, run, names)
    assert report.differences == [], summary_table(report)


def test_steps_needing_control_routes_are_skipped_with_the_reason(
    sqlite_run: Recording, without_control_run: Recording
) -> None:
    assert not without_control_run.control_routes
    report = compare(sqlite_run, without_control_run)
    assert report.differences == [], summary_table(report)
    flows = {f.name: f for f in report.flows}
    # the flow stops at its first control call on B; A's steps from there on are skipped
    fail_next = flows["idempotency_errors"].steps
    assert [s.outcome for s in fail_next] == ["same"] * 5 + ["skipped"] * 4
    assert fail_next[5].request == "POST /sandbox/fail-next"
    assert "needs the sandbox control route POST /sandbox/fail-next, which B lacks" in (
        fail_next[5].reason
    )
    assert all(s.reason for s in fail_next[5:])
    # a flow that reads fixtures first is skipped whole, and says why
    assert flows["subscriptions"].result == "skipped"
    assert "GET /sandbox/fixtures" in flows["subscriptions"].notes[0]
    # a flow with no control call is compared whole; only parity's events read is skipped
    preauth = flows["preauth"].steps
    assert [s.outcome for s in preauth] == ["same"] * 4 + ["skipped"]
    assert "which B lacks" in preauth[-1].reason
    table = summary_table(report)
    assert "Skipped, with the reason:" in table
    assert "subscriptions: 16 steps of A skipped" in table


def test_a_recording_of_another_version_is_refused(sqlite_run: Recording, files: Path) -> None:
    path = files / "future.json"
    data = json.loads(sqlite_run.model_dump_json())
    data["version"] = FORMAT_VERSION + 1
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(RecordingError, match="version 1"):
        load_recording(path)
    with pytest.raises(RecordingError, match="cannot read"):
        load_recording(files / "missing.json")


def test_recordings_and_reports_hold_no_secret_key_signature_or_card_number(
    sqlite_run: Recording, deviating_run: Recording, secrets_seen: Seen, files: Path
) -> None:
    kinds = {len(v) for v in secrets_seen.values}
    # what was watched: the secret key, X-Signatures (64 hex), ACS pares, bearers, card numbers
    assert 64 in kinds
    assert any(v.isdigit() and luhn(v) for v in secrets_seen.values)
    assert any(v.startswith("whsec_") for v in secrets_seen.values)
    report = compare(sqlite_run, deviating_run)
    written = {
        "sqlite.json": sqlite_run.model_dump_json(indent=2),
        "deviating.json": deviating_run.model_dump_json(indent=2),
        "report.md": render_markdown(report),
        "report.html": render_html(report),
    }
    for name, text in written.items():
        (files / name).write_text(text, encoding="utf-8")
        assert_no_secrets(files / name, secrets_seen)
    assert "[redacted]" in written["sqlite.json"]


class _External(HTMLParser):
    """Collects every way a page could load something from elsewhere."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("script", "link", "img", "iframe", "object", "embed"):
            self.found.append(tag)
        for name, value in attrs:
            if name in ("src", "srcset") or (name == "href" and not (value or "").startswith("#")):
                self.found.append(f"{tag} {name}={value}")


def test_the_html_report_is_self_contained(sqlite_run: Recording, deviating_run: Recording) -> None:
    page = render_html(compare(sqlite_run, deviating_run))
    parser = _External()
    parser.feed(page)
    assert parser.found == []
    assert "url(" not in page
    assert "@import" not in page
    assert "4 differences in 4 flows" in page
    assert "pollAt" in page
