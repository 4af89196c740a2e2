"""``workbench listen`` end to end: a running sandbox, the command in its own process."""

from __future__ import annotations

import contextlib
import json
import os
import queue
import re
import signal
import subprocess
import sys
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest
from click.testing import CliRunner

from tests.ports import free_port
from workbench._client import Client
from workbench.cli import main
from workbench.config import DEFAULT_API_KEY, DEFAULT_SECRET_KEY
from workbench.models import CardCharge
from workbench.signing import format_timestamp, sign_request
from workbench.webhooks import ReceivedRequest, WebhookReceiver, construct_event

#: How long a test waits for the command to print a line: a guard, not a measured time.
LINE_WAIT = 60.0
#: A guard against a hang, never asserted as a duration: stopping sets the store's webhook
#: back through the sandbox, which a loaded machine may answer slowly.
STOP_WAIT = 60.0


def _charge(client: Client, amount: int) -> CardCharge:
    """A captured card charge, whose ``payment.captured`` the store's webhook then gets."""
    return client.payments.charge_card(
        transaction_id=f"order-{uuid.uuid4().hex[:12]}",
        amount=amount,
        card_token="tok_test_success",
        three_d_secure=False,
    )


class _Lines:
    """The command's stdout, read on a thread so a test can wait for a line."""

    def __init__(self, process: subprocess.Popen[str]) -> None:
        self.seen: list[str] = []
        self._queue: queue.Queue[str | None] = queue.Queue()
        assert process.stdout is not None
        stdout = process.stdout

        def pump() -> None:
            for line in stdout:
                self._queue.put(line.rstrip("\n"))
            self._queue.put(None)

        threading.Thread(target=pump, daemon=True).start()

    def wait_for(self, pattern: str) -> str:
        regex = re.compile(pattern)
        for old in self.seen:
            if regex.search(old):
                return old
        while True:
            try:
                line = self._queue.get(timeout=LINE_WAIT)
            except queue.Empty:
                raise AssertionError(f"no line matching {pattern!r}; got {self.seen}") from None
            if line is None:
                raise AssertionError(f"the command ended; no {pattern!r} in {self.seen}")
            self.seen.append(line)
            if regex.search(line):
                return line


