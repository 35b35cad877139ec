"""The review app and E13, in Chromium against the local server with a jury of three fake jurors
that disagree, two of them named with markup: the evaluation page says, for the metric the jury
judged, who judged, the judges' alpha and its reading and each judge's mean, as GET
/evaluation/{id} says them (and nothing for the check); the review page shows each judge's score
of the pair with the judge's score (at once on the lowest scores, only once voted on the blind
audit sample), as judge_scores says them. By keyboard; the names shown as text, nothing run,
no request leaving the origin, axe-core clean."""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pytest
from playwright.async_api import Page, Route

from tests.browser.app_data import Api
from tests.browser.chromium import Browser
from tests.browser.test_review_app import App
from tests.browser.test_review_app_anchored import number
from tests.e2e.conftest import LocalServer
from tests.jurors import jury_env, running_jurors

QUESTION = "Does the answer say please?"
CHECK = "check:contains:please"
# Markup in the judges' names, which would set window.__ran if it were parsed (no comma:
# EVALSVC_JUDGES lists them).
NAMES = (
    "openai:<img src=x onerror=\"window.__ran='img'\">",
    "openai:<script>window.__ran='script'</script>",
    "openai:juror-c",
)
RULES = {
    NAMES[0]: lambda output: 5 if "please" in output else 4,
    NAMES[1]: lambda output: 4 if "please" in output else 1,
    NAMES[2]: lambda output: 1 + len(output) % 5,
}
PRICES = {name: (Decimal("1"), Decimal("2")) for name in NAMES}
OUTPUTS = [f"Answer {k}: please wait." if k % 3 else f"Answer {k}: {'no ' * k}" for k in range(12)]


@pytest.fixture(scope="module")
def jury_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    with running_jurors(RULES) as fakes:
        server = LocalServer(
            tmp_path_factory.mktemp("review-app-jury"), extra_env=jury_env(fakes, PRICES)
        )
        server.start()
        try:
            api = Api(server.base_url)
            body = {"metrics": [QUESTION, CHECK], "judges": list(NAMES), "jury": "median"}
            metrics_id = api("POST", "/specify_questions", body)["metrics_id"]
            pairs = [
                {"id": f"p{k:02d}", "input": f"Question {k}?", "output": o}
                for k, o in enumerate(OUTPUTS)
            ]
            results_id = api.evaluate("jury", pairs, metrics_id)
            url = f"http://127.0.0.1:{server.port}/app/"
            yield {"url": url, "api": api, "results_id": results_id}
        finally:
            server.stop()


@pytest.fixture
def app(browser: Browser, jury_server: dict[str, Any]) -> Iterator[App]:
    page = browser.open(jury_server["url"])
    yield App(page)
    page.close()


def judge_scores_by_input(api: Api, results_id: str) -> dict[str, dict[str, float]]:
    """Each scored pair's judge_scores on metric 1, by the pair's input."""
    stored = api("GET", f"/evaluation/{results_id}?includeAllScores=true")
    return {
        f"Question {int(p['pair_id'][1:])}?": p["judge_scores"]
        for p in stored["all_scored_pairs"][0]
    }


def shown_scores(app: App) -> list[list[str]]:
    return list(
        app.page.evaluate(
            "[...document.querySelectorAll('dl.judge-scores dt')]"
            ".map(dt => [dt.textContent, dt.nextElementSibling.textContent])"
        )
    )


def test_the_evaluation_page_shows_the_jury_as_the_api_says_it(
    app: App, jury_server: dict[str, Any]
) -> None:
    api: Api = jury_server["api"]
    results_id = jury_server["results_id"]
    app.sign_in()
    app.wait_for("Evaluations")
    app.run(lambda page: page.evaluate(f"location.hash = '#/evaluation/{results_id}'"))
    app.wait_for("Judged by a jury of 3")

    result = api("GET", f"/evaluation/{results_id}")
    jury = result["score_juries"][0]
    assert result["score_juries"][1] is None
    assert app.page.count(".jury") == 1  # the check has none
    assert app.page.texts(".jury-who") == [
        f"Judged by a jury of 3: {', '.join(NAMES)} (median): each pair's score is the median "
        "of the judges' scores."
    ]
    alpha = jury["jury"]["alpha"]
    assert alpha is not None and alpha < 0.667
    assert app.page.texts(".jury-alpha") == [
        f"{number(alpha, 3)}: the judges disagree (below 0.667): the jury's score averages "
        "different readings of the metric; read the pairs where they differ, and make the "
        "metric's wording more precise before relying on it."
    ]
    rows = app.page.evaluate(
        "[...document.querySelectorAll('table.jury-judges tr')]"
        ".map(r => [...r.children].map(c => c.textContent))"
    )
    agreement = api("GET", f"/evaluation/{results_id}/agreement")["metrics"][0]
    # Per-judge AUC (another change) is shown only when the route gives it; no votes: none.
    assert rows[0] == ["Judge", "Mean score"]
    assert rows[1:4] == [[j["judge"], number(j["mean"], 2)] for j in jury["per_judge"]]
    assert rows[4] == ["The jury (median)", number(result["score_means"][0], 2)]
    assert not any(j.get("auc") is not None for j in agreement.get("per_judge") or [])
    app.axe_clean("an evaluation judged by a jury")
    assert app.page.count("main img, main script") == 0
    app.nothing_ran()
    app.own_origin_only()


