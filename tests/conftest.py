"""Shared fixtures. The environment is fixed before any service module is imported: fake AWS
credentials (nothing may reach AWS), tracing off, metrics namespace set."""

from __future__ import annotations

import os

os.environ.update(
    {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_SESSION_TOKEN": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_REGION": "us-east-1",
        "POWERTOOLS_TRACE_DISABLED": "true",
        "POWERTOOLS_METRICS_NAMESPACE": "EvalServiceTest",
        "POWERTOOLS_SERVICE_NAME": "evalsvc",
        "POWERTOOLS_LOG_LEVEL": "WARNING",
    }
)
os.environ.pop("EVALSVC_DYNAMODB_ENDPOINT_URL", None)

from collections.abc import Iterator
from pathlib import Path

import pytest
from evalsvc.core.settings import UNPREFIXED_UNTIL_NOW

# The names the settings had before the EVALSVC_ prefix (read for one release, with a warning):
# one left in a developer's shell would steer the tests and warn in their logs. (The settings
# module reads nothing when imported.)
for _field in UNPREFIXED_UNTIL_NOW:
    os.environ.pop(_field.upper(), None)

ROOT = Path(__file__).resolve().parents[1]
EVENT_KEY = "evk_events_local_dev_key_000000000000000000"


def point_service_at(env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Set `env` for this test only and make the service code read it afresh."""
    from evalsvc_tools.local.server import apply_environment

    for name, value in env.items():
        monkeypatch.setenv(name, value)
    apply_environment({})


@pytest.fixture(autouse=True)
def _settings_follow_the_environment() -> Iterator[None]:
    """Settings read during a test are forgotten after it (its environment is undone), and so are
    the LLM latency this process has seen (it steers planning against deadlines) and the
    structured-output mode each endpoint settled on (a later test's fake may reuse a port)."""
    yield
    from evalsvc.core.settings import reset_settings
    from evalsvc.scoring.llm import LATENCY
    from evalsvc.scoring.llm.structured import ENDPOINTS

    reset_settings()
    LATENCY.forget()
    ENDPOINTS.forget()


@pytest.fixture
def tables(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, str]]:
    """Fresh moto DynamoDB tables built from template.yaml; the service code points at them.
    moto as it is (no store's speed-ups), handling one request at a time: the service's threads
    can write at once without losing items (evalsvc_tools/local/inprocess.py)."""
    import boto3
    from evalsvc_tools.local import fastpath
    from evalsvc_tools.local.inprocess import moto_in_process
    from evalsvc_tools.local.tables import create_tables

    assert not fastpath.installed(), "a store started by an earlier test was never stopped"
    with moto_in_process():
        env = create_tables(boto3.client("dynamodb", region_name="us-east-1"), "test")
        point_service_at(env, monkeypatch)
        yield env


@pytest.fixture
def served_tables(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, str]]:
    """Tables in the embedded DynamoDB server (safe under concurrent requests, unlike in-process
    moto), for tests that write from several threads."""
    from evalsvc_tools.local.store import EmbeddedDynamoDB

    with EmbeddedDynamoDB(tmp_path / "store", port=0) as store:
        point_service_at(store.env, monkeypatch)
        yield store.tables
