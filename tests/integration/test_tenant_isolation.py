"""Every route, called by a second tenant with the first tenant's ids: 404 (or its own empty
view), and the first tenant's data unchanged. A revoked key: 401 on every route."""

from __future__ import annotations

from typing import Any

import pytest
from evalsvc.api.app import create_app
from evalsvc.api.routes import all_routers
from evalsvc.models.pairwise import PairwiseRun, Verdict

from tests.integration.conftest import Tenant, ok
from tests.integration.test_bad_input_catalogue import snapshot

RESULT = "{result}"
RESULT2 = "{result2}"
METRICS = "{metrics}"
PAIRWISE = "{pairwise}"
MONITOR = "{monitor}"
PAIRWISE_BODY = {"result_ids": [RESULT, RESULT2], "question": "Which is kinder?"}

# (method, path, body, status for the other tenant)
OTHER_TENANT: list[tuple[str, str, Any, int]] = [
    ("GET", "/data/seed/ds", None, 404),
    ("GET", "/data/seed/latest", None, 404),
    ("GET", "/data/seed/ds/versions", None, 404),
    ("GET", "/data/seed/latest/versions", None, 404),
    ("POST", "/data/seed/ds/pair", {"input": "i", "output": "o"}, 404),
    ("GET", "/data/synthetic/latest", None, 404),
    ("GET", f"/question/{METRICS}", None, 404),
    ("GET", "/question/latest", None, 404),
    ("POST", "/evaluate", {"seed_data_id": "ds", "metrics_id": METRICS}, 404),
    ("POST", "/evaluate/estimate", {"seed_data_id": "ds", "metrics_id": METRICS}, 404),
    ("GET", f"/evaluation/{RESULT}", None, 404),
    ("GET", f"/evaluation/{RESULT}/pairs", None, 404),
    ("POST", f"/evaluation/{RESULT}/rerun", None, 404),
    ("POST", f"/evaluation/{RESULT}/rerun", {"max_cost_usd": 1}, 404),
    ("PUT", f"/vote_eval_pair/{RESULT}", {"pair_id": "p0", "metric_idx": 0, "vote": 1}, 404),
    ("POST", "/compare", {"baseline_id": RESULT, "candidate_id": RESULT}, 404),
    ("POST", "/plan", {"baseline_id": RESULT, "effect": 0.5}, 404),
    ("POST", "/plan", {"baseline_id": RESULT, "candidate_id": RESULT, "effect": 0.5}, 404),
    ("GET", f"/evaluation/{RESULT}/agreement", None, 404),
    ("GET", f"/evaluation/{RESULT}/anchored?metric_idx=0", None, 404),
    ("POST", "/plan", {"result_id": RESULT, "metric_idx": 0, "half_width": 0.05}, 404),
    ("GET", f"/evaluation/{RESULT}/audit_sample?metric_idx=0", None, 404),
    ("GET", f"/evaluation/{RESULT}/report", None, 404),
    ("GET", f"/compare/report?baseline_id={RESULT}&candidate_id={RESULT}", None, 404),
    ("GET", f"/question/{METRICS}/agreement", None, 404),
    ("GET", "/question/latest/agreement", None, 404),
    (
        "POST",
        "/improve_prompt",
        {
            "seed_data_id": "ds",
            "prompt_comparison_results": {
                "candidates": [{"prompt": "p", "eval_results_id": RESULT}]
            },
        },
        404,
    ),
    ("POST", "/augment", {"seed_data_id": "ds"}, 404),
    ("POST", "/augment", {"eval_results_id": RESULT}, 404),
    ("POST", "/pairwise", PAIRWISE_BODY, 404),
    ("POST", "/pairwise/estimate", PAIRWISE_BODY, 404),
    ("GET", f"/pairwise/{PAIRWISE}", None, 404),
    ("GET", f"/pairwise/{PAIRWISE}/report", None, 404),
    (
        "PUT",
        f"/pairwise/{PAIRWISE}/vote",
        {"pair_id": "p0", "a": RESULT, "b": RESULT2, "winner": "a"},
        404,
    ),
    (
        "POST",
        "/monitors",
        {"name": "n", "seed_data_id": "ds", "metrics_id": METRICS, "schedule": "rate(1 hour)"},
        404,
    ),
    ("GET", f"/monitors/{MONITOR}", None, 404),
    ("DELETE", f"/monitors/{MONITOR}", None, 404),
    ("POST", f"/monitors/{MONITOR}/run", None, 404),
    ("GET", f"/monitors/{MONITOR}/history", None, 404),
    ("GET", f"/monitors/{MONITOR}/report", None, 404),
]


