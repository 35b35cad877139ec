from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from evalsvc.api.app import create_versioned_app
from evalsvc.api.routes import all_routers
from evalsvc.logic import api_keys
from evalsvc_tools.local.tables import create_queues
from fastapi.testclient import TestClient

from tests.conftest import EVENT_KEY, point_service_at
from tests.fake_judge import FakeJudge, service_env
from tests.log_capture import captured
from tests.work_queue import Work


def ok(response: Any, status: int = 200) -> Any:
    """`response`, once its status is `status`. Every write a test makes is checked, its set-up
    writes too: one that failed unseen would leave the test passing or failing for another
    reason than the one it names."""
    assert response.status_code == status, f"{response.status_code}: {response.text}"
    return response


class Tenant:
    """A tenant with one API key, and a client that sends it."""

    def __init__(self, http: TestClient, name: str, key: str) -> None:
        self.http = http
        self.name = name
        self.key = key
        self.headers = {"Authorization": key}

    def get(self, path: str, **kwargs: object):  # type: ignore[no-untyped-def]
        return self.http.get(f"/v1{path}", headers=self.headers, **kwargs)

    def post(self, path: str, body: object = None, **kwargs: object):  # type: ignore[no-untyped-def]
        return self.http.post(f"/v1{path}", headers=self.headers, json=body, **kwargs)

    def put(self, path: str, body: object = None, **kwargs: object):  # type: ignore[no-untyped-def]
        return self.http.put(f"/v1{path}", headers=self.headers, json=body, **kwargs)


@pytest.fixture
def http() -> Iterator[TestClient]:
    """The whole API in-process. Tests choose the storage: `tables` (moto in-process) by
    default, or `served_tables` (the embedded server) for concurrent writers."""
    app = create_versioned_app(all_routers())
    with TestClient(app, raise_server_exceptions=False) as client:
        yield client


@pytest.fixture(autouse=True)
def _storage(request: pytest.FixtureRequest) -> None:
    if "served_tables" not in request.fixturenames:
        request.getfixturevalue("tables")


@pytest.fixture
def acme(http: TestClient) -> Tenant:
    key, _ = api_keys.create_key("acme", "ann", "ann@acme.test")
    return Tenant(http, "acme", key)


@pytest.fixture
def globex(http: TestClient) -> Tenant:
    key, _ = api_keys.create_key("globex", "gus", "gus@globex.test")
    return Tenant(http, "globex", key)


@pytest.fixture
def event_key(tables: dict[str, str]) -> str:
    """The key the events/ files carry, registered for tenant `local`."""
    api_keys.ensure_key("local", "dev", "dev@localhost", EVENT_KEY)
    return EVENT_KEY


@pytest.fixture
def work(tables: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> Iterator[Work]:
    """The work queue and its dead-letter queue (moto, from template.yaml), configured for the
    service, with retries due at once and no waiting in plain requests."""
    client = boto3.client("sqs", region_name="us-east-1")
    urls = create_queues(client, "test")
    point_service_at(
        {
            "EVALSVC_WORK_QUEUE_URL": urls["WorkQueue"],
            "EVALSVC_SYNC_WAIT_SECONDS": "0",
            "EVALSVC_CHUNK_RETRY_BASE_SECONDS": "0",
        },
        monkeypatch,
    )
    yield Work(client, urls)


@pytest.fixture
def priced_judge(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeJudge]:
    """The fake OpenAI-compatible judge (which reports `usage`), with a price for its model."""
    from tests.integration.test_usage import judge_env

    fake = FakeJudge()
    with fake.running():
        point_service_at(judge_env(fake), monkeypatch)
        yield fake


@pytest.fixture
def fake_judge(tables: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeJudge]:
    """The fake OpenAI-compatible judge (tests/fake_judge.fake_llm: verdicts, preferences...)
    that the service's LLM points at, retrying at once."""
    fake = FakeJudge()
    with fake.running():
        point_service_at(
            {**service_env(fake), "EVALSVC_JUDGE_RETRY_BASE_SECONDS": "0.01"}, monkeypatch
        )
        yield fake


@pytest.fixture
def log_lines() -> Iterator[list[str]]:
    """The service's log lines (DEBUG and above) written during the test."""
    with captured("DEBUG") as collect:
        yield collect.lines
