"""A leaked database or log does not leak portal links.

The guide promises that only the SHA-256 of a subscription's ``publicHash`` is stored.
The Idempotency-Key record of ``POST /v1/subscriptions`` used to keep the whole answer,
hash included, and ``workbench sandbox``'s access log printed portal paths with the hash.
This test runs the real command on each backend, creates a subscription and uses its
portal under Idempotency-Keys, replays both (also after a restart: the replay key is a
file outside the database), then reads every row of the database (and an SQLite file's
bytes) and everything the command printed, and finds the hash nowhere. A card update's
session id opens its page to anyone who holds it (the access log printed it): once the
session has ended (completed or expired) that page links nowhere, and the log shows
``/checkout/[sessionId]``.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import httpx2
import sqlalchemy as sa

from tests.ports import free_port
from tests.sandbox.clients import signed_client
from tests.sandbox.envelope import assert_envelope
from tests.sandbox.subscriptions.api import sub_body
from workbench.sandbox import SandboxServer
from workbench.sandbox.sealing import new_key


class Command:
    """``workbench sandbox`` in a process of its own, its output kept in a file."""

    def __init__(self, url: str, folder: Path) -> None:
        self.url, self.folder = url, folder
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.output = folder / "printed.txt"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        env = {**os.environ, "WORKBENCH_API_KEY": "", "WORKBENCH_SECRET_KEY": ""}
        command = [sys.executable, "-m", "workbench", "sandbox", "--db", self.url]
        command += ["--port", str(self.port), "--no-reconciler"]
        command += ["--replay-key-file", str(self.folder / "replay.key")]
        with self.output.open("ab") as out:
            self.proc = subprocess.Popen(command, env=env, stdout=out, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 180
        while True:
            assert self.proc.poll() is None, self.output.read_text()
            assert time.monotonic() < deadline, "the sandbox did not start within 180 s"
            try:
                if httpx2.get(f"{self.base}/healthz", timeout=2, verify=False).status_code == 200:
                    return
            except httpx2.HTTPError:
                time.sleep(0.2)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=30)
        self.proc = None


def _post(client: httpx2.Client, path: str, body: object, key: str) -> httpx2.Response:
    return client.post(path, json=body, headers={"Idempotency-Key": key})


def _everything_stored(url: str) -> str:
    """Every value of every row of every table, as text (bytes decoded as Latin-1)."""
    engine = sa.create_engine(url, poolclass=sa.pool.NullPool)
    parts: list[str] = []
    try:
        with engine.connect() as conn:
            found = sa.MetaData()
            found.reflect(conn)
            for table in found.sorted_tables:
                for row in conn.execute(sa.select(table)):
                    for value in row:
                        text = value.decode("latin-1") if isinstance(value, bytes) else str(value)
                        parts.append(text)
    finally:
        engine.dispose()
    return "\n".join(parts)


def test_no_portal_link_in_the_database_or_the_log(own_db: str, tmp_path: Path) -> None:
    # The real command, not a sandbox in this process: what it prints is under test.
    command = Command(own_db, tmp_path)
    create_key, cancel_key = str(uuid.uuid4()), str(uuid.uuid4())
    command.start()
    try:
        with signed_client(command.base) as client:
            created = _post(client, "/v1/subscriptions", sub_body(), create_key)
            assert created.status_code == 201, created.text
            public_hash = created.json()["publicHash"]
            replayed = _post(client, "/v1/subscriptions", sub_body(), create_key)
            portal = f"/v1/public/subscriptions/{public_hash}"
            assert client.get(portal).status_code == 200
            cancelled = _post(client, f"{portal}/cancel", {}, cancel_key)
            assert cancelled.status_code == 200, cancelled.text
            cancelled_again = _post(client, f"{portal}/cancel", {}, cancel_key)
        # Spec rule 1: the original response verbatim, with its status and X-Request-Id.
        for first, again in ((created, replayed), (cancelled, cancelled_again)):
            assert again.status_code == first.status_code
            assert again.content == first.content
            assert again.headers["X-Request-Id"] == first.headers["X-Request-Id"]
            assert again.headers.get("Idempotent-Replayed") == "true"
        command.stop()
        command.start()  # a restart reads the same key file: the replay still works
        with signed_client(command.base) as client:
            after_restart = _post(client, "/v1/subscriptions", sub_body(), create_key)
        assert after_restart.status_code == 201
        assert after_restart.content == created.content
    finally:
        command.stop()

    printed = command.output.read_text(encoding="utf-8", errors="replace")
    stored = _everything_stored(own_db)
    assert public_hash not in stored
    assert public_hash not in printed
    assert create_key in stored  # the records are there, and were read
    assert "/v1/public/subscriptions/[publicHash]/cancel" in printed  # the access log ran
    if own_db.startswith("sqlite"):
        path = Path(own_db.removeprefix("sqlite:///"))
        for file in (path, Path(f"{path}-wal")):
            if file.exists():
                assert public_hash.encode() not in file.read_bytes(), file


def test_an_answer_sealed_under_another_key_is_refused_never_run_again(
    sandbox_with: Callable[..., SandboxServer],
) -> None:
    key = str(uuid.uuid4())
    first = sandbox_with(replay_key=new_key())
    with signed_client(first.base_url) as client:
        created = _post(client, "/v1/subscriptions", sub_body(), key)
        assert created.status_code == 201, created.text
        listed = client.get("/v1/subscriptions", params={"limit": 100}).json()["items"]
    first.stop()
    other = sandbox_with(replay_key=new_key())  # on the same database
    with signed_client(other.base_url) as client:
        again = _post(client, "/v1/subscriptions", sub_body(), key)
        body = assert_envelope(again, 409, "SVC-GW-2001")
        assert "another replay key" in body["message"]
        assert client.get("/v1/subscriptions", params={"limit": 100}).json()["items"] == listed


#: The hosted page's card form (a Mastercard test number, so the change shows).
NEW_CARD = {"cardNumber": "5200828282828210", "expiry": "12/30", "cvc": "123", "holder": "Ayse"}


def _update_card(base: str, public_hash: str) -> httpx2.Response:
    """The buyer's card update from the portal: the session, its page, the form's submit."""
    with httpx2.Client(base_url=base, timeout=30, verify=False) as buyer:
        portal = f"/v1/public/subscriptions/{public_hash}"
        opened = buyer.post(f"{portal}/update-card-session", json={})
        assert opened.status_code == 201, opened.text
        checkout = opened.json()["checkoutUrl"]
        assert buyer.get(checkout).status_code == 200
        return buyer.post(f"{checkout}/pay", data=NEW_CARD, follow_redirects=False)


def test_a_portal_card_update_leaves_no_portal_link_in_the_database_or_the_log(
    own_db: str, tmp_path: Path
) -> None:
    db = own_db
    command = Command(db, tmp_path)
    command.start()
    try:
        with signed_client(command.base) as client:
            created = _post(client, "/v1/subscriptions", sub_body(), str(uuid.uuid4()))
            assert created.status_code == 201, created.text
            public_hash = created.json()["publicHash"]
            done = _update_card(command.base, public_hash)
            # the buyer is sent back to their portal, which shows the new card
            assert done.status_code == 303, done.text
            back = httpx2.URL(done.headers["Location"])
            assert back.path == f"/v1/public/subscriptions/{public_hash}"
            assert back.params["outcome"] == "success"
            view = client.get(back.path)
            assert view.json()["cardLast4"] == "8210"
            # The session id opens the ended page to anyone: it links nowhere, and a
            # second submit sends nobody to the portal.
            session_page = f"{command.base}/checkout/{back.params['sessionId']}"
            again = client.get(session_page)
            assert again.status_code == 410, again.text
            assert public_hash not in again.text
            assert "/v1/public/subscriptions/" not in again.text
            resubmit = client.post(f"{session_page}/pay", data=NEW_CARD, follow_redirects=False)
            assert resubmit.status_code == 410, resubmit.text
            assert "location" not in resubmit.headers
            assert public_hash not in resubmit.text
    finally:
        command.stop()

    printed = command.output.read_text(encoding="utf-8", errors="replace")
    stored = _everything_stored(db)
    assert back.params["sessionId"] in stored  # the session is there, and was read
    assert public_hash not in stored
    assert public_hash not in printed
    assert back.params["sessionId"] not in printed  # the access log redacts it
    assert "/checkout/[sessionId]/pay" in printed
    assert "card_update_only" in stored
    if db.startswith("sqlite"):
        path = Path(db.removeprefix("sqlite:///"))
        for file in (path, Path(f"{path}-wal")):
            if file.exists():
                assert public_hash.encode() not in file.read_bytes(), file


def test_a_portal_return_sealed_under_another_key_gives_no_link_back(
    sandbox_with: Callable[..., SandboxServer],
) -> None:
    server = sandbox_with(replay_key=new_key())
    with signed_client(server.base_url) as client:
        created = _post(client, "/v1/subscriptions", sub_body(), str(uuid.uuid4()))
        public_hash = created.json()["publicHash"]
        with httpx2.Client(base_url=server.base_url, timeout=30, verify=False) as buyer:
            opened = buyer.post(f"/v1/public/subscriptions/{public_hash}/update-card-session")
        checkout = opened.json()["checkoutUrl"].removeprefix(server.base_url)
    server.stop()
    server = sandbox_with(replay_key=new_key())  # on the same database
    with signed_client(server.base_url) as client:
        with httpx2.Client(base_url=server.base_url, timeout=30, verify=False) as buyer:
            done = buyer.post(f"{checkout}/pay", data=NEW_CARD, follow_redirects=False)
            # the card is changed; the page says the session is done, with no link back
            assert done.status_code == 410, done.text
            assert "/v1/public/subscriptions/" not in done.text
            assert "sealed." not in done.text
        subscription = client.get(f"/v1/subscriptions/{created.json()['id']}").json()
        assert subscription["cardLast4"] == "8210"


def test_an_expired_card_update_page_links_nowhere(
    sandbox_with: Callable[..., SandboxServer],
) -> None:
    server = sandbox_with()
    with signed_client(server.base_url) as client:
        created = _post(client, "/v1/subscriptions", sub_body(), str(uuid.uuid4()))
        public_hash = created.json()["publicHash"]
        with httpx2.Client(base_url=server.base_url, timeout=30, verify=False) as buyer:
            opened = buyer.post(f"/v1/public/subscriptions/{public_hash}/update-card-session")
            checkout = opened.json()["checkoutUrl"].removeprefix(server.base_url)
            assert buyer.get(checkout).status_code == 200
            advanced = client.post("/sandbox/clock/advance", json={"seconds": 2 * 86_400})
            assert advanced.status_code == 200, advanced.text
            for ended in (buyer.get(checkout), buyer.post(f"{checkout}/pay", data=NEW_CARD)):
                assert ended.status_code == 410, ended.text
                assert public_hash not in ended.text
                assert "/v1/public/subscriptions/" not in ended.text
