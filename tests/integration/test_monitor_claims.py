"""Each (monitor, scheduled time) runs exactly once (E8): a dispatch delivered twice claims its
run once, dispatchers racing for the same due monitors claim each run once between them, and a
claimed run moves the monitor's next run on, so it is no longer due."""

from __future__ import annotations

import threading
from collections import Counter

from evalsvc.models.monitors import StoredMonitor
from evalsvc.monitoring import schedules
from evalsvc.storage import monitors

MINUTE = 60_000
T0 = 1_795_000_000_000 // MINUTE * MINUTE


def monitor(tenant: str, monitor_id: str) -> StoredMonitor:
    return StoredMonitor(tenant, monitor_id, "{}", T0 - 5 * MINUTE, T0)


def test_a_dispatch_delivered_twice_claims_its_run_once(tables: dict[str, str]) -> None:
    assert monitors.put_monitor(monitor("acme", "m1"))
    assert not monitors.put_monitor(monitor("acme", "m1"))  # the id is taken

    assert [d.monitor_id for d in monitors.due(T0)] == ["m1"]
    assert monitors.claim_run("acme", "m1", T0, T0 + 5 * MINUTE)
    assert not monitors.claim_run("acme", "m1", T0, T0 + 5 * MINUTE)  # the same dispatch again

    assert list(monitors.due(T0 + MINUTE)) == []  # moved on: not due again
    assert [d.at_ms for d in monitors.due(T0 + 5 * MINUTE)] == [T0 + 5 * MINUTE]
    assert monitors.run_times("acme", "m1") == [T0]


def test_dispatchers_racing_claim_each_run_once(tables: dict[str, str]) -> None:
    rate = schedules.parse("rate(5 minutes)")
    for k in range(6):
        assert monitors.put_monitor(monitor("acme", f"m{k}"))
    claimed: Counter[str] = Counter()
    lock = threading.Lock()
    start = threading.Barrier(4)

    def dispatcher() -> None:
        start.wait()
        for due in list(monitors.due(T0)):
            following = schedules.next_after(rate, due.at_ms, T0)
            assert following is not None
            if monitors.claim_run(due.tenant, due.monitor_id, due.at_ms, following):
                with lock:
                    claimed[due.monitor_id] += 1

    threads = [threading.Thread(target=dispatcher) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert claimed == Counter({f"m{k}": 1 for k in range(6)})
    for k in range(6):
        assert monitors.run_times("acme", f"m{k}") == [T0]


def test_a_run_is_claimed_only_at_the_time_the_monitor_is_due(tables: dict[str, str]) -> None:
    assert monitors.put_monitor(monitor("acme", "m1"))
    # A late dispatch for a time already past (the monitor moved on) claims nothing
    assert monitors.claim_run("acme", "m1", T0, T0 + 5 * MINUTE)
    assert not monitors.claim_run("acme", "m1", T0 - 5 * MINUTE, T0)
    # Nor does a claim for another tenant's monitor of the same id
    assert not monitors.claim_run("other", "m1", T0 + 5 * MINUTE, T0 + 10 * MINUTE)
    assert monitors.run_times("acme", "m1") == [T0]
    assert monitors.run_times("other", "m1") == []
