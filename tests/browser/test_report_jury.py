"""The evaluation report's E13 section as a browser sees it: a result judged by a jury of three
fake jurors that disagree, two of them with hostile names (markup that would run if it were
parsed), made by the service's routes and loaded in headless Chromium with the network cut off.
The section says who judged, their alpha and its reading, and each judge's mean and cost as GET
/evaluation/{id} says them; the names are shown as text, nothing runs, nothing is asked for,
the CSP holds and axe-core finds nothing serious."""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import boto3
import pytest
from evalsvc.api.app import create_versioned_app
from evalsvc.api.routes import all_routers
from evalsvc.logic import api_keys
from evalsvc_tools.local.inprocess import moto_in_process
from evalsvc_tools.local.tables import create_tables
from fastapi.testclient import TestClient

from tests.browser.chromium import Browser
from tests.browser.report_checks import assert_loads_clean, caller
from tests.browser.test_report_pages import RAN
from tests.conftest import point_service_at
from tests.integration.test_reports import IMG, SCRIPT
from tests.jurors import jury_env, running_jurors

QUESTION = "Does the output say please?"
# Judges whose names are markup: shown as text, never run (no comma: EVALSVC_JUDGES lists them).
NAMES = (f"openai:{IMG}", f"openai:{SCRIPT}", "openai:juror-c")
RULES = {
    NAMES[0]: lambda output: 5 if "please" in output else 4,
    NAMES[1]: lambda output: 4 if "please" in output else 1,
    NAMES[2]: lambda output: 1 + len(output) % 5,
}
PRICES = {
    NAMES[0]: (Decimal("1"), Decimal("2")),
    NAMES[1]: (Decimal("3"), Decimal("5")),
    NAMES[2]: (Decimal("0.5"), Decimal("0.5")),
}
OUTPUTS = [f"please {k}" if k % 3 else f"no, answer {k} {'!' * k}" for k in range(12)]


def money(cost: float) -> str:
    """As the report writes a cost (filters.money) of less than a dollar."""
    return "$" + f"{cost:.6f}".rstrip("0").rstrip(".")


@pytest.fixture(scope="module")
def page() -> Iterator[dict[str, Any]]:
    """The report of a result judged by the jury, and GET /evaluation/{id} of it."""
    with (
        pytest.MonkeyPatch.context() as patch,
        moto_in_process(),
        running_jurors(RULES) as fakes,
    ):
        env = create_tables(boto3.client("dynamodb", region_name="us-east-1"), "browser")
        point_service_at(env, patch)
        point_service_at(jury_env(fakes, PRICES), patch)
        with TestClient(create_versioned_app(all_routers())) as client:
            key, _ = api_keys.create_key("acme", "ann", "ann@acme.test")
            call = caller(client, key)

            data = [
                {"id": f"p{k:02d}", "input": f"q {k}", "output": o} for k, o in enumerate(OUTPUTS)
            ]
            call("POST", "/data/seed/d", {"data": data})
            body = {"metrics": [QUESTION, "check:contains:please"], "judges": list(NAMES)}
            metrics = call("POST", "/specify_questions", body).json()
            body = {"seed_data_id": "d", "metrics_id": metrics["metrics_id"]}
            results_id = call("POST", "/evaluate", body).json()["eval_results_id"]
            report = call("GET", f"/evaluation/{results_id}/report")
            yield {
                "html": report.text,
                "headers": {"Content-Security-Policy": report.headers["content-security-policy"]},
                "result": call("GET", f"/evaluation/{results_id}").json(),
            }


def test_the_report_shows_the_jury_as_the_api_says_it_and_loads_clean(
    browser: Browser, page: dict[str, Any]
) -> None:
    loaded = browser.load(page["html"], headers=page["headers"])
    # Two histograms: the question's and the check's.
    assert_loads_clean(loaded, [("svg.forest", 1), ("svg.histogram", 2)], RAN, SCRIPT)
    assert IMG in loaded.inner_text()
    assert loaded.count("section.jury") == 1  # the check has no jury
    result = page["result"]
    jury = result["score_juries"][0]
    assert result["score_juries"][1] is None

    assert loaded.texts("p.jury-who") == [
        f"Judged by a jury of 3: {', '.join(NAMES)} (mean): each pair's score is the mean of "
        "the judges' scores."
    ]
    alpha = jury["jury"]["alpha"]
    assert alpha is not None and alpha < 0.667  # the jurors were made to disagree
    said = loaded.texts("p.jury-alpha")[0]
    assert said.startswith(f"Agreement between the judges: \u03b1 = {alpha:.3f} ")
    assert "the judges disagree (below 0.667)" in said

    rows = loaded.evaluate(
        "[...document.querySelectorAll('table.jury-judges tbody tr')]"
        ".map(r => [...r.children].map(c => c.textContent))"
    )
    costs = {part["model"]: part["cost_usd"] for part in result["usage"]["by_model"]}
    assert rows[:3] == [
        [j["judge"], f"{j['mean']:.2f}", money(costs[j["judge"]])] for j in jury["per_judge"]
    ]
    assert [j["judge"] for j in jury["per_judge"]] == list(NAMES)
    assert rows[3] == ["The jury (mean)", f"{result['score_means'][0]:.2f}", ""]
    # What was run names the jury.
    assert f"a jury of 3: {', '.join(NAMES)} (mean of their scores)" in loaded.inner_text()
    # The hostile names are text: no element came of them.
    assert loaded.count("body img, body script") == 0
