"""E13: juries of judges, against three fake OpenAI-compatible jurors that disagree, each its
own server with its own price: the jury's scores (mean and median), each juror's score, the
reasons, alpha and each juror's mean against independent oracles, usage and cost by juror, the
judge cache per juror, one juror failing, structured output negotiated per juror, and the
queued path giving the figures of the inline one."""

from __future__ import annotations

import json
import statistics
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import krippendorff
import numpy as np
import pytest

from tests.conftest import point_service_at
from tests.fake_judge import FakeJudge
from tests.integration.conftest import Tenant, ok
from tests.jurors import jury_env, output_of, running_jurors
from tests.work_queue import Work

QUESTION = "Does the output say please?"
NAMES = ("openai:juror-a", "openai:juror-b", "openai:juror-c")
# USD per million tokens (input, output) of each juror: each its own.
PRICES = {
    "openai:juror-a": (Decimal("1"), Decimal("2")),
    "openai:juror-b": (Decimal("3"), Decimal("5")),
    "openai:juror-c": (Decimal("0.5"), Decimal("0.5")),
}
OUTPUTS = [
    "please answer 0",
    "no",
    "please, a longer answer here",
    "fine then, thanks",
    "please",
    "nope nope nope nope",
]


def lenient(output: str) -> int:
    return 5 if "please" in output else 4


def strict(output: str) -> int:
    return 4 if "please" in output else 1


def by_length(output: str) -> int:
    return 1 + len(output) % 5


JURORS = {"openai:juror-a": lenient, "openai:juror-b": strict, "openai:juror-c": by_length}


@pytest.fixture
def jurors(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, FakeJudge]]:
    """Three fake jurors, each on its own server, priced; EVALSVC_LLM is the first."""
    with running_jurors(JURORS) as fakes:
        point_service_at(jury_env(fakes, PRICES), monkeypatch)
        yield fakes


def seed(tenant: Tenant, judges: list[str] | None = None, jury: str | None = None) -> str:
    data = [{"id": f"p{k}", "input": f"q{k}", "output": out} for k, out in enumerate(OUTPUTS)]
    ok(tenant.post("/data/seed/ds", {"data": data}))
    body: dict[str, Any] = {"metrics": [QUESTION, "check:non_empty"]}
    if judges is not None:
        body["judges"] = judges
    if jury is not None:
        body["jury"] = jury
    created = ok(tenant.post("/specify_questions", body)).json()
    return str(created["metrics_id"])


def evaluated(tenant: Tenant, metrics_id: str, **extra: Any) -> tuple[Any, Any]:
    """POST /evaluate's answer, and GET /evaluation/{id} with every scored pair."""
    body = {"seed_data_id": "ds", "metrics_id": metrics_id, **extra}
    answer = ok(tenant.post("/evaluate", body)).json()
    stored = ok(
        tenant.get(f"/evaluation/{answer['eval_results_id']}", params={"includeAllScores": "true"})
    ).json()
    return answer, stored


def krippendorff_interval(rows: list[list[float]]) -> float:
    """The oracle: the krippendorff package, judges as coders, pairs as units."""
    data = np.array(rows, dtype=float).T
    return float(krippendorff.alpha(reliability_data=data, level_of_measurement="interval"))


def expected_scores(names: list[str]) -> list[list[int]]:
    return [[JURORS[name](out) for name in names] for out in OUTPUTS]


