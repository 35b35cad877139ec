"""Metrics sets: creation with validated definitions, listing, reading, latest."""

from __future__ import annotations

import pytest

from tests.integration.conftest import Tenant
from tests.lambda_support import invoke, load_event


def test_metrics_set_round_trip_through_the_handlers(event_key: str) -> None:
    status, created = invoke("specify_questions", load_event("specify_questions"))
    assert status == 200
    assert created["metrics_id"].startswith("m_")
    assert created["definitions"] == [
        "Is the answer polite?",
        "check:non_empty",
        "check:max_words:60",
    ]

    status, latest = invoke("get_question", load_event("get_question"))
    assert status == 200
    assert latest["metrics_id"] == created["metrics_id"]
    assert latest["metric_count"] == 3
    assert latest["system_prompt"] == ""
    assert latest["created_at"].endswith("Z")

    status, listing = invoke("list_questions", load_event("list_questions"))
    assert status == 200
    assert listing["total_count"] == 1
    assert listing["metrics"][created["metrics_id"]]["definitions"] == created["definitions"]


def test_latest_is_the_newest_set(acme: Tenant) -> None:
    first = acme.post("/specify_questions", {"metrics": ["Is it kind?"]}).json()["metrics_id"]
    second = acme.post("/specify_questions", {"metrics": ["Is it short?"]}).json()["metrics_id"]

    assert acme.get("/question/latest").json()["metrics_id"] == second
    assert acme.get(f"/question/{first}").json()["definitions"] == ["Is it kind?"]
    listing = acme.get("/list_questions").json()
    assert list(listing["metrics"]) == [first, second]
    assert listing["total_count"] == 2


def test_no_metrics_yet_is_404_saying_how_to_create_one(acme: Tenant) -> None:
    response = acme.get("/question/latest")
    assert response.status_code == 404
    assert "POST /specify_questions" in response.json()["error"]
    assert acme.get("/list_questions").json() == {"metrics": {}, "total_count": 0}


@pytest.mark.parametrize(
    ("body", "status", "message"),
    [
        ({"metrics": []}, 400, "metrics: List should have at least 1 item"),
        ({"metrics": ["q"] * 51}, 413, "metrics: List should have at most 50 items"),
        ({"metrics": ["x" * 2001]}, 413, "metrics[0]: String should have at most 2000 characters"),
        ({"metrics": [""]}, 400, "metrics[0]"),
        ({"metrics": ["   "]}, 400, "metrics[0] is empty"),
        ({"metrics": "Is it kind?"}, 400, "metrics: Input should be a valid list"),
        ({"metrics": [5]}, 400, "metrics[0]: Input should be a valid string"),
        ({}, 400, "metrics: Field required"),
        ({"metrics": ["ok?", "check:bogus"]}, 400, "metrics[1]: unknown check 'bogus'"),
        (
            {"metrics": ["check:max_chars:x"]},
            400,
            "metrics[0]: check:max_chars needs a whole number",
        ),
        ({"metrics": ["check:regex:("]}, 400, "metrics[0]: check:regex pattern is not valid"),
        (
            {"metrics": ["ok?", "check:regex:(a)\\1"]},
            400,
            "metrics[1]: check:regex pattern is not valid: invalid escape sequence: \\1 (patterns "
            "are matched by RE2: no backreferences or lookaround)",
        ),
        (
            {"metrics": ["ok?", "check:non_empty", 'check:json_schema:{"type": "text"}']},
            400,
            "metrics[2]: check:json_schema: schema.type: 'text' is not valid under any of the "
            "given schemas",
        ),
        (
            {"metrics": ['check:json_schema:{"items": {"$ref": "#/$defs/item"}}']},
            400,
            "metrics[0]: check:json_schema: $ref '#/$defs/item' does not resolve",
        ),
        (
            {"metrics": ['check:json_schema:{"properties": {"a": {"maxLength": -1}}}']},
            400,
            "metrics[0]: check:json_schema: schema.properties.a.maxLength: -1 is less than the "
            "minimum of 0",
        ),
    ],
)
def test_bad_definitions_are_refused_and_nothing_is_stored(
    acme: Tenant, body: object, status: int, message: str
) -> None:
    response = acme.post("/specify_questions", body)

    assert response.status_code == status, response.text
    assert response.json()["error"].startswith(message)
    assert acme.get("/list_questions").json()["total_count"] == 0


def test_other_tenants_metrics_do_not_exist(acme: Tenant, globex: Tenant) -> None:
    metrics_id = acme.post("/specify_questions", {"metrics": ["Is it kind?"]}).json()["metrics_id"]

    assert globex.get(f"/question/{metrics_id}").status_code == 404
    assert globex.get("/question/latest").status_code == 404
    assert globex.get("/list_questions").json()["total_count"] == 0


def test_bad_metrics_id_is_400(acme: Tenant) -> None:
    response = acme.get("/question/has space")
    assert response.status_code == 400
    assert response.json()["error"].startswith("metrics id 'has space' is not valid")
