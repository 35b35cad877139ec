"""schemathesis against the local server over HTTP, on 127.0.0.1: the committed OpenAPI
document, the same checks as the in-process fuzz (tests/fuzz), fewer examples per operation."""

from __future__ import annotations

import os

import schemathesis
from hypothesis import HealthCheck, settings

from tests.conftest import ROOT
from tests.e2e.conftest import DEV_KEY, LocalServer

EXAMPLES = int(os.environ.get("FUZZ_HTTP_EXAMPLES", "15"))
schema = schemathesis.openapi.from_path(ROOT / "docs" / "openapi.json")


@schema.auth()
class DevKey:
    def get(self, case: schemathesis.Case, context: object) -> str:
        return DEV_KEY

    def set(self, case: schemathesis.Case, data: str, context: object) -> None:
        case.headers = {**(case.headers or {}), "Authorization": data}


@schema.parametrize()
@settings(
    max_examples=EXAMPLES, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck)
)
def test_local_server_conforms(case: schemathesis.Case, server: LocalServer) -> None:
    case.call_and_validate(base_url=server.base_url)
