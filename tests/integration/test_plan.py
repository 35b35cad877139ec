"""POST /plan (E6): per metric, the pairs a comparison needs to detect `effect` with probability
`power` at level alpha, from the baseline alone (two independent runs) or from its differences
with a candidate (paired), against the formula computed with numpy and scipy; every error."""

from __future__ import annotations

import base64
import json
import math
from typing import Any

import numpy as np
import pytest
from evalsvc.core.deadlines import Deadline
from evalsvc.core.errors import OutOfTime
from evalsvc.logic import comparisons, plans
from evalsvc.models.api_keys import Identity
from evalsvc.models.evaluations import ScoredPair
from evalsvc.models.plans import PlanIn
from scipy import stats as scipy_stats

from tests.error_bar_oracles import scores_of
from tests.integration.conftest import Tenant, ok
from tests.integration.test_compare import METRICS, dataset
from tests.lambda_support import invoke, load_event, with_body
from tests.stored_results import store_result
from tests.work_queue import Work

TOLERANCE = 1e-6


def evaluate(tenant: Tenant, dataset_id: str, metrics: list[str] = METRICS) -> str:
    metrics_id = ok(tenant.post("/specify_questions", {"metrics": metrics})).json()["metrics_id"]
    answer = ok(tenant.post("/evaluate", {"seed_data_id": dataset_id, "metrics_id": metrics_id}))
    return str(answer.json()["eval_results_id"])


def needed(sd: float, effect: float, alpha: float, power: float) -> set[int]:
    """The spec's formula with scipy's normal quantiles: ⌈x⌉ at least 2, or x itself when it
    is an integer up to rounding."""
    z = scipy_stats.norm.ppf(1 - alpha / 2) + scipy_stats.norm.ppf(power)
    x = (z * sd / effect) ** 2
    if abs(x - round(x)) <= 1e-9 * max(1.0, x):
        return {max(2, round(x)), max(2, round(x) + 1)}
    return {max(2, math.ceil(x))}


def close(mine: float | None, oracle: float) -> bool:
    return mine is not None and math.isclose(mine, oracle, rel_tol=TOLERANCE, abs_tol=TOLERANCE)


@pytest.fixture
def two_versions(acme: Tenant) -> tuple[str, str]:
    """40 pairs in the baseline, 39 in the candidate, 35 shared; outputs changed."""
    dataset(acme, "v1", range(0, 40), shift=1)
    dataset(acme, "v2", range(5, 44), shift=3)
    return evaluate(acme, "v1"), evaluate(acme, "v2")


@pytest.mark.parametrize(
    ("effect", "alpha", "power"),
    [(0.25, 0.05, 0.8), (0.1, 0.01, 0.9), (1.0, 0.2, 0.5), (0.05, 0.001, 0.99)],
)
def test_without_a_candidate_sd_is_root_two_times_the_baselines_std_dev(
    acme: Tenant, two_versions: tuple[str, str], effect: float, alpha: float, power: float
) -> None:
    baseline, _ = two_versions

    answer = ok(
        acme.post(
            "/plan", {"baseline_id": baseline, "effect": effect, "alpha": alpha, "power": power}
        )
    ).json()

    assert (answer["baseline_id"], answer["candidate_id"]) == (baseline, None)
    assert (answer["effect"], answer["alpha"], answer["power"]) == (effect, alpha, power)
    scores = scores_of(acme, baseline)
    assert [m["metric"] for m in answer["metrics"]] == METRICS
    for idx, got in enumerate(answer["metrics"]):
        sd = math.sqrt(2) * float(np.std([s[idx] for s in scores.values()], ddof=1))
        assert got["paired"] is False and got["n"] == 40
        assert close(got["sd"], sd)
        assert got["pairs_needed"] in needed(sd, effect, alpha, power)


