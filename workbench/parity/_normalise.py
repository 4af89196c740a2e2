"""Normalisation: the values that must differ between two targets, made comparable.

Ids, request ids, authorization codes and the like are replaced by placeholders that
keep identity: within one flow on one target the same value always becomes the same
placeholder (``<pay:1>`` wherever that payment id appears, in a path, a body or an
event), numbered in order of first sight. Timestamps become ``<timestamp>`` when they
are in the service's format (UTC with ``Z``; anything else is kept, so it shows), and
the scheme and host of every absolute URL become ``<origin>``. Everything else is kept
as it is: statuses, codes, amounts, field names and types.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from workbench.spec.redaction import REDACTED

__all__ = ["Normaliser", "Placeholder", "Text", "render"]

_TIMESTAMP = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,6})?Z")
_URL = re.compile(r"(https?://[^/?#\s]+)(.*)", re.DOTALL)
_UUID = r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
_PREFIXED = r"[a-z]{2,6}_[0-9A-Za-z]{12,}"
# Ids inside a longer text: a path, a URL's rest, "renewal sub_… 1".
_EMBEDDED = re.compile(rf"(?<![0-9A-Za-z_-])(?:{_UUID}|{_PREFIXED})(?![0-9A-Za-z_-])")
_IS_UUID = re.compile(_UUID)
_IS_PREFIXED = re.compile(r"([a-z]{2,6})_[0-9A-Za-z_]+")
#: Fields whose whole value is an opaque token that differs on every run.
_OPAQUE_FIELDS = frozenset({"authCode"})
#: Fields and headers that carry a request id.
_REQUEST_ID_FIELDS = frozenset({"requestId", "X-Request-Id"})


@dataclass(frozen=True, slots=True)
class Placeholder:
    """A value that must differ between targets; ``number`` 0 keeps no identity."""

    kind: str
    number: int = 0

    def __str__(self) -> str:
        return f"<{self.kind}:{self.number}>" if self.number else f"<{self.kind}>"


@dataclass(frozen=True, slots=True)
class Text:
    """A string after normalisation: literal pieces and placeholders, in order."""

    parts: tuple[str | Placeholder, ...]

    @property
    def shape(self) -> str:
        """The text with each placeholder shown by its kind only (``/v1/payments/<pay>``)."""
        return "".join(p if isinstance(p, str) else f"<{p.kind}>" for p in self.parts)

    @property
    def placeholders(self) -> tuple[Placeholder, ...]:
        """The placeholders with identity, in order."""
        return tuple(p for p in self.parts if isinstance(p, Placeholder) and p.number)

    def __str__(self) -> str:
        return "".join(str(p) for p in self.parts)


def _kind(value: str, field: str | None) -> str:
    if field in _REQUEST_ID_FIELDS:
        return "request"
    prefixed = _IS_PREFIXED.fullmatch(value)
    if prefixed:
        return prefixed.group(1)
    if _IS_UUID.fullmatch(value):
        return "uuid"
    return field or "id"


def _is_id_field(field: str | None) -> bool:
    if field is None:
        return False
    return field == "id" or field.endswith("Id") or field in _OPAQUE_FIELDS


class Normaliser:
    """Normalises the exchanges of one flow on one target (placeholders numbered per kind)."""

    def __init__(self) -> None:
        self._seen: dict[str, Placeholder] = {}
        self._counts: dict[str, int] = {}

    def identity(self, value: str, field: str | None = None) -> Placeholder:
        """The placeholder of ``value``: the same one every time the value is seen again."""
        found = self._seen.get(value)
        if found is None:
            kind = _kind(value, field)
            self._counts[kind] = self._counts.get(kind, 0) + 1
            found = self._seen[value] = Placeholder(kind, self._counts[kind])
        return found

    def _embedded(self, value: str) -> list[str | Placeholder]:
        parts: list[str | Placeholder] = []
        last = 0
        for match in _EMBEDDED.finditer(value):
            if match.start() > last:
                parts.append(value[last : match.start()])
            parts.append(self.identity(match.group(0)))
            last = match.end()
        if last < len(value):
            parts.append(value[last:])
        return parts

    def text(self, value: str, field: str | None = None) -> Text:
        """Normalise one string found under ``field`` (a body field or a header name)."""
        if value == REDACTED or not value:
            return Text((value,))
        if _TIMESTAMP.fullmatch(value):
            return Text((Placeholder("timestamp"),))
        if _is_id_field(field) or field in _REQUEST_ID_FIELDS:
            return Text((self.identity(value, field),))
        url = _URL.fullmatch(value)
        if url:
            return Text((Placeholder("origin"), *self._embedded(url.group(2))))
        return Text(tuple(self._embedded(value)))

    def json(self, value: Any, field: str | None = None) -> Any:
        """A decoded JSON value with every string made a `Text`."""
        if isinstance(value, dict):
            return {k: self.json(v, k) for k, v in value.items()}
        if isinstance(value, list):
            return [self.json(v, field) for v in value]
        if isinstance(value, str):
            return self.text(value, field)
        return value


def render(value: Any, limit: int = 80) -> str:
    """A normalised value as one short line (JSON-like, placeholders shown, cut at ``limit``)."""
    text = _render(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _render(value: Any) -> str:
    if isinstance(value, Text):
        shown = str(value)
        return f'"{shown}"' if all(isinstance(p, str) for p in value.parts) else shown
    if isinstance(value, dict):
        # an event or any typed object reads best with its type first
        keys = sorted(value, key=lambda k: k != "type")
        return "{" + ", ".join(f'"{k}": {_render(value[k])}' for k in keys) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_render(v) for v in value) + "]"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
