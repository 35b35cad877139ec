"""The review app's evaluation page, E12, in Chromium against the local server: per metric, what
people would say of every pair (GET /evaluation/{id}/anchored) as the API says it, or how many
audited pairs there are when too few; a half-width chosen and planned by keyboard (POST /plan),
its answer, and a 409 shown as the API words it; axe-core clean, no request leaving the
origin, nothing run."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.browser.app_data import Api, served
from tests.browser.chromium import Browser
from tests.browser.test_review_app import App

QUESTION = "Is the answer helpful? <b onmouseover=\"window.__ran = 'metric'\">bold</b>"
CHECK = "check:contains:please"
# 24 pairs, 15 with "please" (the check scores them 5, the others 1); the fake judge scores by
# length.
OUTPUTS = [
    f"Answer {k}: please restart the router." if k % 8 < 5 else f"Answer {k}: restart it."
    for k in range(24)
]


@pytest.fixture(scope="module")
def anchored_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    with served(tmp_path_factory.mktemp("review-app-anchored")) as run:
        metrics_id = run.api("POST", "/specify_questions", {"metrics": [CHECK, QUESTION]})[
            "metrics_id"
        ]
        pairs = [
            {"id": f"p{k:02d}", "input": f"Wi-Fi {k}?", "output": o} for k, o in enumerate(OUTPUTS)
        ]
        results_id = run.api.evaluate("help-anchored", pairs, metrics_id)
        # Metric 1 (the check): 8 audited pairs, people mostly agreeing with it; metric 2: one
        for k, vote in enumerate([1, 1, -1, 1, -1, -1, 1, -1]):
            body = {"pair_id": f"p{k:02d}", "metric_idx": 0, "vote": vote, "source": "audit"}
            run.api("PUT", f"/vote_eval_pair/{results_id}", body)
        body = {"pair_id": "p03", "metric_idx": 1, "vote": 1, "source": "audit"}
        run.api("PUT", f"/vote_eval_pair/{results_id}", body)
        yield {"url": run.app_url, "api": run.api, "results_id": results_id}


@pytest.fixture
def app(browser: Browser, anchored_server: dict[str, Any]) -> Iterator[App]:
    page = browser.open(anchored_server["url"])
    yield App(page)
    page.close()


def number(value: float, digits: int) -> str:
    """As the app writes a figure (toLocaleString, at most `digits` decimals)."""
    text = f"{value:,.{digits}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def percent(share: float) -> str:
    return f"{number(100 * share, 1)} %"


def test_each_metric_says_what_people_would_say_and_plans_a_width_by_keyboard(
    app: App, anchored_server: dict[str, Any]
) -> None:
    api: Api = anchored_server["api"]
    results_id = anchored_server["results_id"]
    app.sign_in()
    app.wait_for("Evaluations")
    app.run(lambda page: page.evaluate(f"location.hash = '#/evaluation/{results_id}'"))
    app.wait_for("People would say")
    app.wait_for("1 audited pair so far")

    said = api("GET", f"/evaluation/{results_id}/anchored?metric_idx=0")
    expected = (
        f"People would say {percent(said['estimate'])} meet ({number(100 * said['ci_low'], 1)}"
        f"\u2013{number(100 * said['ci_high'], 1)} %, 95 % interval), from 8 audited pairs and "
        f"16 judge scores; the judge alone says {percent(said['judge_only']['estimate'])}."
    )
    blocks = app.page.texts(".people")
    assert len(blocks) == 2
    assert expected in blocks[0]
    one = api("GET", f"/evaluation/{results_id}/anchored?metric_idx=1")
    assert (
        "1 audited pair so far: at least 2 are needed to say what people would say of every "
        f"pair. The judge alone says {percent(one['judge_only']['estimate'])}."
    ) in blocks[1]
    app.axe_clean("an evaluation with what people would say")

    # Keyboard: Tab to metric 1's half-width, choose ±10 points, Tab to its button, Enter
    app.tab_to("±2 points")  # the select's text: its options
    assert app.page.evaluate("document.activeElement.id.startsWith('half-width')")
    app.run(lambda page: page.get_by_label("Interval half-width for Metric 1").select_option("10"))
    app.tab_to("Plan audit labels for Metric 1")
    app.press("Enter")
    app.wait_until("document.querySelector('.plan-answer')?.textContent.includes('±10 points')")
    plan = api("POST", "/plan", {"result_id": results_id, "metric_idx": 0, "half_width": 0.1})
    assert [r["half_width"] for r in app.api_requests("POST", "/plan")] == [0.1]
    answer = app.page.texts(".plan-answer")[0]
    if plan["labels_needed"] is None:
        assert answer.startswith("±10 points cannot be reached with the judge's scores")
    else:
        assert answer == (
            f"±10 points would need {number(plan['labels_needed'], 0)} audited pairs "
            f"({number(plan['classical_labels_needed'], 0)} without the judge); there are 8 now."
        )
    app.axe_clean("a planned width")

    # Metric 2 has one audited pair: the service's 409 is shown in its words
    app.tab_to("Plan audit labels for Metric 2")
    app.press("Enter")
    app.wait_until("document.querySelectorAll('.plan-answer')[1]?.textContent.includes('409')")
    refused = app.page.texts(".plan-answer")[1]
    assert refused.startswith(f"metric 1 of result '{results_id}' has 1 pair with audit votes")
    assert refused.endswith("(HTTP 409)")
    assert app.page.count(".plan-answer.problem") == 1
    app.axe_clean("a plan refused")
    assert app.page.count("main b, main img, main script") == 0
    app.nothing_ran()
    app.own_origin_only(allowed_console=("status of 409",))
