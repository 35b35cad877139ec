"""The local server's data survives what a laptop does to it: a kill of the whole process group
right after a 200, a journal cut in the middle of a record, a full disk, a read-only directory,
and a crash in the middle of a queued evaluation."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from tests.e2e.conftest import DEV_KEY, LocalServer

HEADERS = {"Authorization": DEV_KEY}
MOUNT = shutil.which("mount") or "/bin/mount"
UMOUNT = shutil.which("umount") or "/bin/umount"


def call(
    server: LocalServer, method: str, path: str, body: Any = None, prefer: str | None = None
) -> Any:
    headers = {**HEADERS, **({"Prefer": prefer} if prefer else {})}
    return requests.request(
        method, f"{server.base_url}{path}", json=body, headers=headers, timeout=120
    )


def ok(response: requests.Response) -> Any:
    assert response.status_code in (200, 202), response.text
    return response.json()


def evaluate(
    server: LocalServer, dataset_id: str, metric: str, prefer: str | None = None
) -> tuple[Any, Any]:
    """A metrics set of one metric, and an evaluation of the dataset with it."""
    metrics = ok(call(server, "POST", "/specify_questions", {"metrics": [metric]}))
    body = {"seed_data_id": dataset_id, "metrics_id": metrics["metrics_id"]}
    return metrics, ok(call(server, "POST", "/evaluate", body, prefer=prefer))


def test_a_kill_of_the_process_group_right_after_a_200_loses_nothing(
    fresh_server: LocalServer,
) -> None:
    fresh_server.start()
    pairs = [
        {"id": f"p{i}", "input": f"q {i}", "output": "please " * (i % 3 + 1)} for i in range(40)
    ]
    ok(call(fresh_server, "POST", "/data/seed/kept", {"data": pairs}))
    ok(
        call(
            fresh_server,
            "POST",
            "/data/seed/kept/pair",
            {"input": "late", "output": "x"},
        )
    )
    metrics, result = evaluate(fresh_server, "kept", "check:max_words:1")
    ok(
        call(
            fresh_server,
            "PUT",
            f"/vote_eval_pair/{result['eval_results_id']}",
            {"pair_id": "p1", "metric_idx": 0, "vote": -1, "comment": "too long"},
        )
    )
    created = fresh_server.cli(
        "keys", "create", "--tenant", "other", "--user", "kim", "--email", "kim@example.test"
    )
    assert created.returncode == 0, created.stderr
    key = created.stdout.rstrip("\n").splitlines()[-1]
    seen = ok(call(fresh_server, "GET", f"/evaluation/{result['eval_results_id']}"))
    ok(call(fresh_server, "POST", "/data/seed/last", {"data": pairs[:1]}))

    fresh_server.kill_group()  # at once: no stop, no flush, nothing after the 200
    fresh_server.start()

    dataset = ok(call(fresh_server, "GET", "/data/seed/kept"))
    assert [p["id"] for p in dataset["data"]][:40] == [p["id"] for p in pairs]
    assert [p["input"] for p in dataset["data"][40:]] == ["late"]
    assert ok(call(fresh_server, "GET", f"/question/{metrics['metrics_id']}"))["definitions"] == [
        "check:max_words:1"
    ]
    stored = ok(call(fresh_server, "GET", f"/evaluation/{result['eval_results_id']}"))
    assert stored == seen
    assert stored["status"] == "complete" and stored["pair_count"] == 41
    assert stored["score_means"] == [pytest.approx((15 * 5 + 26 * 1) / 41)]
    assert [(c["pair_id"], c["vote"], c["comment"]) for c in stored["human_critique"]] == [
        ("p1", -1, "too long")
    ]
    assert [p["id"] for p in ok(call(fresh_server, "GET", "/data/seed/last"))["data"]] == ["p0"]
    other = requests.get(
        f"{fresh_server.base_url}/data/seed/kept", headers={"Authorization": key}, timeout=30
    )
    assert other.status_code == 404  # the key works (it is tenant "other", who has no "kept")


def newest_segment(data_dir: Path) -> Path:
    return sorted(data_dir.glob("journal-*.log"))[-1]


def test_a_torn_journal_tail_is_dropped_with_a_line_and_the_rest_kept(
    fresh_server: LocalServer,
) -> None:
    fresh_server.start()
    ok(call(fresh_server, "POST", "/data/seed/before", {"data": [{"input": "i", "output": "o"}]}))
    fresh_server.kill_group()
    with newest_segment(fresh_server.data_dir).open("ab") as handle:
        handle.write(b'0badc0de {"i":[["evalsvc-local-DatasetsTable",{"pk":{"S":"x"')

    fresh_server.start()
    ok(call(fresh_server, "POST", "/data/seed/after", {"data": [{"input": "i", "output": "o"}]}))
    first = fresh_server.stop()
    fresh_server.start()

    assert "torn last record" in first and "dropped" in first
    for dataset_id in ("before", "after"):
        assert ok(call(fresh_server, "GET", f"/data/seed/{dataset_id}"))["data"][0]["input"] == "i"


@contextlib.contextmanager
def small_disk(path: Path, size: str) -> Iterator[Path]:
    """A directory on a filesystem of `size` (tmpfs): a disk that fills."""
    path.mkdir(parents=True)
    mounted = subprocess.run(
        [MOUNT, "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)],
        capture_output=True,
        check=False,
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a small filesystem here: {mounted.stderr.decode().strip()}")
    try:
        yield path
    finally:
        subprocess.run([UMOUNT, "-l", str(path)], check=False)


def test_a_full_disk_refuses_writes_with_a_503_and_acknowledges_nothing_it_lost(
    tmp_path: Path,
) -> None:
    with small_disk(tmp_path / "disk", "1m") as disk:
        server = LocalServer(disk / "data")
        server.start()
        try:
            acknowledged, refused = [], []
            pairs = [{"input": "x" * 2000, "output": "y"} for _ in range(20)]
            for k in range(40):  # 40 x 40 KB: more than the disk holds
                response = call(server, "POST", f"/data/seed/d{k}", {"data": pairs})
                assert response.status_code in (200, 503), response.text
                (acknowledged if response.status_code == 200 else refused).append(f"d{k}")
            assert acknowledged and refused
            body = call(server, "POST", "/data/seed/again", {"data": pairs})
            assert body.status_code == 503 and "error" in body.json()
            assert ok(call(server, "GET", f"/data/seed/{acknowledged[-1]}"))["data"]  # reads go on
            subprocess.run([MOUNT, "-o", "remount,size=64m", str(disk)], check=True)
            ok(call(server, "POST", "/data/seed/room-again", {"data": pairs}))  # writes go on
        finally:
            output = server.kill_group()
        assert f"the data directory {disk / 'data'} could not be written" in output
        server.start()
        try:
            for dataset_id in [*acknowledged, "room-again"]:
                assert call(server, "GET", f"/data/seed/{dataset_id}").status_code == 200
            for dataset_id in refused:
                assert call(server, "GET", f"/data/seed/{dataset_id}").status_code == 404
        finally:
            server.stop()


def test_a_read_only_data_directory_stops_the_start_with_its_path(tmp_path: Path) -> None:
    data_dir = tmp_path / "ro"
    data_dir.mkdir()
    if os.geteuid() == 0:
        mounted = subprocess.run(
            [MOUNT, "-t", "tmpfs", "-o", "ro,size=1m", "tmpfs", str(data_dir)],
            capture_output=True,
            check=False,
        )
        if mounted.returncode != 0:
            pytest.skip(f"cannot mount a read-only filesystem: {mounted.stderr.decode()}")
    else:
        data_dir.chmod(0o500)
    try:
        started = LocalServer(data_dir).cli("serve", local=False)
    finally:
        if os.geteuid() == 0:
            subprocess.run([UMOUNT, "-l", str(data_dir)], check=False)
    assert started.returncode == 1
    assert f"evalsvc: cannot use the data directory {data_dir}" in started.stderr
    assert "Traceback" not in started.stderr


def test_a_queued_evaluation_cut_by_a_crash_completes_after_the_restart(
    fresh_server: LocalServer,
) -> None:
    fresh_server.extra_env = {"EVALSVC_LOCAL_WORKERS": "1"}
    fresh_server.start()
    pairs = [
        {"id": f"p{i:04d}", "input": "q", "output": "please " * (i % 4 + 1)} for i in range(3000)
    ]
    ok(call(fresh_server, "POST", "/data/seed/big", {"data": pairs}))
    _, queued = evaluate(fresh_server, "big", "check:max_words:2", prefer="respond-async")
    fresh_server.kill_group()  # the queue, the workers and what they held are gone

    fresh_server.start()
    deadline = time.monotonic() + 240
    while True:
        result = ok(call(fresh_server, "GET", f"/evaluation/{queued['eval_results_id']}"))
        if result["status"] != "running" or time.monotonic() > deadline:
            break
        time.sleep(0.5)

    output = fresh_server.stop()
    assert "1 job(s) left running at the last stop queued again" in output
    assert result["status"] == "complete", result
    assert result["pairs_done"] == result["pairs_total"] == result["pair_count"] == 3000
    assert result["score_means"] == [pytest.approx((5 + 5 + 1 + 1) / 4)]
