"""POST /compare: two evaluation results compared pair by pair, field by field against scipy
from the scored pairs GET /evaluation returns; inline and queued results; every error."""

from __future__ import annotations

import base64
import json
import math
import warnings
from typing import Any

import pytest
from evalsvc.core.deadlines import Deadline
from evalsvc.core.errors import OutOfTime
from evalsvc.logic import comparisons
from evalsvc.models.api_keys import Identity
from evalsvc.models.comparisons import CompareIn
from evalsvc.statistics import scores as stats
from scipy import stats as scipy_stats

from tests.conftest import point_service_at
from tests.integration.conftest import Tenant
from tests.lambda_support import invoke, load_event, with_body
from tests.stored_results import store_result
from tests.work_queue import Work

METRICS = ["check:readability", "check:max_words:6", "check:contains:please"]
WORDS = ["please", "thanks", "the", "answer", "is", "a", "long", "reply", "here", "now"]
TOLERANCE = 1e-6


def dataset(tenant: Tenant, dataset_id: str, ids: range, shift: int) -> None:
    """Pairs p<i>; `shift` changes every output (how many words, whether it says please)."""
    data = [
        {
            "id": f"p{i:03d}",
            "input": f"question {i}",
            "output": " ".join(
                WORDS[(i * shift + k) % len(WORDS)] for k in range(2 + (i + shift) % 8)
            ),
        }
        for i in ids
    ]
    response = tenant.post(f"/data/seed/{dataset_id}", {"data": data, "system_prompt": "Be kind."})
    assert response.status_code == 200, response.text


def evaluate(tenant: Tenant, dataset_id: str, metrics_id: str) -> str:
    response = tenant.post("/evaluate", {"seed_data_id": dataset_id, "metrics_id": metrics_id})
    assert response.status_code == 200, response.text
    return str(response.json()["eval_results_id"])


def metrics_set(tenant: Tenant, definitions: list[str] = METRICS) -> str:
    response = tenant.post("/specify_questions", {"metrics": definitions})
    assert response.status_code == 200, response.text
    return str(response.json()["metrics_id"])


def scored(tenant: Tenant, results_id: str) -> tuple[list[str], dict[str, list[tuple[float, str]]]]:
    """A result's definitions and, per pair id, its (score, reason) per metric."""
    response = tenant.get(f"/evaluation/{results_id}?includeAllScores=true")
    assert response.status_code == 200, response.text
    body = response.json()
    by_pair: dict[str, list[tuple[float, str]]] = {}
    for metric in body["all_scored_pairs"]:
        for entry in metric:
            by_pair.setdefault(entry["pair_id"], []).append((entry["score"], entry["reason"]))
    return body["metrics_definitions"], by_pair


def close(mine: float | None, oracle: float) -> bool:
    return mine is not None and math.isclose(mine, oracle, rel_tol=TOLERANCE, abs_tol=TOLERANCE)


