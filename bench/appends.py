"""Many clients appending pairs to one dataset at once, the way production apps do
(`plum-sdk`'s `upload_pair`, `POST /data/seed/{id}/pair`), against the local server.

Starts `evalsvc serve` on free ports with a fresh data directory, creates an empty dataset,
then runs C client threads that each append M pairs (no retries: `plum-sdk` makes none), and
prints the answers by status, the appends per second, and whether every pair answered 200 is
in the dataset read back afterwards (every page of GET /data/seed/{id}).

    .venv/bin/python bench/appends.py [--clients 64] [--each 4]
"""

from __future__ import annotations

import argparse
import threading
import time
from collections import Counter

import requests
from local_server import serving

KEY = "evk_appends_bench_key_0000000000000000000000"


def run(base: str, clients: int, each: int) -> None:
    headers = {"Authorization": KEY}
    requests.post(
        f"{base}/data/seed/appends", json={"data": []}, headers=headers, timeout=60
    ).raise_for_status()
    statuses: Counter[int] = Counter()
    kept: list[str] = []
    lock = threading.Lock()
    gate = threading.Barrier(clients)

    def client(k: int) -> None:
        session = requests.Session()
        gate.wait()
        for i in range(each):
            pair_id = f"c{k:03d}-{i:04d}"
            response = session.post(
                f"{base}/data/seed/appends/pair",
                json={"id": pair_id, "input": f"question {k}.{i}", "output": "an answer"},
                headers=headers,
                timeout=120,
            )
            with lock:
                statuses[response.status_code] += 1
                if response.status_code == 200:
                    kept.append(pair_id)

    threads = [threading.Thread(target=client, args=(k,)) for k in range(clients)]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    seconds = time.perf_counter() - started
    stored: list[str] = []
    cursor = None
    while True:
        params = {"cursor": cursor} if cursor else {}
        page = requests.get(
            f"{base}/data/seed/appends", headers=headers, params=params, timeout=120
        ).json()
        stored += [pair["id"] for pair in page["data"]]
        cursor = page.get("next_cursor")
        if not cursor:
            break
    total = clients * each
    answered = ", ".join(f"{status}: {count}" for status, count in sorted(statuses.items()))
    print(f"{clients} clients x {each} appends = {total}: {answered}")
    print(f"{total / seconds:.0f} appends/s ({seconds:.2f} s)")
    missing = set(kept) - set(stored)
    print(
        f"read back {len(stored)} pairs ({len(set(stored))} distinct); "
        f"of the {len(kept)} answered 200, {len(missing)} missing"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--clients", type=int, default=64)
    parser.add_argument("--each", type=int, default=4)
    args = parser.parse_args()
    with serving(KEY, {"EVALSVC_AUTH_CACHE_SECONDS": "0"}) as base:
        run(base, args.clients, args.each)


if __name__ == "__main__":
    main()