@pytest.fixture
def owned(acme: Tenant) -> dict[str, str]:
    ok(
        acme.post(
            "/data/seed/ds",
            {"data": [{"id": "p0", "input": "i", "output": "o"}], "system_prompt": "S"},
        )
    )
    metrics_id = acme.post("/specify_questions", {"metrics": ["check:non_empty"]}).json()[
        "metrics_id"
    ]
    # (the second first: the newest, which the lists test looks for, is `result`)
    result2 = acme.post("/evaluate", {"seed_data_id": "ds"}).json()["eval_results_id"]
    result = acme.post("/evaluate", {"seed_data_id": "ds"}).json()["eval_results_id"]
    ok(acme.post("/augment", {"seed_data_id": "ds"}))
    # A pairwise run of acme's (stored as one judged inside its request is: this test's service
    # has no judge to make one)
    from evalsvc.storage import pairwise as pairwise_store

    run = PairwiseRun(
        tenant="acme",
        pairwise_id="pw_acme",
        created_ms=1,
        question="Which is kinder?",
        result_ids=[result, result2],
        both_orders=True,
        alpha=0.05,
        max_pairs=500,
        pairs_used=1,
        counts={"outcomes": {"0|1|tie": 1}, "orders": {}},
    )
    pairwise_store.put_complete(run, [Verdict("p0", 0, 1, "tie", None, None)])
    monitor = {"name": "n", "seed_data_id": "ds", "metrics_id": metrics_id}
    created = acme.post("/monitors", monitor | {"schedule": "rate(1 hour)"})
    assert created.status_code == 201, created.text
    return {
        RESULT: result,
        RESULT2: result2,
        METRICS: metrics_id,
        PAIRWISE: "pw_acme",
        MONITOR: created.json()["monitor_id"],
    }


@pytest.mark.parametrize(("method", "path", "body", "status"), OTHER_TENANT)
def test_another_tenant_sees_nothing_and_changes_nothing(
    acme: Tenant,
    globex: Tenant,
    owned: dict[str, str],
    tables: dict[str, str],
    method: str,
    path: str,
    body: Any,
    status: int,
) -> None:
    if body is not None and path == "/augment" and "seed_data_id" not in body:
        ok(globex.post("/data/seed/mine", {"data": [{"input": "i", "output": "o"}]}))
    before = snapshot(tables)
    for placeholder, value in owned.items():
        path = path.replace(placeholder, value)
        if body is not None:
            body = _replace(body, placeholder, value)

    response = globex.http.request(method, "/v1" + path, headers=globex.headers, json=body)

    assert response.status_code == status, response.text
    after = snapshot(tables)
    assert after == before


def _replace(value: Any, placeholder: str, real: str) -> Any:
    if isinstance(value, str):
        return value.replace(placeholder, real)
    if isinstance(value, dict):
        return {k: _replace(v, placeholder, real) for k, v in value.items()}
    if isinstance(value, list):
        return [_replace(v, placeholder, real) for v in value]
    return value


def test_another_tenants_lists_are_its_own(
    acme: Tenant, globex: Tenant, owned: dict[str, str]
) -> None:
    assert globex.get("/list_questions").json() == {"metrics": {}, "total_count": 0}
    empty = {"evaluations": [], "next_cursor": None}
    assert globex.get("/evaluations").json() == empty
    assert globex.get("/evaluations?seed_data_id=ds").json() == empty
    assert globex.get("/monitors").json() == {"monitors": [], "next_cursor": None}
    assert len(acme.get("/monitors").json()["monitors"]) == 1
    # acme's own position in its list, as a cursor: nothing of acme's either
    created = ok(acme.get(f"/evaluation/{owned[RESULT]}")).json()["created_at"]
    assert acme.get("/evaluations").json()["evaluations"][0]["created_at"] == created
    from evalsvc.storage import results as results_store

    stored = results_store.get("acme", owned[RESULT])
    assert stored is not None
    cursor = f"{stored.created_ms + 1}.{owned[RESULT]}"
    assert globex.get(f"/evaluations?cursor={cursor}").json() == empty
    assert ok(acme.get(f"/evaluations?cursor={cursor}")).json()["evaluations"] != []