def assert_agrees_with_scipy(
    tenant: Tenant,
    answer: dict[str, Any],
    *,
    alpha: float = 0.05,
    threshold: float = 1.0,
    limit: int = 20,
    correction: str = "holm",
) -> None:
    """Every field of `answer` against scipy and the rules of docs/comparing-runs.md, from both
    results' pairs."""
    b_defs, baseline = scored(tenant, answer["baseline_id"])
    c_defs, candidate = scored(tenant, answer["candidate_id"])
    shared = sorted(baseline.keys() & candidate.keys())
    assert answer["pairs_matched"] == len(shared)
    assert answer["only_in_baseline"] == len(baseline.keys() - candidate.keys())
    assert answer["only_in_candidate"] == len(candidate.keys() - baseline.keys())
    matched = [(d, b_defs.index(d), c_defs.index(d)) for d in b_defs if d in c_defs]
    assert [m["metric"] for m in answer["metrics"]] == [d for d, _, _ in matched]
    p_values: list[float] = []
    changes: list[tuple[float, int, str, dict[str, Any]]] = []
    for pos, ((definition, bi, ci), got) in enumerate(zip(matched, answer["metrics"], strict=True)):
        b = [baseline[p][bi][0] for p in shared]
        c = [candidate[p][ci][0] for p in shared]
        d = [y - x for x, y in zip(b, c, strict=True)]
        n = len(d)
        assert got["n"] == n
        assert (got["wins"], got["ties"], got["losses"]) == (
            sum(x > 0 for x in d),
            sum(x == 0 for x in d),
            sum(x < 0 for x in d),
        )
        assert close(got["baseline_mean"], sum(b) / n)
        assert close(got["candidate_mean"], sum(c) / n)
        assert close(got["mean_diff"], sum(d) / n)
        assert close(got["median_diff"], float(scipy_stats.scoreatpercentile(d, 50)))
        std = float(scipy_stats.tstd(d))
        assert close(got["std_diff"], std)
        assert std > 0, "a design with spread: the std 0 rules are tested apart"
        test = scipy_stats.ttest_rel(c, b)
        assert close(got["t_statistic"], float(test.statistic))
        assert close(got["p_value"], float(test.pvalue))
        margin = scipy_stats.t.ppf(1 - alpha / 2, n - 1) * std / math.sqrt(n)
        assert close(got["ci_low"], sum(d) / n - margin)
        assert close(got["ci_high"], sum(d) / n + margin)
        assert close(got["effect_size_dz"], (sum(d) / n) / std)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            wilcoxon = scipy_stats.wilcoxon(d, zero_method="pratt", method="approx")
        assert close(got["wilcoxon_p"], float(wilcoxon.pvalue))
        decided = got["wins"] + got["losses"]
        assert close(got["sign_test_p"], scipy_stats.binomtest(got["wins"], decided).pvalue)
        p_values.append(float(test.pvalue))
        for pid in shared:
            before, before_reason = baseline[pid][bi]
            after, after_reason = candidate[pid][ci]
            change = {
                "pair_id": pid,
                "metric": definition,
                "baseline_score": before,
                "candidate_score": after,
                "diff": after - before,
                "baseline_reason": before_reason,
                "candidate_reason": after_reason,
            }
            changes.append((after - before, pos, pid, change))
    m = len(p_values)
    adjusted = list(p_values)
    if correction == "holm":
        order = sorted(range(m), key=lambda i: p_values[i])
        running = 0.0
        for j, i in enumerate(order):
            running = max(running, min(1.0, (m - j) * p_values[i]))
            adjusted[i] = running
    for got, p in zip(answer["metrics"], adjusted, strict=True):
        assert close(got["p_adjusted"], p)
        expected = "no_significant_difference"
        if p < alpha and got["mean_diff"] != 0:
            expected = "improved" if got["mean_diff"] > 0 else "regressed"
        assert got["verdict"] == expected
    # A move reaches the threshold up to float rounding (docs/design.md, "Comparing").
    reach = threshold * (1 - 1e-9)
    down = sorted((c for c in changes if c[0] <= -reach), key=lambda c: c[:3])
    up = sorted((c for c in changes if c[0] >= reach), key=lambda c: (-c[0], c[1], c[2]))
    assert answer["regressions"] == [c[3] for c in down[:limit]]
    assert answer["improvements"] == [c[3] for c in up[:limit]]


@pytest.fixture
def two_versions(acme: Tenant) -> tuple[str, str]:
    """Two evaluations of two versions of a dataset: 35 pair ids in common, 5 only in the
    baseline, 4 only in the candidate; outputs changed."""
    metrics_id = metrics_set(acme)
    dataset(acme, "v1", range(0, 40), shift=1)
    dataset(acme, "v2", range(5, 44), shift=3)
    return evaluate(acme, "v1", metrics_id), evaluate(acme, "v2", metrics_id)


def test_compare_agrees_with_scipy_field_by_field_when_only_some_pairs_are_shared(
    acme: Tenant, two_versions: tuple[str, str]
) -> None:
    baseline, candidate = two_versions

    response = acme.post("/compare", {"baseline_id": baseline, "candidate_id": candidate})

    assert response.status_code == 200, response.text
    answer = response.json()
    assert answer["baseline_id"] == baseline and answer["candidate_id"] == candidate
    assert (answer["alpha"], answer["correction"]) == (0.05, "holm")
    assert (answer["pairs_matched"], answer["only_in_baseline"], answer["only_in_candidate"]) == (
        35,
        5,
        4,
    )
    assert answer["regressions"] and answer["improvements"]
    assert all(c["baseline_reason"] and c["candidate_reason"] for c in answer["regressions"])
    assert_agrees_with_scipy(acme, answer)