def test_a_jury_scores_each_pair_by_its_judges_mean(
    acme: Tenant, jurors: dict[str, FakeJudge]
) -> None:
    metrics_id = seed(acme, list(NAMES))
    shown = ok(acme.get(f"/question/{metrics_id}")).json()
    assert shown["judges"] == list(NAMES) and shown["jury"] == "mean"

    answer, stored = evaluated(acme, metrics_id)

    rows = expected_scores(list(NAMES))
    by_pair = {p["pair_id"]: p for p in stored["all_scored_pairs"][0]}
    for k, scores in enumerate(rows):
        entry = by_pair[f"p{k}"]
        assert entry["judge_scores"] == dict(zip(NAMES, map(float, scores), strict=True))
        mean = sum(scores) / 3
        assert entry["score"] == pytest.approx(mean, abs=1e-12)
        nearest = min(range(3), key=lambda r: (abs(scores[r] - mean), r))
        assert entry["reason"] == f"{NAMES[nearest]} gives {scores[nearest]}."
    # The check metric has no jury.
    assert all("judge_scores" not in p for p in stored["all_scored_pairs"][1])
    assert stored["score_means"][0] == pytest.approx(
        statistics.fmean(sum(r) / 3 for r in rows), abs=1e-9
    )

    jury = stored["score_juries"][0]
    assert stored["score_juries"][1] is None
    assert jury["jury"]["judges"] == list(NAMES) and jury["jury"]["aggregate"] == "mean"
    assert jury["jury"]["alpha"] == pytest.approx(krippendorff_interval(rows), abs=1e-9)
    assert jury["per_judge"] == [
        {"judge": name, "mean": pytest.approx(statistics.fmean(r[j] for r in rows), abs=1e-12)}
        for j, name in enumerate(NAMES)
    ]
    # POST /evaluate's answer carries the same figures.
    assert answer["scores"][0]["jury"] == jury["jury"]
    assert answer["scores"][0]["per_judge"] == jury["per_judge"]
    assert answer["scores"][1]["jury"] is None
    # Every juror was asked about every pair once, each on its own server.
    for name, fake in jurors.items():
        assert sorted(output_of(r) for r in fake.requests) == sorted(OUTPUTS), name


def test_a_median_jury_takes_the_middle_score(acme: Tenant, jurors: dict[str, FakeJudge]) -> None:
    metrics_id = seed(acme, list(NAMES), "median")
    _, stored = evaluated(acme, metrics_id)

    rows = expected_scores(list(NAMES))
    by_pair = {p["pair_id"]: p for p in stored["all_scored_pairs"][0]}
    for k, scores in enumerate(rows):
        median = statistics.median(scores)
        assert by_pair[f"p{k}"]["score"] == median
        nearest = min(range(3), key=lambda r: (abs(scores[r] - median), r))
        assert by_pair[f"p{k}"]["reason"] == f"{NAMES[nearest]} gives {scores[nearest]}."
    assert stored["score_juries"][0]["jury"]["aggregate"] == "median"
    assert stored["score_medians"][0] == statistics.median(statistics.median(r) for r in rows)


def test_a_jury_of_two_takes_the_mean_of_the_middle_two_as_median(
    acme: Tenant, jurors: dict[str, FakeJudge]
) -> None:
    names = [NAMES[1], NAMES[2]]
    metrics_id = seed(acme, names, "median")
    _, stored = evaluated(acme, metrics_id)
    rows = expected_scores(names)
    scores = {p["pair_id"]: p["score"] for p in stored["all_scored_pairs"][0]}
    assert scores == {f"p{k}": (a + b) / 2 for k, (a, b) in enumerate(rows)}
    assert stored["score_juries"][0]["jury"]["alpha"] == pytest.approx(
        krippendorff_interval(rows), abs=1e-9
    )


def _cost(name: str, input_tokens: int, output_tokens: int) -> Decimal:
    p_in, p_out = PRICES[name]
    return (p_in * input_tokens + p_out * output_tokens) / 1_000_000


def test_usage_and_cost_count_every_jurors_calls_at_its_own_price(
    acme: Tenant, jurors: dict[str, FakeJudge]
) -> None:
    metrics_id = seed(acme, list(NAMES))
    estimate = ok(
        acme.post("/evaluate/estimate", {"seed_data_id": "ds", "metrics_id": metrics_id})
    ).json()

    usage = ok(acme.post("/evaluate", {"seed_data_id": "ds", "metrics_id": metrics_id})).json()[
        "usage"
    ]

    assert usage["llm_calls"] == 3 * len(OUTPUTS)
    by_model = {part["model"]: part for part in usage["by_model"]}
    assert set(by_model) == set(NAMES)
    total = Decimal(0)
    for name, fake in jurors.items():
        input_tokens = sum(u["prompt_tokens"] for u in fake.reported)
        output_tokens = sum(u["completion_tokens"] for u in fake.reported)
        part = by_model[name]
        assert part["llm_calls"] == len(OUTPUTS)
        assert (part["input_tokens"], part["output_tokens"]) == (input_tokens, output_tokens)
        assert part["cost_usd"] == pytest.approx(float(_cost(name, input_tokens, output_tokens)))
        total += _cost(name, input_tokens, output_tokens)
    assert usage["cost_usd"] == pytest.approx(float(total), rel=1e-9)
    # The estimate counts every juror's calls, each at its price: a bound of what was spent.
    assert estimate["llm_calls"] == 3 * len(OUTPUTS)
    assert estimate["cost_usd_max"] >= usage["cost_usd"]


