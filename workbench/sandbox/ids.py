"""Identifier generation in the spec's shapes."""

from __future__ import annotations

import os
import time

from workbench.spec import IdPrefix

__all__ = ["new_id", "new_uuid"]


def new_id(prefix: IdPrefix) -> str:
    """A fresh identifier such as ``pay_019ab3...`` (24 hex characters after the prefix).

    The first 12 are the creation time in milliseconds, the other 12 random: ids made
    one after another sort together, so the unique index on them takes each insert on
    the page the previous one touched rather than on a random page of its own (fewer
    pages written per commit).
    """
    return f"{prefix.value}{time.time_ns() // 1_000_000:012x}{os.urandom(6).hex()}"


# The bits `uuid.UUID(version=4)` sets: the variant (10xx) and the version (0100).
_CLEAR = ~((0xC000 << 48) | (0xF000 << 64))
_SET = (0x8000 << 48) | (4 << 76)


def new_uuid() -> str:
    """A fresh UUID v4 string (checkout sessions, request ids, correlation ids).

    What ``str(uuid.uuid4())`` gives, from the same 16 random bytes and bits, without
    building a `uuid.UUID`: its checks cost every request more than the rest of this.
    """
    n = int.from_bytes(os.urandom(16)) & _CLEAR | _SET
    h = f"{n:032x}"
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"