@pytest.mark.parametrize(
    "options",
    [
        {"alpha": 0.2, "correction": "none", "regression_threshold": 0.5, "limit": 3},
        {"alpha": 0.001, "regression_threshold": 2, "limit": 200},
        {"alpha": 0.3, "regression_threshold": 0.01, "limit": 1},
    ],
)
def test_alpha_correction_threshold_and_limit_take_effect(
    acme: Tenant, two_versions: tuple[str, str], options: dict[str, Any]
) -> None:
    baseline, candidate = two_versions

    response = acme.post(
        "/compare", {"baseline_id": baseline, "candidate_id": candidate, **options}
    )

    assert response.status_code == 200, response.text
    assert len(response.json()["regressions"]) <= options["limit"]
    assert_agrees_with_scipy(
        acme,
        response.json(),
        alpha=options["alpha"],
        threshold=options["regression_threshold"],
        limit=options["limit"],
        correction=options.get("correction", "holm"),
    )


def test_swapping_the_two_results_negates_the_differences_and_keeps_the_p_values(
    acme: Tenant, two_versions: tuple[str, str]
) -> None:
    baseline, candidate = two_versions

    forward = acme.post("/compare", {"baseline_id": baseline, "candidate_id": candidate}).json()
    backward = acme.post("/compare", {"baseline_id": candidate, "candidate_id": baseline}).json()

    for f, b in zip(forward["metrics"], backward["metrics"], strict=True):
        assert close(b["mean_diff"], -f["mean_diff"])
        assert close(b["p_value"], f["p_value"]) and close(b["p_adjusted"], f["p_adjusted"])
        assert (b["wins"], b["losses"]) == (f["losses"], f["wins"])
    assert [c["pair_id"] for c in backward["regressions"]] == [
        c["pair_id"] for c in forward["improvements"]
    ]


def test_a_result_compared_with_itself_is_all_ties(
    acme: Tenant, two_versions: tuple[str, str]
) -> None:
    baseline, _ = two_versions

    answer = acme.post("/compare", {"baseline_id": baseline, "candidate_id": baseline}).json()

    assert answer["pairs_matched"] == 40
    for metric in answer["metrics"]:
        assert (metric["wins"], metric["ties"], metric["losses"]) == (0, 40, 0)
        assert metric["mean_diff"] == metric["std_diff"] == metric["ci_low"] == 0.0
        assert metric["ci_high"] == 0.0 and metric["p_value"] == 1.0
        assert metric["t_statistic"] is None and metric["effect_size_dz"] is None
        assert metric["wilcoxon_p"] is None and metric["sign_test_p"] is None
        assert metric["verdict"] == "no_significant_difference"
    assert answer["regressions"] == answer["improvements"] == []


def test_one_shared_pair_is_insufficient_data_with_every_statistic_null(acme: Tenant) -> None:
    metrics_id = metrics_set(acme)
    dataset(acme, "v1", range(0, 3), shift=1)
    dataset(acme, "v2", range(2, 5), shift=3)
    baseline, candidate = evaluate(acme, "v1", metrics_id), evaluate(acme, "v2", metrics_id)

    answer = acme.post("/compare", {"baseline_id": baseline, "candidate_id": candidate}).json()

    assert (answer["pairs_matched"], answer["only_in_baseline"], answer["only_in_candidate"]) == (
        1,
        2,
        2,
    )
    for metric in answer["metrics"]:
        assert metric["n"] == 1 and metric["verdict"] == "insufficient_data"
        for name in stats.Paired.__slots__:
            if name not in ("n", "wins", "ties", "losses"):
                assert metric[name] is None, name
        assert metric["baseline_mean"] is None and metric["p_adjusted"] is None


def test_metrics_match_by_definition_in_the_baselines_order(acme: Tenant) -> None:
    # Given a candidate scored on the same checks in another order, one dropped and one added
    dataset(acme, "v1", range(0, 12), shift=1)
    dataset(acme, "v2", range(0, 12), shift=2)
    baseline = evaluate(acme, "v1", metrics_set(acme, METRICS))
    candidate = evaluate(acme, "v2", metrics_set(acme, [METRICS[2], "check:non_empty", METRICS[0]]))

    answer = acme.post("/compare", {"baseline_id": baseline, "candidate_id": candidate}).json()

    assert [m["metric"] for m in answer["metrics"]] == [METRICS[0], METRICS[2]]
    assert_agrees_with_scipy(acme, answer)


