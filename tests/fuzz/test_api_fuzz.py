"""schemathesis against the committed OpenAPI document, in-process (ASGI): every operation with
generated valid and invalid requests and a valid key. No 5xx, no response that breaks its own
schema, no undocumented status, no body accepted that breaks the request schema. A fixed seed
keeps CI repeatable (`make fuzz` runs longer and randomised)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator

import pytest
import schemathesis
from evalsvc.api.app import create_versioned_app
from evalsvc.api.routes import all_routers
from evalsvc.logic import api_keys
from hypothesis import HealthCheck, settings

from tests.conftest import ROOT

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "80"))
MINIMUM_REQUESTS = int(os.environ.get("FUZZ_MINIMUM_REQUESTS", "1000"))
RANDOMISED = os.environ.get("FUZZ_RANDOM") == "1"

app = create_versioned_app(all_routers())
schema = schemathesis.openapi.from_asgi("/v1/openapi.json", app)
sent = {"requests": 0}
current = {"key": ""}
# The operations fuzzed in this process: with pytest-xdist each process fuzzes a share of them,
# and is held to that share of MINIMUM_REQUESTS.
fuzzed: set[str] = set()
OPERATIONS = sum(
    len(operations)
    for operations in json.loads((ROOT / "docs" / "openapi.json").read_text())["paths"].values()
)


@schemathesis.serializer("application/x-protobuf")
def protobuf_bytes(context: object, value: object) -> bytes:
    """POST /otlp/v1/traces's protobuf body: the generated binary as it is (any other value as
    its text), sent as bytes that are rarely an export."""
    if isinstance(value, bytes):
        return value
    return str(value).encode("utf-8", "surrogatepass")


@schema.auth()
class ApiKey:
    """The fixture's valid key, applied wherever schemathesis wants a request authenticated
    (its auth checks then try the same request without it, expecting 401)."""

    def get(self, case: schemathesis.Case, context: object) -> str:
        return current["key"]

    def set(self, case: schemathesis.Case, data: str, context: object) -> None:
        case.headers = {**(case.headers or {}), "Authorization": data}


@pytest.fixture(scope="module", autouse=True)
def enough_requests() -> Iterator[None]:
    yield
    wanted = MINIMUM_REQUESTS * len(fuzzed) / OPERATIONS
    assert sent["requests"] >= wanted, (
        f"only {sent['requests']} requests were fuzzed for {len(fuzzed)} operations"
    )


@pytest.fixture
def key(tables: dict[str, str]) -> str:
    key, _ = api_keys.create_key("fuzz", "fuzzer", "fuzz@example.test")
    current["key"] = key
    return key


@schema.parametrize()
@settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=not RANDOMISED,
    suppress_health_check=list(HealthCheck),
)
def test_api_conforms(case: schemathesis.Case, key: str) -> None:
    sent["requests"] += 1
    fuzzed.add(case.operation.label)
    case.call_and_validate()
