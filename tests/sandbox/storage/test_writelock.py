"""`WriteLock` and the shared `KeyCache` stamp: what several processes on one SQLite file rely on.

Two `WriteLock` objects on one path hold two open file descriptions, which ``flock``
treats exactly as it treats two processes; the subprocess test checks that too.
"""

from __future__ import annotations

import os
import select
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest

from workbench.sandbox.edge.keycache import KeyCache
from workbench.sandbox.keys import KeyRecord
from workbench.sandbox.storage import WriteLock


def _readable(fd: int | None, timeout: float) -> bool:
    assert fd is not None
    return bool(select.select([fd], [], [], timeout)[0])


@pytest.fixture
def pair(tmp_path: Path) -> Iterator[tuple[WriteLock, WriteLock]]:
    """Two locks on one file, as two processes have."""
    path = str(tmp_path / "db-write.lock")
    locks = WriteLock(path), WriteLock(path)
    try:
        yield locks
    finally:
        for lock in locks:
            lock.close()


def test_a_held_lock_refuses_another_holder_until_released(
    pair: tuple[WriteLock, WriteLock],
) -> None:
    mine, theirs = pair
    assert mine.acquire(blocking=False)
    assert not theirs.acquire(blocking=False)
    mine.release()
    assert theirs.acquire(blocking=False)
    assert not mine.acquire(blocking=False)
    theirs.release()


def test_the_lock_is_reentrant_and_shared_only_on_the_last_release(
    pair: tuple[WriteLock, WriteLock],
) -> None:
    mine, theirs = pair
    with mine, mine:
        assert not theirs.acquire(blocking=False)
    assert theirs.acquire(blocking=False)
    theirs.release()


def test_a_release_wakes_a_watcher_and_drain_quiets_it(pair: tuple[WriteLock, WriteLock]) -> None:
    holder, watcher = pair
    watcher.drain()
    assert holder.acquire(blocking=False)
    assert not _readable(watcher.wake_fd, 0.05)
    holder.release()
    assert _readable(watcher.wake_fd, 1.0)
    watcher.drain()
    assert not _readable(watcher.wake_fd, 0.05)


def test_releases_nobody_reads_never_block(tmp_path: Path) -> None:
    lock = WriteLock(str(tmp_path / "db-write.lock"))
    try:
        for _ in range(70_000):  # more bytes than a pipe holds
            lock.acquire(blocking=False)
            lock.release()
        assert _readable(lock.wake_fd, 0)
        lock.drain()
        assert not _readable(lock.wake_fd, 0.05)
    finally:
        lock.close()


def test_another_process_holding_the_lock_is_waited_for(tmp_path: Path) -> None:
    path = str(tmp_path / "db-write.lock")
    holder = textwrap.dedent(
        f"""
        import sys
        from workbench.sandbox.storage import WriteLock
        lock = WriteLock({path!r})
        lock.acquire()
        print("held", flush=True)
        sys.stdin.readline()
        lock.release()
        print("released", flush=True)
        """
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", holder], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    mine = WriteLock(path)
    try:
        assert proc.stdout is not None
        assert proc.stdin is not None
        assert proc.stdout.readline().strip() == "held"
        mine.drain()
        assert not mine.acquire(blocking=False)
        proc.stdin.write("go\n")
        proc.stdin.flush()
        assert _readable(mine.wake_fd, 10.0)
        assert proc.stdout.readline().strip() == "released"
        assert mine.acquire(blocking=False)
        mine.release()
    finally:
        proc.kill()
        proc.wait(timeout=10)
        mine.close()


def test_a_path_that_is_not_a_pipe_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "db-write.lock"
    Path(f"{path}.wake").write_text("not a pipe")
    with pytest.raises(RuntimeError, match="not a named pipe"):
        WriteLock(str(path))


def test_an_in_memory_lock_has_no_files(tmp_path: Path) -> None:
    lock = WriteLock(None)
    assert lock.wake_fd is None
    with lock:
        assert "held=True" in repr(lock)
    lock.drain()
    lock.close()
    assert list(tmp_path.iterdir()) == []


def _record(api_key: str) -> KeyRecord:
    row = SimpleNamespace(
        api_key=api_key,
        secret_key="sk_test_x",
        merchant_id="mrc_x",
        store_id="sto_x",
        revoked=False,
        fail_next=None,
        latency_ms=0,
        per_second=None,
        burst=None,
    )
    return KeyRecord(row)  # type: ignore[arg-type]


def test_a_clear_in_one_process_empties_the_others_cache(tmp_path: Path) -> None:
    stamp = str(tmp_path / "db-keys.stamp")
    first, second = (KeyCache(enabled=True, stamp_path=stamp) for _ in range(2))
    first.put(_record("pk_test_a"), first.stamp())
    assert first.get("pk_test_a") is not None
    second.clear()
    assert first.get("pk_test_a") is None


def test_a_record_read_before_a_clear_is_not_kept(tmp_path: Path) -> None:
    stamp_path = str(tmp_path / "db-keys.stamp")
    first, second = (KeyCache(enabled=True, stamp_path=stamp_path) for _ in range(2))
    taken = first.stamp()
    second.clear()  # another process changed the key while this one was reading it
    first.put(_record("pk_test_a"), taken)
    assert first.get("pk_test_a") is None
    taken = first.stamp()
    first.clear()  # and the same within one process
    first.put(_record("pk_test_a"), taken)
    assert first.get("pk_test_a") is None
    first.put(_record("pk_test_a"), first.stamp())
    assert first.get("pk_test_a") is not None


def test_a_disabled_cache_keeps_nothing_and_makes_no_file(tmp_path: Path) -> None:
    cache = KeyCache(enabled=False, stamp_path=str(tmp_path / "db-keys.stamp"))
    cache.put(_record("pk_test_a"), cache.stamp())
    assert cache.get("pk_test_a") is None
    assert not os.path.exists(tmp_path / "db-keys.stamp")
