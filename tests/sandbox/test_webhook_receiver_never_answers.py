"""A webhook receiver that accepts connections and never answers, on SQLite and PostgreSQL.

It neither stalls the clock nor gets an attempt twice: a clock advance answers while the
receiver still holds the connections it opened, and two sandboxes on one database (what
two workers, or two hosts, are) never send the same (event, attempt) pair, nor more
attempts at once than the concurrency limit, however far one of them moves the clock
while the other's attempts are open; nor do the two worker processes of ``workbench
sandbox --workers 2`` with their reconcilers running. Each check is an order of things
("the answer came while the connections were still open"), never a duration.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator

import httpx2
import pytest

from tests.sandbox.bodies import charge_body
from tests.sandbox.clients import signed_client
from workbench.sandbox import SandboxServer

#: The sandbox's default: attempts in flight at once, per merchant.
CONCURRENCY = 8
EVENTS = 20
#: Events for the two worker processes, whose attempts wait out their 5 s deadline: a
#: few more than the limit, so a limit kept per worker, or none, shows as more at once.
WORKER_EVENTS = CONCURRENCY + 4
#: How long a reconciler pass or an advance waits for webhook answers here (10 s by
#: default): far below the attempts' deadline, so the advance answers while the receiver
#: still holds every connection, as it does with the default, without waiting it out.
WAIT_SECONDS = 1.0
#: Guards, not measured figures: far above what the sandbox needs, far below the
#: attempts' own deadline (60 s), which would end the receiver's hold.
GUARD_SECONDS = 40


class Silent:
    """Accepts connections, reads each request's head, never answers; records the
    (event, attempt) pairs that arrived and the most connections it held at once."""

    def __init__(self) -> None:
        self.pairs: list[tuple[str, str]] = []
        self.open = 0
        self.most_open = 0
        self.held = threading.Event()  # set once it holds a connection
        self._lock = threading.Lock()
        self._conns: list[socket.socket] = []
        self._server = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self._server.getsockname()[1]}/hooks"
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self._server.accept()
            except OSError:
                return  # closed
            with self._lock:
                self._conns.append(conn)
                self.open += 1
                self.most_open = max(self.most_open, self.open)
            threading.Thread(target=self._hold, args=(conn,), daemon=True).start()

    def _hold(self, conn: socket.socket) -> None:
        head = b""
        try:
            while b"\r\n\r\n" not in head:
                chunk = conn.recv(4096)
                if not chunk:
                    break
                head += chunk
            lines = head.decode("latin-1").split("\r\n")[1:]
            headers = dict(line.split(": ", 1) for line in lines if ": " in line)
            pair = (headers.get("X-Event-Id", ""), headers.get("X-Event-Attempt", ""))
            with self._lock:
                self.pairs.append(pair)
            self.held.set()
            while conn.recv(4096):  # until the sandbox hangs up (its attempt's deadline)
                pass
        except OSError:
            pass
        with self._lock:
            self.open -= 1

    def close(self) -> None:
        self._server.close()
        with self._lock:
            conns = list(self._conns)
        for conn in conns:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
            conn.close()


@pytest.fixture
def receiver() -> Iterator[Silent]:
    silent = Silent()
    yield silent
    silent.close()


def _events_to(server: SandboxServer, receiver: Silent) -> None:
    with signed_client(server.base_url) as client:
        assert client.put("/sandbox/webhook", json={"url": receiver.url}).status_code == 200
        for _ in range(EVENTS):  # each its own payment: all may be attempted at once
            paid = client.post("/v1/payments/card", json=charge_body(threeDSecure=False))
            assert paid.status_code == 201, paid.text


Answers = list[httpx2.Response]


def _in_thread(call: Callable[[], httpx2.Response]) -> tuple[threading.Thread, Answers]:
    answers: list[httpx2.Response] = []
    thread = threading.Thread(target=lambda: answers.append(call()), daemon=True)
    thread.start()
    return thread, answers


def _advance(base: str) -> httpx2.Response:
    with signed_client(base) as client:
        client.timeout = httpx2.Timeout(300)  # a guard: the test waits on its own terms
        return client.post(
            "/sandbox/clock/advance",
            json={"seconds": 3600},
            headers={"Idempotency-Key": str(uuid.uuid4())},
        )


def test_an_advance_answers_while_the_receiver_still_holds_its_connections(
    sandbox_with: Callable[..., SandboxServer], receiver: Silent
) -> None:
    server = sandbox_with(webhook_timeout_seconds=60, webhook_wait_seconds=WAIT_SECONDS)
    _events_to(server, receiver)
    thread, answers = _in_thread(lambda: _advance(server.base_url))
    thread.join(GUARD_SECONDS)
    held = receiver.open
    print(f"the advance answered: {bool(answers)}, holding {held} connections")
    assert answers, "the advance had not answered while the receiver held its connections"
    assert answers[0].status_code == 200, answers[0].text
    assert held > 0  # none of them had been answered or had reached its deadline
    assert receiver.most_open <= CONCURRENCY


def test_two_sandboxes_on_one_database_never_send_an_attempt_twice(
    sandbox_with: Callable[..., SandboxServer], receiver: Silent
) -> None:
    settings = {"webhook_timeout_seconds": 60, "webhook_wait_seconds": WAIT_SECONDS}
    first = sandbox_with(workers=2, **settings)
    second = sandbox_with(workers=2, **settings)  # the same database
    _events_to(first, receiver)

    def tick() -> httpx2.Response:
        with signed_client(first.base_url) as client:
            client.timeout = httpx2.Timeout(300)
            return client.post("/sandbox/reconciler/tick")

    ticking, _ = _in_thread(tick)
    assert receiver.held.wait(GUARD_SECONDS), "no attempt reached the receiver"
    # The first sandbox's attempts are open; the second moves the clock an hour on.
    thread, answers = _in_thread(lambda: _advance(second.base_url))
    thread.join(GUARD_SECONDS)
    held = receiver.open
    sent_twice = [pair for pair, n in Counter(receiver.pairs).items() if n > 1]
    print(
        f"{len(receiver.pairs)} attempts arrived, {len(sent_twice)} (event, attempt) pairs "
        f"twice, at most {receiver.most_open} at once; the advance answered: {bool(answers)}"
    )
    assert answers, "the advance had not answered while the receiver held its connections"
    assert answers[0].status_code == 200, answers[0].text
    assert held > 0
    assert sent_twice == []
    assert receiver.most_open <= CONCURRENCY
    receiver.close()  # the open attempts fail now, and the tick ends
    ticking.join(GUARD_SECONDS)


def test_two_workers_never_send_an_attempt_twice_nor_more_than_the_limit_at_once(
    workers: tuple[str, str, int], receiver: Silent
) -> None:
    """``workbench sandbox --workers 2``, both workers' reconcilers running, attempts
    timing out after the default 5 s and retried, clock advances sent meanwhile."""
    base = workers[0]
    with signed_client(base) as client:
        assert client.put("/sandbox/webhook", json={"url": receiver.url}).status_code == 200
        for _ in range(WORKER_EVENTS):
            paid = client.post("/v1/payments/card", json=charge_body(threeDSecure=False))
            assert paid.status_code == 201, paid.text
    assert receiver.held.wait(GUARD_SECONDS), "no attempt reached the receiver"
    moving = [_in_thread(lambda: _advance(base)) for _ in range(2)]  # either worker
    for thread, _ in moving:
        thread.join(120)
    assert all(answers for _, answers in moving), "an advance had not answered"
    guard = time.monotonic() + 180  # a guard: two rounds of retries take about 50 s
    while len(receiver.pairs) < 2 * WORKER_EVENTS:
        assert time.monotonic() < guard, f"{len(receiver.pairs)} attempts within 180 s"
        time.sleep(0.2)
    sent_twice = [pair for pair, n in Counter(receiver.pairs).items() if n > 1]
    print(
        f"{len(receiver.pairs)} attempts arrived, {len(sent_twice)} (event, attempt) pairs "
        f"twice, at most {receiver.most_open} at once"
    )
    assert [answers[0].status_code for _, answers in moving] == [200, 200]
    assert sent_twice == []
    assert receiver.most_open <= CONCURRENCY