def every_route() -> list[tuple[str, str]]:
    paths = create_app(all_routers(), docs=True).openapi()["paths"]
    return sorted(
        (method.upper(), path) for path, operations in paths.items() for method in operations
    )


# Routes that take no id of another tenant: a second tenant only ever writes or lists its own.
OWN_VIEW_ONLY = {
    ("POST", "/data/seed"),
    ("POST", "/data/seed/{id}"),
    ("PUT", "/data/seed/{id}"),
    ("POST", "/data/seed/pair"),
    # A trace export names the caller's own dataset: the same id is another tenant's apart
    # (tests/integration/test_otlp_route.py: tenants are apart).
    ("POST", "/otlp/v1/traces"),
    ("POST", "/specify_questions"),
    ("POST", "/questions"),
    ("GET", "/list_questions"),
    ("GET", "/evaluations"),
    ("GET", "/usage"),
    ("GET", "/monitors"),
}
ROUTE_OF = {
    "/data/seed/ds": "/data/seed/{id}",
    "/data/seed/latest": "/data/seed/{id}",
    "/data/seed/ds/pair": "/data/seed/{id}/pair",
    "/data/seed/ds/versions": "/data/seed/{id}/versions",
    "/data/seed/latest/versions": "/data/seed/{id}/versions",
    "/data/synthetic/latest": "/data/synthetic/{id}",
    f"/question/{METRICS}": "/question/{id}",
    "/question/latest": "/question/{id}",
    f"/evaluation/{RESULT}": "/evaluation/{id}",
    f"/evaluation/{RESULT}/pairs": "/evaluation/{id}/pairs",
    f"/evaluation/{RESULT}/rerun": "/evaluation/{id}/rerun",
    f"/vote_eval_pair/{RESULT}": "/vote_eval_pair/{id}",
    f"/evaluation/{RESULT}/agreement": "/evaluation/{id}/agreement",
    f"/evaluation/{RESULT}/anchored?metric_idx=0": "/evaluation/{id}/anchored",
    f"/evaluation/{RESULT}/audit_sample?metric_idx=0": "/evaluation/{id}/audit_sample",
    f"/evaluation/{RESULT}/report": "/evaluation/{id}/report",
    f"/compare/report?baseline_id={RESULT}&candidate_id={RESULT}": "/compare/report",
    f"/question/{METRICS}/agreement": "/question/{id}/agreement",
    "/question/latest/agreement": "/question/{id}/agreement",
    f"/pairwise/{PAIRWISE}": "/pairwise/{id}",
    f"/pairwise/{PAIRWISE}/report": "/pairwise/{id}/report",
    f"/pairwise/{PAIRWISE}/vote": "/pairwise/{id}/vote",
    f"/monitors/{MONITOR}": "/monitors/{id}",
    f"/monitors/{MONITOR}/run": "/monitors/{id}/run",
    f"/monitors/{MONITOR}/history": "/monitors/{id}/history",
    f"/monitors/{MONITOR}/report": "/monitors/{id}/report",
}


def test_the_lists_cover_every_route() -> None:
    covered = {(method, ROUTE_OF.get(path, path)) for method, path, _, _ in OTHER_TENANT}
    assert set(every_route()) == covered | OWN_VIEW_ONLY


@pytest.mark.parametrize(("method", "path"), every_route())
def test_a_revoked_key_is_401_on_every_route(acme: Tenant, method: str, path: str) -> None:
    from evalsvc.logic import api_keys

    api_keys.revoke_key(acme.key)

    response = acme.http.request(
        method, "/v1" + path.replace("{id}", "x"), headers=acme.headers, json={}
    )

    assert response.status_code == 401
    assert response.json() == {"error": "invalid or revoked API key"}