def test_the_judge_cache_keeps_each_jurors_verdicts_apart(
    acme: Tenant, jurors: dict[str, FakeJudge]
) -> None:
    first = seed(acme, [NAMES[0], NAMES[1]])
    ok(acme.post("/evaluate", {"seed_data_id": "ds", "metrics_id": first}))
    again = ok(acme.post("/evaluate", {"seed_data_id": "ds", "metrics_id": first})).json()
    assert again["usage"]["llm_calls"] == 0
    assert again["usage"]["cache_hits"] == 2 * len(OUTPUTS)

    # A jury that shares juror a with the first: a's verdicts come from the cache, c is asked.
    second = ok(
        acme.post("/specify_questions", {"metrics": [QUESTION], "judges": [NAMES[0], NAMES[2]]})
    ).json()["metrics_id"]
    usage = ok(acme.post("/evaluate", {"seed_data_id": "ds", "metrics_id": second})).json()["usage"]
    assert usage["llm_calls"] == len(OUTPUTS)
    assert usage["cache_hits"] == len(OUTPUTS)
    assert len(jurors[NAMES[0]].requests) == len(OUTPUTS)
    assert len(jurors[NAMES[2]].requests) == len(OUTPUTS)


def test_a_juror_that_fails_fails_the_judging_naming_it(
    acme: Tenant, jurors: dict[str, FakeJudge]
) -> None:
    metrics_id = seed(acme, list(NAMES))
    jurors[NAMES[1]].answer = lambda request: (
        503,
        json.dumps({"error": {"message": "overloaded"}}),
    )

    response = acme.post("/evaluate", {"seed_data_id": "ds", "metrics_id": metrics_id})

    assert response.status_code in (502, 503), response.text
    error = response.json()["error"]
    assert repr(NAMES[1]) in error and "failed" in error
    # No evaluation was stored from fewer jurors.
    assert ok(acme.get("/evaluations")).json()["evaluations"] == []
    # The verdicts the other jurors gave are kept: asking again calls only the failed juror.
    for name in (NAMES[0], NAMES[2]):
        assert len(jurors[name].requests) == len(OUTPUTS), name


def test_structured_output_is_negotiated_per_juror(
    acme: Tenant, jurors: dict[str, FakeJudge]
) -> None:
    from tests.fake_judge import FAMILIES

    jurors[NAMES[2]].family = FAMILIES["llama-cpp-python"]
    metrics_id = seed(acme, list(NAMES))

    ok(acme.post("/evaluate", {"seed_data_id": "ds", "metrics_id": metrics_id}))

    assert set(jurors[NAMES[0]].modes()) == {"json_schema"}
    assert set(jurors[NAMES[1]].modes()) == {"json_schema"}
    # Juror c's server refused json_schema (the calls sent at once before the first refusal
    # each met it): every verdict it gave came in json_object.
    modes = jurors[NAMES[2]].modes()
    assert set(modes) == {"json_schema", "json_object"}
    assert modes.count("json_object") == len(OUTPUTS)


@pytest.mark.parametrize(
    ("body", "says"),
    [
        ({"judges": [NAMES[0]]}, "List should have at least 2 items"),
        ({"judges": list(NAMES) * 2}, "List should have at most 5 items"),
        ({"judges": [NAMES[0], NAMES[0]]}, "named twice"),
        ({"judges": [NAMES[0], "openai:unknown"]}, "not a judge this service may use"),
        ({"jury": "median"}, "without judges"),
        ({"judges": list(NAMES[:2]), "jury": "mode"}, "jury"),
        ({"judges": [NAMES[0], 7]}, "judges"),
    ],
)
def test_a_jury_that_cannot_be_used_is_a_400(
    acme: Tenant, jurors: dict[str, FakeJudge], body: dict[str, Any], says: str
) -> None:
    response = acme.post("/specify_questions", {"metrics": [QUESTION], **body})
    # Too many items is the service's 413, as for any list over its limit.
    assert response.status_code == (413 if "at most" in says else 400), response.text
    assert says in response.json()["error"]


