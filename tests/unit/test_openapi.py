from __future__ import annotations

from evalsvc.api.openapi import openapi_document, render

from tests.conftest import ROOT


def test_committed_openapi_document_matches_the_app() -> None:
    committed = (ROOT / "docs" / "openapi.json").read_text()
    assert committed == render(), "docs/openapi.json is stale: run `make openapi` and commit it"


def test_every_operation_documents_its_errors_and_the_key() -> None:
    document = openapi_document()
    assert "APIKeyHeader" in document["components"]["securitySchemes"]
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            assert "401" in operation["responses"], (method, path)
            assert operation["security"] == [{"APIKeyHeader": []}], (method, path)
