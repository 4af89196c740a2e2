"""`WriteLock`: the right to write an SQLite database, within a process and across processes.

SQLite has one writer per database. Inside a process the lock is a re-entrant thread
lock; on a database file it is also an exclusive ``flock`` on a file beside it, so several
sandbox processes serving one file (``workbench sandbox --workers N``) take turns
without SQLite's busy handler, which sleeps in steps of milliseconds and, on the event
loop, would stall every request of the process.

An event loop never waits on the lock: it tries it (``blocking=False``) and, when it is
taken, watches `WriteLock.wake_fd`, the read end of a named pipe beside the database
into which every release writes a byte. A blocking wait in a helper thread would not
do: the woken thread must get the GIL back from the busy loop before it can say so,
which takes up to `sys.getswitchinterval` (5 ms) while the lock stays taken.

``flock`` and named pipes are POSIX's: where they are missing (Windows) the lock is
this process's only (`CROSS_PROCESS` is false). One process serving the file then
writes as before, and another process's writes wait in SQLite's busy handler; the
``--workers`` command refuses to start several processes there.
"""

from __future__ import annotations

import contextlib
import os
import stat
import threading
from types import ModuleType, TracebackType

__all__ = ["CROSS_PROCESS", "WriteLock"]


def _fcntl() -> ModuleType | None:
    """``fcntl``, where file locks and named pipes exist (POSIX); ``None`` elsewhere."""
    if not hasattr(os, "mkfifo"):
        return None
    try:
        import fcntl
    except ImportError:
        return None
    return fcntl


_FCNTL = _fcntl()
#: Whether processes can share the lock (POSIX); elsewhere it is each process's own.
CROSS_PROCESS = _FCNTL is not None


class WriteLock:
    """A re-entrant lock, shared with other processes when given a lock file.

    Args:
        path: the lock file (created if missing), or ``None`` for a lock of this process
            only (an in-memory database). The named pipe is ``path`` + ``".wake"``.
            Ignored where `CROSS_PROCESS` is false.
    """

    def __init__(self, path: str | None) -> None:
        self._local = threading.RLock()
        self._depth = 0  # changed only by the thread holding _local
        self._fd: int | None = None
        self.wake_fd: int | None = None
        """Readable after a release (of this lock, by any process); `None` without a file."""
        if path is not None and CROSS_PROCESS:
            self._fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
            self.wake_fd = _open_pipe(f"{path}.wake")

    def acquire(self, blocking: bool = True) -> bool:
        """Take the lock; with ``blocking=False``, ``False`` at once if anyone holds it."""
        if not self._local.acquire(blocking=blocking):
            return False
        if self._depth == 0 and self._fd is not None and _FCNTL is not None:
            try:
                flags = _FCNTL.LOCK_EX if blocking else _FCNTL.LOCK_EX | _FCNTL.LOCK_NB
                _FCNTL.flock(self._fd, flags)
            except BlockingIOError:
                self._local.release()
                return False
            except BaseException:
                self._local.release()
                raise
        self._depth += 1
        return True

    def release(self) -> None:
        """Give the lock back, then wake whoever watches `wake_fd`."""
        self._depth -= 1
        released = False
        try:
            if self._depth == 0 and self._fd is not None and _FCNTL is not None:
                _FCNTL.flock(self._fd, _FCNTL.LOCK_UN)
                released = True
        finally:
            self._local.release()
        if released and self.wake_fd is not None:
            # Only after the release: a waiter woken earlier would find it still taken.
            # A full pipe is readable already, so a byte that does not fit is not missed.
            with contextlib.suppress(BlockingIOError):
                os.write(self.wake_fd, b"\0")

    def drain(self) -> None:
        """Empty the pipe (after `wake_fd` became readable), so it wakes again next time."""
        if self.wake_fd is None:
            return
        with contextlib.suppress(BlockingIOError):
            while os.read(self.wake_fd, 4096):
                pass

    def close(self) -> None:
        """Close the lock file and the pipe (only once nothing holds or watches them)."""
        for fd in (self._fd, self.wake_fd):
            if fd is not None:
                os.close(fd)
        self._fd = self.wake_fd = None

    def __enter__(self) -> WriteLock:
        self.acquire()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.release()

    def __repr__(self) -> str:
        return f"WriteLock(shared={self._fd is not None}, held={self._depth > 0})"


def _open_pipe(path: str) -> int:
    """Open (creating it if needed) a named pipe for reading and writing, non-blocking."""
    with contextlib.suppress(FileExistsError):
        os.mkfifo(path, 0o600)
    fd = os.open(path, os.O_RDWR | os.O_NONBLOCK)
    if not stat.S_ISFIFO(os.fstat(fd).st_mode):
        os.close(fd)
        raise RuntimeError(f"{path} exists and is not a named pipe")
    return fd