@pytest.mark.parametrize(("effect", "alpha", "power"), [(0.25, 0.05, 0.8), (0.5, 0.1, 0.95)])
def test_with_a_candidate_sd_is_the_std_diff_of_the_matched_pairs(
    acme: Tenant, two_versions: tuple[str, str], effect: float, alpha: float, power: float
) -> None:
    baseline, candidate = two_versions
    ids = {"baseline_id": baseline, "candidate_id": candidate}

    answer = ok(acme.post("/plan", {**ids, "effect": effect, "alpha": alpha, "power": power}))

    before, after = scores_of(acme, baseline), scores_of(acme, candidate)
    shared = sorted(before.keys() & after.keys())
    compared = ok(acme.post("/compare", ids)).json()["metrics"]
    for idx, (got, metric) in enumerate(zip(answer.json()["metrics"], compared, strict=True)):
        d = [after[p][idx] - before[p][idx] for p in shared]
        sd = float(np.std(d, ddof=1))
        assert got["paired"] is True and got["n"] == len(shared) == 35
        assert close(got["sd"], sd) and got["sd"] == metric["std_diff"]
        assert got["pairs_needed"] in needed(sd, effect, alpha, power)


def test_the_defaults_are_alpha_005_and_power_08(
    acme: Tenant, two_versions: tuple[str, str]
) -> None:
    baseline, _ = two_versions
    plain = ok(acme.post("/plan", {"baseline_id": baseline, "effect": 0.3})).json()
    given = {"baseline_id": baseline, "effect": 0.3, "alpha": 0.05, "power": 0.8}
    assert plain == ok(acme.post("/plan", given)).json()
    assert (plain["alpha"], plain["power"]) == (0.05, 0.8)


def test_a_plan_agrees_with_the_mde_of_the_comparison_it_plans(
    acme: Tenant, two_versions: tuple[str, str]
) -> None:
    # The mde of n pairs is the effect that n pairs detect with 80 % power: planning for it
    # asks for n pairs (up to the ceiling's rounding)
    baseline, candidate = two_versions
    ids = {"baseline_id": baseline, "candidate_id": candidate}
    compared = ok(acme.post("/compare", ids)).json()["metrics"]
    for idx, metric in enumerate(compared):
        plan = ok(acme.post("/plan", {**ids, "effect": metric["mde"]})).json()["metrics"][idx]
        assert plan["pairs_needed"] in (metric["n"], metric["n"] + 1)


def stored(results_id: str, scores: dict[str, float], definitions: list[str] | None = None) -> str:
    scored = [
        ScoredPair(pid, i, [score], ["r"], input_cluster=pid)
        for i, (pid, score) in enumerate(sorted(scores.items()))
    ]
    store_result("acme", results_id, definitions or ["check:non_empty"], scored, metrics_id="m")
    return results_id


def test_one_pair_gives_no_sd_and_no_pairs_needed(acme: Tenant) -> None:
    lone = stored("ev_lone", {"a": 4.0})
    other = stored("ev_other", {"a": 2.0, "b": 3.0})

    (alone,) = ok(acme.post("/plan", {"baseline_id": lone, "effect": 0.5})).json()["metrics"]
    (paired,) = ok(
        acme.post("/plan", {"baseline_id": other, "candidate_id": lone, "effect": 0.5})
    ).json()["metrics"]

    assert alone == {
        "metric": "check:non_empty",
        "n": 1,
        "sd": None,
        "pairs_needed": None,
        "paired": False,
    }
    assert paired == {
        "metric": "check:non_empty",
        "n": 1,
        "sd": None,
        "pairs_needed": None,
        "paired": True,
    }


def test_no_spread_or_a_large_effect_needs_two_pairs_at_least(acme: Tenant) -> None:
    baseline = stored("ev_flat_b", {"a": 1.0, "b": 2.0, "c": 3.0})
    shifted = stored("ev_flat_c", {"a": 2.0, "b": 3.0, "c": 4.0})

    (flat,) = ok(
        acme.post("/plan", {"baseline_id": baseline, "candidate_id": shifted, "effect": 0.1})
    ).json()["metrics"]
    (large,) = ok(acme.post("/plan", {"baseline_id": baseline, "effect": 1e6})).json()["metrics"]

    assert flat["sd"] == 0.0 and flat["pairs_needed"] == 2
    assert close(large["sd"], math.sqrt(2)) and large["pairs_needed"] == 2


