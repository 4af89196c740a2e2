"""Sealed replay bodies: an idempotency record's answer that carries a bearer, encrypted.

The answer of ``POST /v1/subscriptions`` (and of the portal's cancel) holds the
subscription's ``publicHash``, the buyer portal's bearer, which the subscriptions table
keeps only as a SHA-256. The idempotency record must replay that answer verbatim for 24
hours, so it keeps it sealed: AES-256-GCM (`cryptography`) under a key the database does
not hold, bound to its record (API key, endpoint, Idempotency-Key) as associated data,
so a sealed body moved to another record does not open.

Where the key lives (`SandboxConfig.replay_key`): ``workbench sandbox`` reads it from a
file outside the database (`load_key_file`; every ``--workers`` process reads the same
file, and a restart finds it again); a sandbox started from Python without one makes a
key for its own life, so a record it sealed replays until it stops. A record sealed
under another key cannot be replayed (`Sealer.open` answers ``None``).
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

__all__ = ["KEY_BYTES", "Sealer", "is_sealed", "load_key_file", "new_key"]

#: AES-256.
KEY_BYTES = 32
_PREFIX = b"wb-sealed-v1:"
_KEY_ID_BYTES = 8
_NONCE_BYTES = 12


def new_key() -> bytes:
    """A fresh random key."""
    return os.urandom(KEY_BYTES)


def is_sealed(stored: bytes) -> bool:
    """Whether a stored body was sealed (a JSON body never starts with the marker)."""
    return stored.startswith(_PREFIX)


def load_key_file(path: Path) -> bytes:
    """The key kept in ``path``, made (readable by its owner only) if the file is missing.

    Several processes starting at once agree: the file is created exclusively, and one
    that loses the race reads the winner's key.

    Raises:
        ValueError: the file does not hold a key of `KEY_BYTES` bytes.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        pass
    else:
        with os.fdopen(fd, "wb") as file:
            file.write(new_key().hex().encode("ascii"))
    text = path.read_bytes().strip()
    try:
        key = bytes.fromhex(text.decode("ascii"))
    except (UnicodeDecodeError, ValueError):
        key = b""
    if len(key) != KEY_BYTES:
        raise ValueError(f"{path} does not hold a replay key ({KEY_BYTES} bytes, hexadecimal)")
    return key


class Sealer:
    """Seals and opens stored bodies under one key (kept out of ``repr``).

    Args:
        key: `KEY_BYTES` bytes.
    """

    __slots__ = ("_aead", "_key", "key_id")

    def __init__(self, key: bytes) -> None:
        if len(key) != KEY_BYTES:
            raise ValueError(f"a replay key is {KEY_BYTES} bytes")
        self._key = key
        self._aead: AESGCM | None = None  # cryptography is imported when first needed
        #: Names the key in each sealed body, without revealing it.
        self.key_id = hashlib.sha256(b"workbench replay key id\n" + key).digest()[:_KEY_ID_BYTES]

    def _cipher(self) -> AESGCM:
        if self._aead is None:
            from cryptography.hazmat.primitives.ciphers.aead import AESGCM

            self._aead = AESGCM(self._key)
        return self._aead

    def seal(self, body: bytes, context: bytes) -> bytes:
        """``body`` encrypted and authenticated, bound to ``context``."""
        nonce = os.urandom(_NONCE_BYTES)
        return _PREFIX + self.key_id + nonce + self._cipher().encrypt(nonce, body, context)

    def open(self, stored: bytes, context: bytes) -> bytes | None:
        """The body `seal` was given, or ``None``: sealed under another key or context,
        or altered."""
        from cryptography.exceptions import InvalidTag

        rest = stored[len(_PREFIX) :]
        key_id, rest = rest[:_KEY_ID_BYTES], rest[_KEY_ID_BYTES:]
        if not is_sealed(stored) or key_id != self.key_id:
            return None
        nonce, sealed = rest[:_NONCE_BYTES], rest[_NONCE_BYTES:]
        try:
            return self._cipher().decrypt(nonce, sealed, context)
        except InvalidTag:
            return None

    def __repr__(self) -> str:
        return f"Sealer(key_id={self.key_id.hex()!r})"