@contextlib.contextmanager
def _ctrl_c_reaches_children() -> Iterator[None]:
    """Let children started inside get SIGINT as from a terminal's Ctrl-C.

    A shell starts a background job with SIGINT ignored (the two runs of
    ``scripts/check-isolation`` are such jobs) and an ignored signal stays ignored
    through ``exec``: Python would never raise KeyboardInterrupt in the command. A
    handled signal is reset to its default on ``exec``, so this handles it meanwhile.
    """
    if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def _start(tmp_path: Path, sandbox_url: str, *args: str) -> tuple[subprocess.Popen[str], _Lines]:
    env = {
        **os.environ,
        "WORKBENCH_BASE_URL": sandbox_url,
        "WORKBENCH_API_KEY": DEFAULT_API_KEY,
        "WORKBENCH_SECRET_KEY": DEFAULT_SECRET_KEY,
        "PYTHONUNBUFFERED": "1",
    }
    env.pop("WORKBENCH_WEBHOOK_SECRET", None)
    # -X faulthandler: a command that does not stop is aborted with every thread's stack.
    command = [sys.executable, "-X", "faulthandler", "-m", "workbench", "listen", "--port", "0"]
    with _ctrl_c_reaches_children():
        process = subprocess.Popen(
            [*command, *args],
            cwd=tmp_path,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
    return process, _Lines(process)


def _stop(process: subprocess.Popen[str], how: int = signal.SIGTERM) -> tuple[int, str]:
    process.send_signal(how)
    try:
        code = process.wait(timeout=STOP_WAIT)
    except subprocess.TimeoutExpired:
        process.send_signal(signal.SIGABRT)
        process.wait()
        assert process.stderr is not None
        stacks = process.stderr.read()
        raise AssertionError(f"workbench listen did not stop on signal {how}:\n{stacks}") from None
    # stdout belongs to the _Lines thread; communicate() would race it for the last lines.
    assert process.stderr is not None
    return code, process.stderr.read()


def test_listen_verifies_forwards_logs_and_rejects_a_forgery(
    tmp_path: Path, sandbox_url: str, client: Client
) -> None:
    secret = client.sandbox.fixtures().webhook_secret
    assert secret
    forwarded: list[ReceivedRequest] = []

    def merchant(request: ReceivedRequest) -> int:
        forwarded.append(request)
        return 200

    log = tmp_path / "deliveries.jsonl"
    with WebhookReceiver(merchant, path="/shop/hooks") as shop:
        process, lines = _start(
            tmp_path, sandbox_url, "--set-webhook", "--forward-to", shop.url, "--log", str(log)
        )
        try:
            listening = lines.wait_for(r"^Listening on ")
            url = listening.split()[2]
            port = int(re.search(r"\(port (\d+)\)", listening).group(1))  # type: ignore[union-attr]
            assert port > 0
            assert url == f"http://127.0.0.1:{port}/shop/hooks"
            lines.wait_for(r"^Ready\.")
            # A local sandbox's secret is shown whole, once, for a receiver of the reader's.
            shown = [line for line in lines.seen if secret in line]
            assert shown == [f"Verifying with the webhook secret {secret}"]
            store = client.sandbox.fixtures().stores[0]
            assert store.webhook_url == url
            # The request that set it, on its page in the local sandbox's dashboard.
            page = lines.wait_for(r"^  set by the request ")
            assert re.fullmatch(
                rf"  set by the request {re.escape(sandbox_url)}/dashboard/requests/"
                r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}",
                page.rstrip(),
            ), page

            charge = _charge(client, 12_500)
            client.sandbox.tick()
            line = lines.wait_for(rf"payment\.\w+ +{charge.payment_id} ")
            assert "verified, forwarded 200 -> 200" in line
            # ... and the event's page in the sandbox's dashboard, on the line after.
            lines.wait_for(rf"^ +{re.escape(sandbox_url)}/dashboard/events/evt_\w+$")

            # A POST nobody signed with the secret is answered 401 and reported.
            body = (
                b'{"id":"evt_forged","type":"payment.captured","createdAt":"2026-01-01T00:00:00Z"}'
            )
            forged = sign_request(
                api_key="webhook",
                secret_key="whsec_guess",
                method="POST",
                url=url,
                body=body,
                timestamp=format_timestamp(),
            )
            answer = httpx2.post(
                url,
                content=body,
                headers={"X-Timestamp": forged.timestamp, "X-Signature": forged.signature},
            )
            assert answer.status_code == 401
            rejected = lines.wait_for(r"rejected")
            assert "X-Signature does not match" in rejected
            assert rejected.rstrip().endswith("-> 401")
        finally:
            code, stderr = _stop(process)
        assert code == 0, stderr
        lines.wait_for(r"^Stopped: 1 rejected, 1 verified")
        lines.wait_for(r"webhook set back to none")

    assert client.sandbox.fixtures().stores[0].webhook_url is None
    # The merchant's URL got the same bytes and signature headers: it verifies them itself.
    assert len(forwarded) == 1
    event = construct_event(forwarded[0].body, forwarded[0].headers, secret, path=forwarded[0].path)
    assert event.object_id == charge.payment_id
    recorded = client.sandbox.events().items
    assert [e.id for e in recorded] == [event.id]
    assert recorded[0].delivery["state"] == "delivered"

    records = [json.loads(x) for x in log.read_text(encoding="utf-8").splitlines()]
    assert [r["outcome"] for r in records] == ["verified", "rejected"]
    assert records[0]["eventId"] == event.id
    assert records[0]["object"] == charge.payment_id
    assert records[0]["forwardStatus"] == 200
    assert records[1]["status"] == 401
    text = log.read_text(encoding="utf-8")
    for secret_thing in (
        secret,
        DEFAULT_SECRET_KEY,
        forwarded[0].headers["x-signature"],
        forwarded[0].headers["x-signature"][:16],
        forged.signature[:16],
    ):
        assert secret_thing not in text


