"""Sealed at rest: replay bodies that carry a bearer, and merchants' secrets.

The answer of ``POST /v1/subscriptions`` (and of the portal's cancel) holds the
subscription's ``publicHash``, the buyer portal's bearer, which the subscriptions table
keeps only as a SHA-256. The idempotency record must replay that answer verbatim for 24
hours, so it keeps it sealed: AES-256-GCM (`cryptography`) under a key the database does
not hold, bound to its record (API key, endpoint, Idempotency-Key) as associated data,
so a sealed body moved to another record does not open.

Where the key lives (`SandboxConfig.replay_key`): ``workbench sandbox`` reads it from a
file outside the database (`load_key_file`; every ``--workers`` process reads the same
file, and a restart finds it again); a sandbox started from Python without one uses a
key made for its process's life (`process_key`), so a record it sealed replays until
the process ends, and sandboxes of one process on one database open each other's
secrets. A record sealed
under another key cannot be replayed (`Sealer.open` answers ``None``).

The same key seals each merchant's secret key and webhook secret in their columns
(`Sealer.seal_text`), bound to the row they belong to (the API key, the store), so a
dump, a backup or a database error's detail line shows none of them. Opening one is a
dictionary lookup after its first time (`Sealer.open_text` keeps what it opened), so a
signature check on a kept key costs what it did with the secret in clear.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import hmac
import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

__all__ = [
    "KEY_BYTES",
    "Sealer",
    "is_sealed",
    "is_sealed_text",
    "load_key_file",
    "new_key",
    "process_key",
]

#: AES-256.
KEY_BYTES = 32
_PREFIX = b"wb-sealed-v1:"
_KEY_ID_BYTES = 8
_NONCE_BYTES = 12
#: A sealed secret in a text column: this marker, then the sealed bytes in base64url.
_TEXT_PREFIX = "wbs1:"
#: Opened secrets kept per `Sealer` before the oldest half is dropped.
_OPENED_MAX = 20_000


def new_key() -> bytes:
    """A fresh random key."""
    return os.urandom(KEY_BYTES)


@functools.cache
def process_key() -> bytes:
    """A key made once per process, for the sandboxes started in it without one."""
    return new_key()


def is_sealed(stored: bytes) -> bool:
    """Whether a stored body was sealed (a JSON body never starts with the marker)."""
    return stored.startswith(_PREFIX)


def is_sealed_text(stored: str) -> bool:
    """Whether a stored secret was sealed (`Sealer.seal_text`)."""
    return stored.startswith(_TEXT_PREFIX)


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

    __slots__ = ("_aead", "_key", "_lock", "_opened", "key_id")

    def __init__(self, key: bytes) -> None:
        if len(key) != KEY_BYTES:
            raise ValueError(f"a replay key is {KEY_BYTES} bytes")
        self._key = key
        self._aead: AESGCM | None = None  # cryptography is imported when first needed
        self._opened: dict[tuple[str, str], str] = {}
        self._lock = threading.Lock()
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

    def seal_text(self, secret: str, context: str) -> str:
        """``secret`` sealed for a text column, bound to ``context`` (its row's key)."""
        sealed = self.seal(secret.encode("utf-8"), context.encode("utf-8"))
        return _TEXT_PREFIX + base64.urlsafe_b64encode(sealed[len(_PREFIX) :]).decode(
            "ascii"
        ).rstrip("=")

    def open_text(self, stored: str, context: str) -> str | None:
        """The secret `seal_text` was given, or ``None``: sealed under another key or
        context, altered, or not sealed at all. Kept once opened."""
        found = self._opened.get((stored, context))
        if found is not None:
            return found
        if not is_sealed_text(stored):
            return None
        text = stored[len(_TEXT_PREFIX) :]
        try:
            raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
        except ValueError:
            return None
        opened = self.open(_PREFIX + raw, context.encode("utf-8"))
        if opened is None:
            return None
        secret = opened.decode("utf-8")
        with self._lock:
            if len(self._opened) >= _OPENED_MAX:
                for old in list(self._opened)[: _OPENED_MAX // 2]:
                    del self._opened[old]
            self._opened[(stored, context)] = secret
        return secret

    def derive(self, purpose: str) -> bytes:
        """A 32-byte key for ``purpose`` (HMAC-SHA256 of it under this key), so that
        whoever shares the key file (every worker, a restart) derives the same one and
        nobody derives it without the file: the dashboard's session cookies are signed
        with one."""
        return hmac.new(self._key, b"workbench derived key\n" + purpose.encode(), "sha256").digest()

    def __repr__(self) -> str:
        return f"Sealer(key_id={self.key_id.hex()!r})"