def test_an_unpriced_judge_cannot_be_on_a_jury(
    acme: Tenant, jurors: dict[str, FakeJudge], monkeypatch: pytest.MonkeyPatch
) -> None:
    point_service_at(
        {"EVALSVC_PRICES": json.dumps({NAMES[0]: {"input": 1, "output": 2}})}, monkeypatch
    )
    response = acme.post("/specify_questions", {"metrics": [QUESTION], "judges": list(NAMES[:2])})
    assert response.status_code == 400
    assert "has no price" in response.json()["error"] and NAMES[1] in response.json()["error"]


def test_a_queued_jury_gives_the_inline_figures(
    acme: Tenant, jurors: dict[str, FakeJudge], work: Work, monkeypatch: pytest.MonkeyPatch
) -> None:
    metrics_id = seed(acme, list(NAMES))
    inline = ok(acme.post("/evaluate", {"seed_data_id": "ds", "metrics_id": metrics_id})).json()
    inline_stored = ok(acme.get(f"/evaluation/{inline['eval_results_id']}")).json()

    point_service_at(
        {"EVALSVC_INLINE_MAX_JUDGE_CALLS": "0", "EVALSVC_CHUNK_JUDGE_CALLS": "2"}, monkeypatch
    )
    queued = acme.http.post(
        "/v1/evaluate",
        json={"seed_data_id": "ds", "metrics_id": metrics_id},
        headers={**acme.headers, "Prefer": "respond-async"},
    )
    assert queued.status_code == 202, queued.text
    results_id = queued.json()["eval_results_id"]
    work.drain()
    stored = ok(acme.get(f"/evaluation/{results_id}")).json()
    assert stored["status"] == "complete"
    assert stored["judge_calls_total"] == 3 * len(OUTPUTS)
    jury, inline_jury = stored["score_juries"][0], inline_stored["score_juries"][0]
    assert jury["jury"]["alpha"] == pytest.approx(inline_jury["jury"]["alpha"], abs=1e-12)
    assert jury["per_judge"] == inline_jury["per_judge"]
    assert stored["score_means"] == inline_stored["score_means"]


def test_a_set_whose_judge_the_operator_removed_is_a_400_before_any_call(
    acme: Tenant, jurors: dict[str, FakeJudge], monkeypatch: pytest.MonkeyPatch
) -> None:
    metrics_id = seed(acme, list(NAMES))
    point_service_at({"EVALSVC_JUDGES": ",".join(NAMES[:2])}, monkeypatch)

    response = acme.post("/evaluate", {"seed_data_id": "ds", "metrics_id": metrics_id})

    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert "jury cannot be used" in error and NAMES[2] in error
    assert all(not fake.requests for fake in jurors.values())


def test_judge_samples_apply_to_each_juror(acme: Tenant, jurors: dict[str, FakeJudge]) -> None:
    from tests.fake_judge import VaryingJudge

    varying = VaryingJudge()
    jurors[NAMES[0]].answer = varying
    metrics_id = seed(acme, list(NAMES))
    body = {"seed_data_id": "ds", "metrics_id": metrics_id, "judge_samples": 2}

    answer, stored = evaluated(acme, metrics_id, judge_samples=2)

    # Every juror was asked twice about every pair, each time counted.
    assert answer["usage"]["llm_calls"] == 3 * 2 * len(OUTPUTS)
    assert stored["judge_calls_total"] == 3 * 2 * len(OUTPUTS)
    for fake in jurors.values():
        assert len(fake.requests) == 2 * len(OUTPUTS)
    by_pair = {p["pair_id"]: p for p in stored["all_scored_pairs"][0]}
    for k, out in enumerate(OUTPUTS):
        given = varying.scores_for(out)
        assert len(given) == 2
        scores = by_pair[f"p{k}"]["judge_scores"]
        # Juror a's score is the mean of its two answers; b's and c's answer alike twice.
        assert scores[NAMES[0]] == sum(given) / 2
        assert scores[NAMES[1]] == strict(out) and scores[NAMES[2]] == by_length(out)
        assert by_pair[f"p{k}"]["score"] == pytest.approx(sum(scores.values()) / 3)
    # A jury's metric has no judge noise of its own: the spread between judges is alpha's.
    assert stored["score_judge_noise_sds"] == [None, None]
    # Asked again with one more sample, only the new samples are asked.
    again = ok(acme.post("/evaluate", {**body, "judge_samples": 3})).json()["usage"]
    assert again["llm_calls"] == 3 * len(OUTPUTS)
    assert again["cache_hits"] == 3 * 2 * len(OUTPUTS)