def test_a_failing_forward_is_answered_so_the_sandbox_retries(
    tmp_path: Path, sandbox_url: str, client: Client
) -> None:
    answers = iter([500, 200])

    def merchant(request: ReceivedRequest) -> int:
        return next(answers)

    with WebhookReceiver(merchant) as shop:
        process, lines = _start(tmp_path, sandbox_url, "--set-webhook", "--forward-to", shop.url)
        try:
            lines.wait_for(r"^Ready\.")
            charge = _charge(client, 5_000)
            client.sandbox.tick()
            failed = lines.wait_for(rf"{charge.payment_id} +failed")
            assert "forward answered 500" in failed
            assert failed.endswith("-> 500 (attempt 1)")
            client.sandbox.advance_clock(10)
            retried = lines.wait_for(rf"{charge.payment_id} +verified, forwarded 200")
            assert retried.endswith("-> 200 (attempt 2)")
            # The redelivery is followed by the attempt before it, as the sandbox saw it.
            earlier = lines.wait_for(r"earlier attempt 1 of evt_")
        finally:
            code, stderr = _stop(process, signal.SIGINT)  # Ctrl-C
        assert code == 0, stderr
        lines.wait_for(r"^Stopped: 1 failed, 1 verified")
    (event,) = client.sandbox.events().items
    assert event.delivery["state"] == "delivered"
    assert event.delivery["attempts"] == 2
    assert earlier.endswith(f"earlier attempt 1 of {event.id}: answered 500")
    assert not [line for line in lines.seen if "earlier attempt 2" in line]


def test_a_receiver_that_was_down_sees_the_attempts_it_missed(
    tmp_path: Path, sandbox_url: str, client: Client
) -> None:
    port = free_port()
    client.sandbox.set_webhook(f"http://127.0.0.1:{port}/webhooks")
    try:
        charge = _charge(client, 5_000)
        client.sandbox.tick()
        client.sandbox.advance_clock(10)
        (event,) = client.sandbox.events().items
        missed = client.sandbox.deliveries(event.id).attempts
        assert [(a.attempt, a.status_code) for a in missed] == [(1, None), (2, None)]
        process, lines = _start(tmp_path, sandbox_url, "--port", str(port))
        try:
            lines.wait_for(r"^Ready\.")
            client.sandbox.advance_clock(60)
            line = lines.wait_for(rf"{charge.payment_id} +verified")
            assert line.endswith("-> 200 (attempt 3)")
            shown = [lines.wait_for(rf"earlier attempt {n} of {event.id}: ") for n in (1, 2)]
        finally:
            code, stderr = _stop(process)
        assert code == 0, stderr
    finally:
        client.sandbox.set_webhook(None)
    for attempt, text in zip(missed, shown, strict=True):
        assert attempt.error
        assert text.endswith(f": {attempt.error}")


def test_set_webhook_is_refused_against_a_remote_service(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # no .env of the checkout
    result = CliRunner().invoke(
        main,
        ["listen", "--set-webhook", "--secret", "whsec_x"],
        env={"WORKBENCH_BASE_URL": "https://api.sandbox-payments.example"},
    )
    assert result.exit_code == 2
    assert "only against a local sandbox" in result.output


def test_a_remote_service_needs_the_secret_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(
        main,
        ["listen"],
        env={
            "WORKBENCH_BASE_URL": "https://api.sandbox-payments.example",
            "WORKBENCH_WEBHOOK_SECRET": "",
        },
    )
    assert result.exit_code == 2
    assert "--secret" in result.output


def test_print_secret_prints_the_local_sandbox_secret_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sandbox_url: str, client: Client
) -> None:
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(
        main,
        ["listen", "--print-secret"],
        env={"WORKBENCH_BASE_URL": sandbox_url, "WORKBENCH_WEBHOOK_SECRET": ""},
    )
    assert result.exit_code == 0, result.output
    assert result.output == f"{client.sandbox.fixtures().webhook_secret}\n"


def test_print_secret_is_refused_against_a_remote_service(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(
        main,
        ["listen", "--print-secret", "--secret", "whsec_x"],
        env={"WORKBENCH_BASE_URL": "https://api.sandbox-payments.example"},
    )
    assert result.exit_code == 2
    assert "whsec_x" not in result.output
    assert "in its dashboard" in result.output


def test_no_sandbox_to_read_the_secret_from_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    port = free_port()
    result = CliRunner().invoke(
        main,
        ["listen", "--print-secret"],
        env={"WORKBENCH_BASE_URL": f"http://127.0.0.1:{port}", "WORKBENCH_WEBHOOK_SECRET": ""},
    )
    assert result.exit_code == 1
    assert result.output.splitlines() == [
        f"Error: cannot read the sandbox's webhook secret: GET /sandbox/fixtures failed after "
        f"1 retries: connection refused by 127.0.0.1:{port}; is the local sandbox running? "
        f"Start it with `workbench sandbox --port {port}`"
    ]