def test_an_effect_too_small_to_count_pairs_for_is_400_naming_it(acme: Tenant) -> None:
    baseline = stored("ev_tiny_b", {"a": 1.0, "b": 5.0})

    response = acme.post("/plan", {"baseline_id": baseline, "effect": 1e-300})

    assert response.status_code == 400, response.text
    assert response.json()["error"].startswith("effect: 1e-300 is too small")


def test_a_missing_result_is_404_naming_the_field(
    acme: Tenant, globex: Tenant, two_versions: tuple[str, str]
) -> None:
    baseline, candidate = two_versions

    unknown = acme.post("/plan", {"baseline_id": "ev_nope", "effect": 0.5})
    no_candidate = acme.post(
        "/plan", {"baseline_id": baseline, "candidate_id": "ev_nope", "effect": 0.5}
    )
    theirs = globex.post(
        "/plan", {"baseline_id": baseline, "candidate_id": candidate, "effect": 0.5}
    )

    assert unknown.status_code == 404
    assert unknown.json() == {"error": "baseline_id: no evaluation result with id 'ev_nope'"}
    assert no_candidate.status_code == 404
    assert no_candidate.json() == {"error": "candidate_id: no evaluation result with id 'ev_nope'"}
    assert theirs.status_code == 404
    assert theirs.json() == {"error": f"baseline_id: no evaluation result with id {baseline!r}"}


def test_a_running_or_failed_result_is_409_naming_it(
    acme: Tenant, work: Work, two_versions: tuple[str, str]
) -> None:
    from evalsvc.core.errors import Failure, ModelFailed
    from evalsvc.storage import results as results_store
    from evalsvc.storage.writes import commit

    baseline, candidate = two_versions
    response = acme.http.post(
        "/v1/evaluate",
        json={"seed_data_id": "v1"},
        headers={**acme.headers, "Prefer": "respond-async"},
    )
    assert response.status_code == 202, response.text
    running = response.json()["eval_results_id"]

    for body, field in (
        ({"baseline_id": running}, "baseline_id"),
        ({"baseline_id": baseline, "candidate_id": running}, "candidate_id"),
    ):
        answer = acme.post("/plan", {**body, "effect": 0.5})
        assert answer.status_code == 409, answer.text
        assert answer.json()["error"].startswith(f"{field}: evaluation result {running!r}")
        assert "still running" in answer.json()["error"]

    assert commit(results_store.failing("acme", candidate, Failure.of(ModelFailed("gave up"))))
    answer = acme.post("/plan", {"baseline_id": baseline, "candidate_id": candidate, "effect": 1})
    assert answer.status_code == 409
    assert answer.json() == {
        "error": f"candidate_id: evaluation result {candidate!r} failed (gave up): evaluate again"
    }
    assert work.drain()
    assert ok(acme.post("/plan", {"baseline_id": running, "effect": 0.5}))