def test_the_review_page_shows_each_judges_score_with_the_judges(
    app: App, jury_server: dict[str, Any]
) -> None:
    api: Api = jury_server["api"]
    results_id = jury_server["results_id"]
    expected = judge_scores_by_input(api, results_id)
    app.sign_in()
    app.wait_for("Evaluations")

    # Lowest scores: the judge's score is shown, and each judge's beside it.
    app.run(lambda page: page.evaluate(f"location.hash = '#/review/{results_id}/0?queue=lowest'"))
    app.wait_for_pair()
    app.wait_until("document.querySelector('dl.judge-scores')")
    shown_input = app.page.texts("[aria-label=Input] pre")[0]
    assert shown_scores(app) == [
        [name, f"{number(score, 2)} of 5"] for name, score in expected[shown_input].items()
    ]
    assert "(the median of 3 judges)" in app.text(".judge")
    assert "Each judge's score (a jury of 3)" in app.text(".judge")
    app.axe_clean("a lowest-scored pair with each judge's score")

    # The audit sample is blind: no judge's score before the vote, each one's after it.
    app.run(lambda page: page.evaluate(f"location.hash = '#/review/{results_id}/0'"))
    app.wait_for_pair()
    app.wait_for("Hidden until you vote.")
    assert app.page.count("dl.judge-scores") == 0
    assert not any(name in app.dom_text() for name in NAMES)
    shown_input = app.page.texts("[aria-label=Input] pre")[0]
    app.press("Shift+Equal")  # + : meets
    app.wait_until("document.querySelector('dl.judge-scores')")
    assert shown_scores(app) == [
        [name, f"{number(score, 2)} of 5"] for name, score in expected[shown_input].items()
    ]
    app.axe_clean("an audited pair with each judge's score")
    # Next pair, by keyboard: hidden again until voted.
    app.press("n")
    app.wait_for("Hidden until you vote.")
    assert app.page.count("dl.judge-scores") == 0
    assert app.page.count("main img, main script") == 0
    app.nothing_ran()
    app.own_origin_only()


def test_each_judges_auc_is_shown_when_the_agreement_route_gives_it(
    app: App, jury_server: dict[str, Any]
) -> None:
    """per_judge on the agreement route's metrics (another change adds it) is read defensively:
    a judge's AUC with its interval, without one, or a dash when null; nothing without the field
    (the first test)."""
    results_id = jury_server["results_id"]
    per_judge = [
        {"judge": NAMES[0], "auc": 0.75, "auc_ci_low": 0.5, "auc_ci_high": 0.9},
        {"judge": NAMES[1], "auc": None, "auc_ci_low": None, "auc_ci_high": None},
        {"judge": NAMES[2], "auc": 0.625, "auc_ci_low": None, "auc_ci_high": None},
    ]

    async def with_per_judge(page: Page) -> None:
        async def fulfil(route: Route) -> None:
            response = await route.fetch()
            body = await response.json()
            body["metrics"][0]["per_judge"] = per_judge
            await route.fulfill(response=response, json=body)

        await page.route(f"**/v1/evaluation/{results_id}/agreement", fulfil)

    app.run(with_per_judge)
    app.sign_in()
    app.wait_for("Evaluations")
    app.run(lambda page: page.evaluate(f"location.hash = '#/evaluation/{results_id}'"))
    app.wait_for("Judged by a jury of 3")
    rows = app.page.evaluate(
        "[...document.querySelectorAll('table.jury-judges tr')]"
        ".map(r => [...r.children].map(c => c.textContent))"
    )
    assert rows[0] == ["Judge", "Mean score", "AUC with people"]
    assert [row[0] for row in rows[1:4]] == list(NAMES)
    assert [row[2] for row in rows[1:5]] == ["0.75 (95% 0.5 \u2013 0.9)", "\u2013", "0.63", ""]
    app.axe_clean("a jury with each judge's AUC")
    app.nothing_ran()
    app.own_origin_only()