def test_a_queued_result_compares_with_an_inline_one(
    acme: Tenant, work: Work, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given the candidate evaluated through the work queue in chunks, the baseline inline
    point_service_at({"EVALSVC_CHUNK_CHECKS": "60", "EVALSVC_INLINE_MAX_CHECKS": "30"}, monkeypatch)
    metrics_id = metrics_set(acme)
    dataset(acme, "v1", range(0, 8), shift=1)
    baseline = evaluate(acme, "v1", metrics_id)
    dataset(acme, "v2", range(0, 90), shift=3)
    response = acme.http.post(
        "/v1/evaluate",
        json={"seed_data_id": "v2", "metrics_id": metrics_id},
        headers={**acme.headers, "Prefer": "respond-async"},
    )
    assert response.status_code == 202, response.text
    candidate = response.json()["eval_results_id"]

    # While it runs, comparing with it is a 409 that names it and says why
    running = acme.post("/compare", {"baseline_id": baseline, "candidate_id": candidate})
    assert running.status_code == 409
    assert running.json()["error"].startswith(f"candidate_id: evaluation result {candidate!r}")
    assert "still running" in running.json()["error"]

    work.drain()
    answer = acme.post("/compare", {"baseline_id": baseline, "candidate_id": candidate})

    assert answer.status_code == 200, answer.text
    assert (answer.json()["pairs_matched"], answer.json()["only_in_candidate"]) == (8, 82)
    assert_agrees_with_scipy(acme, answer.json())


def test_a_failed_result_is_409_naming_it_and_its_failure(
    acme: Tenant, two_versions: tuple[str, str]
) -> None:
    from evalsvc.core.errors import Failure, ModelFailed
    from evalsvc.storage import results as results_store
    from evalsvc.storage.writes import commit

    baseline, candidate = two_versions
    failure = Failure.of(ModelFailed("the judge gave up"))
    assert commit(results_store.failing("acme", baseline, failure))

    response = acme.post("/compare", {"baseline_id": baseline, "candidate_id": candidate})

    assert response.status_code == 409
    assert response.json() == {
        "error": f"baseline_id: evaluation result {baseline!r} failed (the judge gave up): "
        "evaluate again"
    }


def test_unknown_and_other_tenants_results_are_404_naming_the_field(
    acme: Tenant, globex: Tenant, two_versions: tuple[str, str]
) -> None:
    baseline, candidate = two_versions

    unknown = acme.post("/compare", {"baseline_id": baseline, "candidate_id": "ev_nope"})
    theirs = globex.post("/compare", {"baseline_id": baseline, "candidate_id": candidate})

    assert unknown.status_code == 404
    assert unknown.json() == {"error": "candidate_id: no evaluation result with id 'ev_nope'"}
    assert theirs.status_code == 404
    assert theirs.json() == {"error": f"baseline_id: no evaluation result with id {baseline!r}"}


def test_no_metric_in_common_is_400_showing_both_sides(acme: Tenant) -> None:
    dataset(acme, "v1", range(0, 4), shift=1)
    baseline = evaluate(acme, "v1", metrics_set(acme, ["check:non_empty"]))
    candidate = evaluate(acme, "v1", metrics_set(acme, ["check:max_words:6"]))

    response = acme.post("/compare", {"baseline_id": baseline, "candidate_id": candidate})

    assert response.status_code == 400
    message = response.json()["error"]
    assert "no metric definition in common" in message
    assert "'check:non_empty'" in message and "'check:max_words:6'" in message


def test_no_pair_in_common_is_400(acme: Tenant) -> None:
    metrics_id = metrics_set(acme)
    dataset(acme, "v1", range(0, 4), shift=1)
    dataset(acme, "v2", range(4, 9), shift=1)
    baseline, candidate = evaluate(acme, "v1", metrics_id), evaluate(acme, "v2", metrics_id)

    response = acme.post("/compare", {"baseline_id": baseline, "candidate_id": candidate})

    assert response.status_code == 400
    assert response.json() == {
        "error": f"baseline {baseline!r} (4 scored pairs) and candidate {candidate!r} (5) have "
        "no pair id in common: compare evaluations of the same pairs (pairs match by id)"
    }


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("alpha", 0),
        ("alpha", 1e-101),
        ("alpha", 0.5),
        ("alpha", -0.1),
        ("alpha", "0.05"),
        ("alpha", True),
        ("alpha", None),
        ("correction", "bonferroni"),
        ("correction", "HOLM"),
        ("correction", 1),
        ("regression_threshold", 0),
        ("regression_threshold", -1),
        ("regression_threshold", "1"),
        ("regression_threshold", False),
        ("limit", 0),
        ("limit", 201),
        ("limit", 2.5),
        ("limit", True),
        ("limit", "20"),
        ("baseline_id", 7),
        ("candidate_id", None),
    ],
)
def test_a_field_out_of_range_is_400_naming_it(
    acme: Tenant, two_versions: tuple[str, str], field: str, value: Any
) -> None:
    baseline, candidate = two_versions
    body = {"baseline_id": baseline, "candidate_id": candidate, field: value}

    response = acme.post("/compare", body)

    assert response.status_code == 400, response.text
    assert field in response.json()["error"]


