"""Follow one signed card charge through the sandbox's code, stop by stop.

A sandbox app is built in this process on an SQLite file of its own and started
(its lifespan), one charge warms it (lazy routes, kept key records, prepared
statements), then a second signed ``POST /v1/payments/card`` is sent straight to
the ASGI app while a profiler records every function entered in ``workbench/``
(on the event loop and in the worker threads the database runs in). A *stop* is one
such entry (a coroutine resumed is not a new stop); a *return* is a stop in a file
the walk had already left. Printed: the stops in order (file, line, function), the
number of stops and of distinct files, the returns, and the stops and files before
the route's own code (the first stop in ``workbench/sandbox/payments/routes.py``).

Usage: ``python -m tools.walk_charge [--quiet]`` (``--quiet``: the figures only).
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import sys
import tempfile
import threading
import types
import uuid
from pathlib import Path
from typing import Any

import workbench
from workbench.config import DEFAULT_API_KEY, DEFAULT_SECRET_KEY
from workbench.sandbox import SandboxConfig, create_app
from workbench.signing import sign_request

__all__ = ["Stop", "main", "walk"]

#: Where the walked code lives; stops elsewhere (FastAPI, Starlette, SQLAlchemy) are not counted.
ROOT = Path(workbench.__file__).resolve().parent
#: The route's own module: the first stop in it ends the part "before the route".
ROUTE_FILE = "sandbox/payments/routes.py"
PATH = "/v1/payments/card"

#: One stop: (file under ``workbench/``, first line of the function, its name).
Stop = tuple[str, int, str]


def _charge_request() -> tuple[bytes, list[tuple[bytes, bytes]]]:
    body = json.dumps(
        {
            "transactionId": f"walk-{uuid.uuid4()}",
            "amount": 15000,
            "currency": "TRY",
            "cardToken": "tok_test_success",
            "threeDSecure": False,
        },
        separators=(",", ":"),
    ).encode()
    signed = sign_request(
        api_key=DEFAULT_API_KEY,
        secret_key=DEFAULT_SECRET_KEY,
        method="POST",
        url=f"http://127.0.0.1{PATH}",
        body=body,
    )
    headers = [
        (b"host", b"127.0.0.1"),
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"idempotency-key", str(uuid.uuid4()).encode()),
        *((name.lower().encode(), value.encode()) for name, value in signed.as_dict().items()),
    ]
    return body, headers


async def _send(app: Any, request: tuple[bytes, list[tuple[bytes, bytes]]]) -> int:
    """One signed charge (`_charge_request`) straight to the ASGI app; its status."""
    body, headers = request
    scope = {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": PATH,
        "raw_path": PATH.encode(),
        "root_path": "",
        "query_string": b"",
        "headers": headers,
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 80),
        "state": {},
    }
    sent = False
    status = 0

    async def receive() -> dict[str, Any]:
        nonlocal sent
        if sent:
            await asyncio.Event().wait()  # the client stays connected
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = int(message["status"])

    await app(scope, receive, send)
    return status


class _Recorder:
    """A profiler that records, while on, each function entered under `ROOT`."""

    def __init__(self) -> None:
        self.on = False
        self.stops: list[tuple[int, Stop]] = []
        self._order = itertools.count()
        self._seen: list[types.FrameType] = []  # kept alive: ids of live frames never repeat
        self._seen_ids: set[int] = set()

    def __call__(self, frame: types.FrameType, event: str, _arg: object) -> None:
        if event != "call" or not self.on:
            return
        filename = frame.f_code.co_filename
        if not filename.startswith(str(ROOT)):
            return
        if id(frame) in self._seen_ids:  # a coroutine or generator resumed
            return
        self._seen_ids.add(id(frame))
        self._seen.append(frame)
        where = str(Path(filename).relative_to(ROOT))
        code = frame.f_code
        self.stops.append((next(self._order), (where, code.co_firstlineno, code.co_qualname)))


def walk() -> tuple[int, list[Stop]]:
    """The traced charge's status and its stops, in order."""
    recorder = _Recorder()

    async def run() -> int:
        with tempfile.TemporaryDirectory() as folder:
            url = f"sqlite:///{Path(folder) / 'walk.db'}"
            config = SandboxConfig(db_url=url, run_reconciler_in_background=False)
            app = create_app(config)
            async with app.router.lifespan_context(app):
                warm = await _send(app, _charge_request())
                if warm != 201:
                    raise SystemExit(f"the warm-up charge answered {warm}")
                request = _charge_request()  # signed before the walk: the client's work
                recorder.on = True
                try:
                    status = await _send(app, request)
                finally:
                    recorder.on = False
            return status

    threading.setprofile(recorder)  # the database's worker threads, made from now on
    sys.setprofile(recorder)
    try:
        status = asyncio.run(run())
    finally:
        sys.setprofile(None)
        threading.setprofile(None)
    return status, [stop for _, stop in sorted(recorder.stops)]


def figures(stops: list[Stop]) -> dict[str, int]:
    """Stops, files, returns to a file already left, and stops and files before the route."""
    left: set[str] = set()
    returns = 0
    previous = None
    for where, _line, _name in stops:
        if where != previous:
            if where in left:
                returns += 1
            if previous is not None:
                left.add(previous)
            previous = where
    before = next((i for i, stop in enumerate(stops) if stop[0] == ROUTE_FILE), len(stops))
    return {
        "stops": len(stops),
        "files": len({stop[0] for stop in stops}),
        "returns": returns,
        "stops_before_route": before,
        "files_before_route": len({stop[0] for stop in stops[:before]}),
    }


def main(argv: list[str] | None = None) -> None:
    """Walk one charge and print its stops and figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quiet", action="store_true", help="print the figures only")
    args = parser.parse_args(argv)
    status, stops = walk()
    if status != 201:
        raise SystemExit(f"the traced charge answered {status}")
    if not args.quiet:
        for number, (where, line, name) in enumerate(stops, 1):
            print(f"{number:4d}  {where}:{line}  {name}")
    counted = figures(stops)
    print(
        f"a signed card charge: {counted['stops']} stops in {counted['files']} files, "
        f"{counted['returns']} returns to a file already left; "
        f"{counted['stops_before_route']} stops in {counted['files_before_route']} files "
        "before the route's code"
    )


if __name__ == "__main__":
    main()
