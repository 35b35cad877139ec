"""Each request's log lines are its own: its request id, and after authentication its tenant and
key id (never the key), whatever else the process is doing at the same time: other tenants'
requests, and a queue worker in the middle of an invocation (the local server's set-up: uvicorn
and the workers in one process)."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
import requests
import uvicorn
from evalsvc.api.app import create_versioned_app
from evalsvc.api.routes import all_routers
from evalsvc.core.observability import LogContextPool, log_context, logger
from evalsvc.logic import api_keys
from evalsvc_tools.local.workers import LocalWorkers

from tests.conftest import point_service_at
from tests.fake_judge import FakeJudge, service_env
from tests.log_capture import LogLines, captured
from tests.work_queue import Work

VERDICT = json.dumps({"reason": "Polite.", "score": 4})
TENANTS = [f"tenant-{k}" for k in range(6)]
REQUESTS_PER_TENANT = 4


@pytest.fixture
def logs() -> Iterator[LogLines]:
    with captured("INFO") as lines:
        yield lines


@pytest.fixture
def served(tables: dict[str, str]) -> Iterator[str]:
    """The local server's app on uvicorn, in this process, on 127.0.0.1."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(
        uvicorn.Config(create_versioned_app(all_routers()), log_level="warning")
    )
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    for _ in range(500):
        if server.started:
            break
        time.sleep(0.02)
    assert server.started
    yield f"http://127.0.0.1:{port}/v1"
    server.should_exit = True
    thread.join(timeout=10)
    sock.close()


def test_concurrent_requests_log_their_own_request_id_tenant_and_key_id_beside_a_worker(
    served: str, work: Work, logs: LogLines, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A judge that holds the worker mid-invocation until the requests are done.
    judged = threading.Event()
    release = threading.Event()

    def held(_request: dict[str, Any]) -> tuple[int, str]:
        judged.set()
        release.wait(60)
        return 200, VERDICT

    judge = FakeJudge(answer=held)
    keys = {
        tenant: api_keys.create_key(tenant, "u", f"u@{tenant}.test")[0]
        for tenant in ["worked", *TENANTS]
    }
    key_ids = {tenant: api_keys.hash_key(key)[:12] for tenant, key in keys.items()}
    with judge.running():
        point_service_at(service_env(judge), monkeypatch)

        def call(tenant: str, method: str, path: str, body: Any = None, **headers: str) -> Any:
            headers["Authorization"] = keys[tenant]
            return requests.request(
                method, f"{served}{path}", json=body, headers=headers, timeout=60
            )

        data = {"data": [{"id": "a", "input": "hi", "output": "please"}]}
        assert call("worked", "POST", "/data/seed/ds", data).ok
        metrics = {"metrics": ["Does the output say please?"]}
        assert call("worked", "POST", "/specify_questions", metrics).ok
        queued = call("worked", "POST", "/evaluate", {"seed_data_id": "ds"}, Prefer="respond-async")
        assert queued.status_code == 202, queued.text
        results = f"/evaluation/{queued.json()['eval_results_id']}"
        workers = LocalWorkers(work.client, work.queue_url, work.dead_letter_url, workers=1)
        workers.start()
        try:
            assert judged.wait(60), "the worker never called the judge"

            def write(job: tuple[str, int]) -> tuple[str, int, str]:
                tenant, k = job
                body = {"data": [{"input": "q", "output": "a"}]}
                response = call(tenant, "POST", f"/data/seed/{tenant}-{k}", body)
                assert response.status_code == 200, response.text
                return tenant, k, response.headers["x-request-id"]

            jobs = [(tenant, k) for tenant in TENANTS for k in range(REQUESTS_PER_TENANT)]
            with ThreadPoolExecutor(max_workers=8) as pool:
                answered = list(pool.map(write, jobs))
            # the worker was mid-invocation throughout: its job cannot end before the release
            assert call("worked", "GET", results).json()["status"] == "running"
        finally:
            release.set()
        for _ in range(3000):
            if call("worked", "GET", results).json()["status"] == "complete":
                break
            time.sleep(0.02)
        workers.stop()
        after = call(TENANTS[0], "POST", "/data/seed/after", {"data": []})
        assert after.status_code == 200

    records = logs.records()
    written = {r["dataset_id"]: r for r in records if r["message"] == "seed dataset written"}
    request_ids = set()
    for tenant, k, request_id in answered:
        line = written[f"{tenant}-{k}"]
        assert line["tenant"] == tenant
        assert line["key_id"] == key_ids[tenant]
        assert line["correlation_id"] == request_id
        assert "function_name" not in line and "function_request_id" not in line
        assert "results_id" not in line and "chunk" not in line
        request_ids.add(request_id)
    assert len(request_ids) == len(jobs)
    last = written["after"]
    assert last["tenant"] == TENANTS[0] and last["correlation_id"] == after.headers["x-request-id"]
    assert "function_name" not in last
    # The worker's lines are its own: its function, its invocation, its job's tenant.
    finished = [r for r in records if r["message"] == "job complete"]
    assert finished, records
    assert finished[0]["function_name"] == "evalsvc-local-worker"
    assert finished[0]["tenant"] == "worked"
    assert finished[0]["function_request_id"] not in request_ids
    text = "\n".join(logs.lines)
    assert all(key not in text for key in keys.values())


def test_a_pools_tasks_log_with_the_keys_of_whoever_submitted_them(
    logs: LogLines,
) -> None:
    def work(k: int) -> None:
        logger.info("task", extra={"k": k})

    with LogContextPool(max_workers=4) as pool:
        with log_context(tenant="a", correlation_id="req-a"):
            first = [pool.submit(work, k) for k in range(8)]
        with log_context(tenant="b", correlation_id="req-b"):
            second = list(pool.map(work, range(8, 16)))
        for future in first:
            future.result()
        assert len(second) == 8
        pool.submit(work, 99).result()

    lines = {r["k"]: r for r in logs.records() if r["message"] == "task"}
    assert {lines[k]["tenant"] for k in range(8)} == {"a"}
    assert {lines[k]["correlation_id"] for k in range(8, 16)} == {"req-b"}
    assert "tenant" not in lines[99] and "correlation_id" not in lines[99]
