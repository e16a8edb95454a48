"""The conversation lock as a renewed lease, on a real Redis: a live run keeps it however long it takes, a dead
run's lease lapses within its length, and a renewal that finds the lock taken says so."""

from __future__ import annotations

import time

import redis

from captain.answering.services.locks import conversation_lock
from tests.support.servers import wait_for

LEASE = 0.6


def test_a_live_run_keeps_its_lock_beyond_the_lease(redis_url):
    held = conversation_lock(1, lease_seconds=LEASE)
    assert held.acquire()
    try:
        time.sleep(LEASE * 3)  # three leases long: only the renewals keep it
        assert not conversation_lock(1, lease_seconds=LEASE).acquire()
        assert not held.lost.is_set()
    finally:
        held.release()
    after = conversation_lock(1, lease_seconds=LEASE)
    assert after.acquire()  # released, not left to lapse
    after.release()


def test_a_dead_runs_lease_lapses_within_its_length(redis_url):
    dead = conversation_lock(2, lease_seconds=LEASE)
    assert dead.acquire()
    dead._stop.set()  # what a SIGKILL does to the renewing thread: no more renewals, no release
    started = time.monotonic()
    successor = conversation_lock(2, lease_seconds=LEASE)
    wait_for(successor.acquire, timeout=5, interval=0.05, what="the lapsed lease")
    assert time.monotonic() - started <= LEASE + 0.3
    successor.release()
    dead.release()  # releasing a lapsed lock only logs: it is not ours any more


def test_a_renewal_that_finds_the_lock_taken_marks_the_lease_lost(redis_url):
    held = conversation_lock(3, lease_seconds=LEASE)
    assert held.acquire()
    redis.Redis.from_url(redis_url).set("captain:conversation-lock:3", "someone else", px=5000)
    wait_for(held.lost.is_set, timeout=5, interval=0.05, what="the lost lease")
    held.release()
    assert redis.Redis.from_url(redis_url).get("captain:conversation-lock:3") == b"someone else"