def test_an_audit_sample_shows_each_judges_score(
    acme: Tenant, jurors: dict[str, FakeJudge]
) -> None:
    metrics_id = seed(acme, list(NAMES))
    answer = ok(acme.post("/evaluate", {"seed_data_id": "ds", "metrics_id": metrics_id})).json()
    results_id = answer["eval_results_id"]

    sample = ok(acme.get(f"/evaluation/{results_id}/audit_sample?metric_idx=0&n=10")).json()
    checked = ok(acme.get(f"/evaluation/{results_id}/audit_sample?metric_idx=1&n=10")).json()

    rows = dict(zip(OUTPUTS, expected_scores(list(NAMES)), strict=True))
    assert len(sample["pairs"]) == len(OUTPUTS)
    for pair in sample["pairs"]:
        assert pair["judge_scores"] == dict(
            zip(NAMES, map(float, rows[pair["output"]]), strict=True)
        )
    # The check metric has no jury: no judge_scores.
    assert all("judge_scores" not in pair for pair in checked["pairs"])


def test_a_cap_or_a_monthly_limit_holds_the_whole_jury_before_any_call(
    acme: Tenant, jurors: dict[str, FakeJudge], monkeypatch: pytest.MonkeyPatch
) -> None:
    metrics_id = seed(acme, list(NAMES))
    body = {"seed_data_id": "ds", "metrics_id": metrics_id}
    jury_bound = ok(acme.post("/evaluate/estimate", body)).json()["cost_usd_max"]
    one = ok(acme.post("/specify_questions", {"metrics": [QUESTION]})).json()["metrics_id"]
    one_bound = ok(
        acme.post("/evaluate/estimate", {"seed_data_id": "ds", "metrics_id": one})
    ).json()["cost_usd_max"]
    # Every judge's calls at its own price: more than any one judge's, their sum at most.
    assert jury_bound > 2 * one_bound

    # A cap that one judge's calls fit but the jury's do not: refused before any call.
    capped = acme.post("/evaluate", {**body, "max_cost_usd": jury_bound * 0.99})
    assert capped.status_code == 400, capped.text
    assert "max_cost_usd" in capped.json()["error"]
    # A monthly limit likewise.
    point_service_at({"EVALSVC_DEFAULT_MONTHLY_LIMIT_USD": str(jury_bound * 0.99)}, monkeypatch)
    limited = acme.post("/evaluate", body)
    assert limited.status_code == 429, limited.text
    assert "limit" in limited.json()["error"]
    assert all(not fake.requests for fake in jurors.values())

    point_service_at({"EVALSVC_DEFAULT_MONTHLY_LIMIT_USD": str(jury_bound * 1.01)}, monkeypatch)
    allowed = ok(acme.post("/evaluate", {**body, "max_cost_usd": jury_bound * 1.01})).json()
    assert allowed["usage"]["cost_usd"] <= jury_bound


def test_a_juror_failing_stops_the_others_calls_not_yet_made(
    acme: Tenant, jurors: dict[str, FakeJudge], monkeypatch: pytest.MonkeyPatch
) -> None:
    # One call at a time per juror, the good jurors slow: the failing one has failed after its
    # retries long before they could have asked about every pair.
    point_service_at({"EVALSVC_JUDGE_CONCURRENCY": "1"}, monkeypatch)
    for name in (NAMES[0], NAMES[2]):
        jurors[name].latency = 0.5
    jurors[NAMES[1]].answer = lambda request: (503, json.dumps({"error": {"message": "down"}}))
    metrics_id = seed(acme, list(NAMES))

    response = acme.post("/evaluate", {"seed_data_id": "ds", "metrics_id": metrics_id})

    assert response.status_code == 502, response.text
    assert repr(NAMES[1]) in response.json()["error"]
    for name in (NAMES[0], NAMES[2]):
        assert len(jurors[name].requests) < len(OUTPUTS), name
