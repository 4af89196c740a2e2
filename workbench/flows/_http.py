"""Calls as they went over the wire, for reading: what a notebook folds under a cell.

Each call is shown as its request (method, path, the headers that sign it, the
Idempotency-Key, the JSON body) and its response (status, ``X-Request-Id``, the
JSON body), folded in an HTML ``<details>`` so that the page stays short. Nothing
secret is shown: the signature is cut to its first 8 hex digits, bodies are
redacted as `workbench.flows.FlowRun` keeps them (bearer values, secrets and card
numbers cut to a prefix), the buyer portal's ``publicHash`` is cut in paths, and
the secret key is never sent, so never shown. Against the local sandbox each call
links to its page in the sandbox's dashboard (`workbench.config.Settings.request_page`),
which shows what the sandbox saw: its headers, both bodies, and for a signature
refusal, the diagnosis.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from html import escape
from http import HTTPStatus
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import httpx2

__all__ = ["SHOWN_HEADERS", "Exchanges", "decode_body", "shown_headers"]

#: The request headers shown, in this order: the ones that sign the request and make it
#: idempotent (the rest, ``Host``, ``Accept``..., are httpx2's and teach nothing).
SHOWN_HEADERS = ("X-Api-Key", "X-Timestamp", "X-Signature", "Idempotency-Key", "Content-Type")
#: Calls in one cell beyond which they are folded once more, under a count.
_FOLD_AFTER = 3


def decode_body(content: bytes) -> Any:
    """A body as kept for reading: its JSON value, text if it is not JSON, ``None`` if empty."""
    if not content:
        return None
    try:
        return json.loads(content)
    except ValueError:
        return content.decode("utf-8", "replace")


class Call(Protocol):
    """What is shown of a call (`workbench.flows.Call` has it)."""

    @property
    def method(self) -> str: ...
    @property
    def path(self) -> str: ...
    @property
    def headers(self) -> tuple[tuple[str, str], ...]: ...
    @property
    def request(self) -> Any: ...
    @property
    def status(self) -> int: ...
    @property
    def request_id(self) -> str | None: ...
    @property
    def replayed(self) -> bool: ...
    @property
    def response(self) -> Any: ...
    @property
    def error_code(self) -> str | None: ...
    @property
    def dashboard_url(self) -> str | None: ...


def shown_headers(request: httpx2.Request) -> tuple[tuple[str, str], ...]:
    """The `SHOWN_HEADERS` a request carried, the signature cut to 8 hex digits."""
    shown = []
    for name in SHOWN_HEADERS:
        value = request.headers.get(name)
        if value is None:
            continue
        if name == "X-Signature":
            value = value[:8] + "…"
        shown.append((name, value))
    return tuple(shown)


def _json(value: object) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False)


def _status(code: int) -> str:
    try:
        return f"{code} {HTTPStatus(code).phrase}"
    except ValueError:
        return str(code)


def request_text(call: Call) -> str:
    """The request: ``POST /v1/payments/card``, its shown headers, a blank line, the body."""
    lines = [f"{call.method} {call.path}", *(f"{k}: {v}" for k, v in call.headers)]
    if call.request is not None:
        lines += ["", _json(call.request)]
    return "\n".join(lines)


def response_text(call: Call) -> str:
    """The response: ``HTTP 201 Created``, ``X-Request-Id``, a blank line, the body."""
    lines = [f"HTTP {_status(call.status)}"]
    if call.request_id:
        lines.append(f"X-Request-Id: {call.request_id}")
    if call.replayed:
        lines.append("Idempotent-Replayed: true")
    if call.response is not None:
        lines += ["", _json(call.response)]
    return "\n".join(lines)


def headline(call: Call) -> str:
    """``POST /v1/payments/card → 201 Created`` (with the error code, if any)."""
    tail = f" {call.error_code}" if call.error_code else ""
    return f"{call.method} {call.path} → {_status(call.status)}{tail}"


def _link(call: Call) -> str:
    if not call.dashboard_url:
        return ""
    href = escape(call.dashboard_url)
    return (
        f'<p class="wb-http-link"><a href="{href}" target="_blank" rel="noopener">'
        "This request in the sandbox's dashboard</a></p>"
    )


def _details(call: Call) -> str:
    # Quotes are left as they are: the JSON must read (and be compared) as JSON.
    return (
        f'<details class="wb-http"><summary>{escape(headline(call), quote=False)}</summary>'
        f'<pre class="wb-http-message">{escape(request_text(call), quote=False)}</pre>'
        f'<pre class="wb-http-message">{escape(response_text(call), quote=False)}</pre>'
        f"{_link(call)}</details>"
    )


class Exchanges:
    """Some calls, shown folded: one ``<details>`` each (HTML), one line each (text).

    Attributes:
        calls: the calls, in order.
    """

    def __init__(self, calls: Sequence[Call]) -> None:
        self.calls = list(calls)

    def _repr_html_(self) -> str:
        inner = "".join(_details(call) for call in self.calls)
        if len(self.calls) <= _FOLD_AFTER:
            return inner
        return (
            f'<details class="wb-http"><summary>{len(self.calls)} requests and their '
            f"responses</summary>{inner}</details>"
        )

    def text(self) -> str:
        """Every call whole, request then response, for a terminal."""
        return "\n\n".join(
            f"{request_text(c)}\n\n{response_text(c)}"
            + (f"\n\nDashboard: {c.dashboard_url}" if c.dashboard_url else "")
            for c in self.calls
        )

    def __len__(self) -> int:
        return len(self.calls)

    def __repr__(self) -> str:
        return "\n".join(headline(call) for call in self.calls)