def test_results_without_a_metric_or_a_pair_in_common_are_400_as_in_compare(
    acme: Tenant,
) -> None:
    dataset(acme, "v1", range(0, 4), shift=1)
    dataset(acme, "v2", range(4, 8), shift=1)
    first = evaluate(acme, "v1", ["check:non_empty"])
    other_metric = evaluate(acme, "v1", ["check:max_words:6"])
    other_pairs = evaluate(acme, "v2", ["check:non_empty"])

    for candidate, said in ((other_metric, "no metric definition"), (other_pairs, "no pair id")):
        response = acme.post(
            "/plan", {"baseline_id": first, "candidate_id": candidate, "effect": 0.5}
        )
        assert response.status_code == 400, response.text
        assert said in response.json()["error"]


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("effect", 0),
        ("effect", -0.5),
        ("effect", "0.5"),
        ("effect", True),
        ("effect", None),
        ("effect", [0.5]),
        ("alpha", 0),
        ("alpha", 1e-101),
        ("alpha", 0.5),
        ("alpha", -0.1),
        ("alpha", "0.05"),
        ("alpha", True),
        ("alpha", None),
        ("power", 0.49),
        ("power", 1),
        ("power", 1.5),
        ("power", 0),
        ("power", "0.8"),
        ("power", False),
        ("power", None),
        ("baseline_id", 7),
        ("baseline_id", None),
        ("baseline_id", "../etc"),
        ("candidate_id", 7),
        ("candidate_id", "x" * 129),
        ("candidate_id", "a b"),
    ],
)
def test_a_bad_parameter_is_400_naming_it(
    acme: Tenant, two_versions: tuple[str, str], field: str, value: Any
) -> None:
    baseline, candidate = two_versions
    body = {"baseline_id": baseline, "candidate_id": candidate, "effect": 0.5, field: value}

    response = acme.post("/plan", body)

    assert response.status_code == 400, response.text
    assert field in response.json()["error"]


@pytest.mark.parametrize("raw", [b"Infinity", b"-Infinity", b"NaN", b"1e999"])
def test_an_effect_that_is_not_a_finite_number_is_400(
    acme: Tenant, two_versions: tuple[str, str], raw: bytes
) -> None:
    baseline, _ = two_versions
    body = b'{"baseline_id": "' + baseline.encode() + b'", "effect": ' + raw + b"}"

    response = acme.http.post(
        "/v1/plan", content=body, headers={**acme.headers, "Content-Type": "application/json"}
    )

    assert response.status_code == 400, response.text
    assert "effect" in response.json()["error"]


def test_a_missing_effect_is_400_naming_it(acme: Tenant, two_versions: tuple[str, str]) -> None:
    response = acme.post("/plan", {"baseline_id": two_versions[0]})
    assert response.status_code == 400, response.text
    assert "effect" in response.json()["error"]


def test_a_plan_that_cannot_read_in_time_is_503_to_retry(
    acme: Tenant, two_versions: tuple[str, str]
) -> None:
    baseline, candidate = two_versions
    identity = Identity(tenant="acme", user="ann", user_email="ann@acme.test", key_id="k")
    body = PlanIn(baseline_id=baseline, candidate_id=candidate, effect=0.5)

    with pytest.raises(OutOfTime) as raised:
        plans.plan(identity, body, Deadline.after(comparisons.RESERVE_SECONDS - 0.5))

    assert raised.value.status_code == 503
    assert raised.value.headers == {"Retry-After": str(comparisons.RETRY_AFTER_SECONDS)}
    assert raised.value.message.startswith(f"planning from {baseline!r}")
    # without a candidate nothing but the baseline's header is read: no deadline to run out
    alone = plans.plan(
        identity,
        PlanIn(baseline_id=baseline, effect=0.5),
        Deadline.after(comparisons.RESERVE_SECONDS - 0.5),
    )
    assert len(alone) == len(METRICS)


def test_the_function_takes_its_event_file(event_key: str) -> None:
    invoke("write_seed_dataset", load_event("write_seed_dataset"))
    invoke(
        "specify_questions",
        with_body(load_event("specify_questions"), {"metrics": ["check:max_words:4"]}),
    )
    ids = [invoke("evaluate", load_event("evaluate"))[1]["eval_results_id"] for _ in range(2)]
    body = json.loads(base64.b64decode(load_event("plan")["body"]))

    status, answer = invoke(
        "plan",
        with_body(load_event("plan"), {**body, "baseline_id": ids[0], "candidate_id": ids[1]}),
    )

    assert status == 200, answer
    (metric,) = answer["metrics"]
    # the same checks twice: no difference, no spread
    assert metric == {
        "metric": "check:max_words:4",
        "n": 2,
        "sd": 0.0,
        "pairs_needed": 2,
        "paired": True,
    }
