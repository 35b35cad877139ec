"""The evaluation report's E12 lines as a browser sees them: a result with audit votes (and
hostile texts) made by the service's routes, loaded in headless Chromium with the network cut
off. What people would say is there as the anchored route says it, and the audited pairs a
±5-point interval needs as POST /plan says; the page asks for nothing, runs nothing, keeps its
CSP, and axe-core finds nothing serious."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from evalsvc.api.app import create_versioned_app
from evalsvc.api.routes import all_routers
from evalsvc.logic import api_keys
from evalsvc_tools.local.inprocess import moto_in_process
from evalsvc_tools.local.tables import create_tables
from fastapi.testclient import TestClient

from tests.browser import axe
from tests.browser.chromium import Browser
from tests.browser.report_checks import assert_loads_clean, caller
from tests.browser.test_report_pages import RAN
from tests.conftest import point_service_at
from tests.fake_judge import FakeJudge
from tests.integration.test_reports import IMG, QUESTION, SCRIPT, hostile_judge
from tests.integration.test_usage import judge_env

OUTPUTS = [f"please {k} {SCRIPT}" if k % 8 < 5 else f"no {k} {IMG}" for k in range(24)]


@pytest.fixture(scope="module")
def page() -> Iterator[dict[str, Any]]:
    """The report of a result whose first metric has 8 audited pairs, with what the JSON
    routes say of it."""
    with pytest.MonkeyPatch.context() as patch, moto_in_process():
        env = create_tables(boto3.client("dynamodb", region_name="us-east-1"), "browser")
        point_service_at(env, patch)
        judge = FakeJudge(hostile_judge)
        with judge.running(), TestClient(create_versioned_app(all_routers())) as client:
            point_service_at(judge_env(judge), patch)
            key, _ = api_keys.create_key("acme", f"ann {SCRIPT}", "ann@acme.test")
            call = caller(client, key)

            data = [
                {"id": f"p{k:02d}", "input": f"q {k}", "output": o} for k, o in enumerate(OUTPUTS)
            ]
            call("POST", "/data/seed/d", {"data": data})
            metrics = call(
                "POST", "/specify_questions", {"metrics": ["check:contains:please", QUESTION]}
            )
            body = {"seed_data_id": "d", "metrics_id": metrics.json()["metrics_id"]}
            results_id = call("POST", "/evaluate", body).json()["eval_results_id"]
            for k, vote in enumerate([1, 1, -1, 1, -1, -1, 1, -1]):
                body = {"pair_id": f"p{k:02d}", "metric_idx": 0, "vote": vote, "source": "audit"}
                body["comment"] = SCRIPT
                call("PUT", f"/vote_eval_pair/{results_id}", body)
            report = call("GET", f"/evaluation/{results_id}/report")
            plan = {"result_id": results_id, "metric_idx": 0, "half_width": 0.05}
            yield {
                "html": report.text,
                "headers": {"Content-Security-Policy": report.headers["content-security-policy"]},
                "anchored": call("GET", f"/evaluation/{results_id}/anchored?metric_idx=0").json(),
                "plan": call("POST", "/plan", plan).json(),
            }


def percent(share: float) -> str:
    return f"{100 * share:.1f}"


def test_the_report_says_what_people_would_say_as_the_routes_do_and_loads_clean(
    browser: Browser, page: dict[str, Any]
) -> None:
    loaded = browser.load(page["html"], headers=page["headers"])
    assert_loads_clean(loaded, [("svg.forest", 1), ("svg.histogram", 2)], RAN, SCRIPT)

    said = page["anchored"]
    assert loaded.texts("dd.anchored") == [
        f"People would say {percent(said['estimate'])} % meet ({percent(said['ci_low'])}\u2013"
        f"{percent(said['ci_high'])} %, 95 % interval), from 8 audited pairs and 16 judge "
        f"scores; the judge alone says {percent(said['judge_only']['estimate'])} %."
    ]
    plan = page["plan"]
    needed = loaded.evaluate(
        "[...document.querySelectorAll('dt')].filter(d => d.textContent === "
        "'Audited pairs needed').map(d => d.nextElementSibling.textContent)"
    )
    if plan["labels_needed"] is None:
        assert needed[0].startswith("±5 points cannot be reached with the judge's scores")
    else:
        assert needed == [
            f"±5 points would need {plan['labels_needed']:,} audited pairs "
            f"({plan['classical_labels_needed']:,} without the judge); there are 8 now."
        ]
    assert "default-src 'none'" in page["headers"]["Content-Security-Policy"]
    found = axe.blocking(loaded)
    assert not found, "\n".join(found)