@pytest.mark.parametrize(
    ("body", "named"),
    [
        ({"candidate_id": "ev_x"}, "baseline_id"),
        ({"baseline_id": "ev_x"}, "candidate_id"),
        ({"baseline_id": "../etc", "candidate_id": "ev_x"}, "baseline_id"),
        ({"baseline_id": "ev_x", "candidate_id": "x" * 129}, "candidate_id"),
    ],
)
def test_a_missing_or_malformed_id_is_400_naming_it(
    acme: Tenant, body: dict[str, Any], named: str
) -> None:
    response = acme.post("/compare", body)

    assert response.status_code == 400, response.text
    assert named in response.json()["error"]


def test_a_comparison_that_cannot_finish_in_time_is_503_to_retry_and_says_what_was_read(
    acme: Tenant, two_versions: tuple[str, str]
) -> None:
    baseline, candidate = two_versions
    identity = Identity(tenant="acme", user="ann", user_email="ann@acme.test", key_id="k")

    with pytest.raises(OutOfTime) as raised:
        comparisons.compare(
            identity,
            CompareIn(baseline_id=baseline, candidate_id=candidate),
            Deadline.after(comparisons.RESERVE_SECONDS - 0.5),
        )

    # Running out of time is not "too large": a 503 with Retry-After, which a CI gate retries
    assert raised.value.status_code == 503
    assert raised.value.headers == {"Retry-After": str(comparisons.RETRY_AFTER_SECONDS)}
    assert "ran out of this request's time after reading 0 of their" in raised.value.message
    assert "the service is busy" in raised.value.message


