"""The embedded store's readers-writer lock: reads together, a write alone, a waiting write
holds back new reads, and the nestings the store uses."""

from __future__ import annotations

import threading
import time

import pytest

from graphmem.store.sqlite.rwlock import RWLock


def test_reads_overlap_and_a_write_waits_for_them() -> None:
    lock = RWLock()
    inside, release = threading.Barrier(3), threading.Event()
    order: list[str] = []

    def reader() -> None:
        with lock.read():
            inside.wait()  # both readers are in at once
            release.wait()
        order.append("read done")

    readers = [threading.Thread(target=reader) for _ in range(2)]
    for t in readers:
        t.start()
    inside.wait()

    def writer() -> None:
        with lock.write():
            order.append("write")

    w = threading.Thread(target=writer)
    w.start()
    while not lock._waiting_writers:
        time.sleep(0.001)
    assert order == [] and lock._readers == 2  # the write waits for the reads
    release.set()
    for t in [*readers, w]:
        t.join(5)
    assert order[-1] == "write" and order.count("read done") == 2


def test_a_waiting_write_holds_back_new_reads() -> None:
    lock = RWLock()
    first_in, release = threading.Event(), threading.Event()
    order: list[str] = []

    def long_read() -> None:
        with lock.read():
            first_in.set()
            release.wait()

    def write() -> None:
        with lock.write():
            order.append("write")

    def late_read() -> None:
        with lock.read():
            order.append("late read")

    threads = [threading.Thread(target=long_read)]
    threads[0].start()
    first_in.wait()
    threads.append(threading.Thread(target=write))
    threads[1].start()
    while not lock._waiting_writers:
        time.sleep(0.001)
    threads.append(threading.Thread(target=late_read))
    threads[2].start()
    time.sleep(0.05)
    assert order == []  # the late read queues behind the write
    release.set()
    for t in threads:
        t.join(5)
    assert order == ["write", "late read"]


def test_nesting_as_the_store_nests() -> None:
    lock = RWLock()
    with lock.read(), lock.read():
        assert lock._readers == 1 and lock.reading_here()
        with pytest.raises(RuntimeError), lock.write():
            pass  # a read cannot become a write
    with lock.write(), lock.read(), lock.write():
        assert lock._writer == threading.get_ident() and not lock.reading_here()
    assert lock._writer is None and lock._readers == 0