def test_over_http_a_comparison_out_of_time_is_503_with_retry_after(
    acme: Tenant, two_versions: tuple[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    baseline, candidate = two_versions

    def busy(*args: Any) -> None:
        raise comparisons.TimeUp  # the pages came too slowly, the machine being busy

    monkeypatch.setattr(comparisons, "merge", busy)

    response = acme.post("/compare", {"baseline_id": baseline, "candidate_id": candidate})

    assert response.status_code == 503, response.text
    assert response.headers["retry-after"] == str(comparisons.RETRY_AFTER_SECONDS)
    assert "ask again in a little while" in response.json()["error"]


@pytest.fixture
def long_reasons() -> tuple[str, str]:
    """Two stored results of 30 pairs on two metrics, every reason 1,000 characters."""
    from evalsvc.models.evaluations import MAX_REASON_CHARS, ScoredPair

    from tests.stored_results import store_result

    definitions = ["check:non_empty", "check:max_words:5"]
    for results_id, score in (("ev_long_base", 5.0), ("ev_long_cand", 1.0)):
        scored = [
            ScoredPair(f"p{i:02d}", i, [5.0, score], ["r" * MAX_REASON_CHARS] * 2)
            for i in range(30)
        ]
        store_result("acme", results_id, definitions, scored)
    return "ev_long_base", "ev_long_cand"


def test_results_too_large_for_any_request_are_413_before_their_scores_are_read(
    acme: Tenant, long_reasons: tuple[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from evalsvc.storage import results as results_store

    baseline, candidate = long_reasons
    stored = results_store.get("acme", baseline)
    assert stored is not None
    # Given a pace at which the baseline's stored scored pairs would take more than a request
    at_least = comparisons.stored_bytes_at_least(stored)
    assert at_least is not None and at_least > 0
    monkeypatch.setattr(comparisons, "FASTEST_READ_BYTES_PER_SECOND", at_least / 100)

    def refused(tenant: str, results_id: str) -> Any:
        raise AssertionError("the scored pairs were read")

    monkeypatch.setattr(results_store, "score_pages", refused)

    response = acme.post("/compare", {"baseline_id": baseline, "candidate_id": candidate})

    # Then a 413 (no retry fits it), said before any scored pair was read
    assert response.status_code == 413, response.text
    assert "retry-after" not in response.headers
    said = response.json()["error"]
    assert f"evaluation result {baseline!r} holds 30 scored pairs" in said
    assert "cannot be compared, however often it is asked" in said


def test_the_stored_size_is_a_lower_bound_of_what_reading_the_scored_pairs_reads(
    acme: Tenant, long_reasons: tuple[str, str], two_versions: tuple[str, str]
) -> None:
    from evalsvc.storage import dynamo
    from evalsvc.storage import results as results_store
    from evalsvc.storage.results.pages import scored_query

    for results_id in (*long_reasons, *two_versions):
        stored = results_store.get("acme", results_id)
        assert stored is not None
        at_least = comparisons.stored_bytes_at_least(stored)
        query = scored_query("acme", results_id)
        items = list(dynamo.query_items(**query))
        assert at_least is not None and at_least <= sum(map(dynamo.item_size, items))
        if results_id in long_reasons:
            assert at_least > 0.9 * sum(map(dynamo.item_size, items))  # and a close one


def test_the_function_takes_its_event_file(event_key: str) -> None:
    # Given two evaluations of the events' dataset by the events' tenant
    invoke("write_seed_dataset", load_event("write_seed_dataset"))
    invoke(
        "specify_questions",
        with_body(load_event("specify_questions"), {"metrics": ["check:max_words:4"]}),
    )
    ids = [invoke("evaluate", load_event("evaluate"))[1]["eval_results_id"] for _ in range(2)]

    # When the compare event names them
    body = {**json.loads(base64.b64decode(load_event("compare")["body"])), "baseline_id": ids[0]}
    status, answer = invoke(
        "compare", with_body(load_event("compare"), {**body, "candidate_id": ids[1]})
    )

    # Then the two runs of the same checks are all ties
    assert status == 200, answer
    assert answer["pairs_matched"] == 2
    assert [m["verdict"] for m in answer["metrics"]] == ["no_significant_difference"]
    assert answer["metrics"][0]["ties"] == 2


def test_the_event_files_body_is_a_valid_request() -> None:
    body = json.loads(base64.b64decode(load_event("compare")["body"]))
    assert CompareIn.model_validate(body).limit == 20


def test_at_the_field_limits_the_answer_fits_or_says_to_ask_for_fewer(acme: Tenant) -> None:
    # Given two results on 50 definitions of 2,000 four-byte characters, every reason 1,000 of
    # them (every scored pair near 200 KB), and every pair moving by 4 on every metric: down on
    # half of them, up on the other half
    from evalsvc.models.evaluations import MAX_REASON_CHARS, ScoredPair
    from evalsvc.models.metric_sets import MAX_DEFINITION_CHARS, MAX_DEFINITIONS

    from tests.integration.test_item_sizes import wide

    definitions = [f"{k:02d}" + wide(MAX_DEFINITION_CHARS - 2) for k in range(MAX_DEFINITIONS)]
    half = MAX_DEFINITIONS // 2
    ids = [f"p{i:03d}" for i in range(120)]
    shared = [wide(MAX_REASON_CHARS) for _ in definitions]
    reasons = {pid: [wide(MAX_REASON_CHARS) for _ in definitions] for pid in ids[:2]}

    def store(results_id: str, scores: list[float]) -> None:
        scored = [ScoredPair(pid, i, scores, reasons.get(pid, shared)) for i, pid in enumerate(ids)]
        store_result("acme", results_id, definitions, scored)

    store("ev_wide_base", [5.0] * half + [1.0] * half)
    store("ev_wide_cand", [1.0] * half + [5.0] * half)
    body = {"baseline_id": "ev_wide_base", "candidate_id": "ev_wide_cand"}

    # When 200 of each are asked for, the answer is too large for one response
    too_many = acme.http.post(
        "/v1/compare",
        json={**body, "limit": 200},
        headers={**acme.headers, "Accept-Encoding": "identity"},
    )
    assert too_many.status_code == 413
    assert "smaller limit" in too_many.json()["error"]

    # And with 20 it comes, the stored reasons with it
    answer = acme.post("/compare", {**body, "limit": 20})
    assert answer.status_code == 200, answer.text[:300]
    found = answer.json()
    assert [m["metric"] for m in found["metrics"]] == definitions
    assert [m["verdict"] for m in found["metrics"]] == ["regressed"] * half + ["improved"] * half
    first = found["regressions"][0]
    assert (first["pair_id"], first["metric"]) == ("p000", definitions[0])
    assert first["baseline_reason"] == reasons["p000"][0]
    assert first["candidate_reason"] == reasons["p000"][0]
    assert found["improvements"][1]["candidate_reason"] == reasons["p001"][half]


def test_storage_failing_mid_read_is_503_and_nothing_waits_on_it(
    acme: Tenant, two_versions: tuple[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from evalsvc.core.errors import StorageUnavailable
    from evalsvc.storage import results as results_store

    baseline, candidate = two_versions
    real = results_store.score_pages

    def fails_after_one_page(tenant: str, results_id: str) -> Any:
        pages = real(tenant, results_id)
        yield next(pages)[:3]
        raise StorageUnavailable("storage kept refusing reads; retry shortly")

    monkeypatch.setattr(results_store, "score_pages", fails_after_one_page)

    response = acme.post("/compare", {"baseline_id": baseline, "candidate_id": candidate})

    assert response.status_code == 503
    assert response.json() == {"error": "storage kept refusing reads; retry shortly"}


def test_two_shared_pairs_agree_with_scipy(acme: Tenant) -> None:
    metrics_id = metrics_set(acme, ["check:readability"])
    dataset(acme, "v1", range(0, 2), shift=1)
    dataset(acme, "v2", range(0, 2), shift=3)
    baseline, candidate = evaluate(acme, "v1", metrics_id), evaluate(acme, "v2", metrics_id)

    answer = acme.post("/compare", {"baseline_id": baseline, "candidate_id": candidate}).json()

    assert answer["metrics"][0]["n"] == 2
    assert_agrees_with_scipy(acme, answer)


def test_all_equal_differences_have_a_point_interval_and_p_zero(acme: Tenant) -> None:
    metrics_id = metrics_set(acme, ["check:contains:please"])
    for dataset_id, ending in (("v1", "."), ("v2", ", please.")):
        data = [
            {"id": f"q{i}", "input": f"q {i}", "output": f"Answer {i}{ending}"} for i in range(6)
        ]
        assert acme.post(f"/data/seed/{dataset_id}", {"data": data}).status_code == 200
    baseline, candidate = evaluate(acme, "v1", metrics_id), evaluate(acme, "v2", metrics_id)

    answer = acme.post("/compare", {"baseline_id": baseline, "candidate_id": candidate}).json()

    (metric,) = answer["metrics"]
    assert (metric["mean_diff"], metric["std_diff"]) == (4.0, 0.0)
    assert metric["ci_low"] == metric["ci_high"] == 4.0
    assert metric["t_statistic"] is None and metric["effect_size_dz"] is None
    assert metric["p_value"] == metric["p_adjusted"] == 0.0
    assert metric["verdict"] == "improved"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        oracle = scipy_stats.wilcoxon([4.0] * 6, zero_method="pratt", method="approx")
    assert close(metric["wilcoxon_p"], float(oracle.pvalue))
    assert close(metric["sign_test_p"], scipy_stats.binomtest(6, 6).pvalue)
    assert [c["pair_id"] for c in answer["improvements"]] == [f"q{i}" for i in range(6)]
