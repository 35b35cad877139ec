"""E13 on GET /evaluation/{id}/agreement: a metric a jury judged gives each judge's own AUC (and
DeLong interval) beside the jury's, against three fake jurors that disagree and two people
voting +1, -1 and 0 from audit samples and review. Each judge's figures against independent
oracles (scikit-learn's roc_auc_score, DeLong the long way) over that judge's scores of the
voted pairs; the jury's own figures unchanged; source=audit; votes stored before each judge's
score was kept with them (read from their pairs, once); a result without a jury answering as
before; and the vote item staying tiny."""

from __future__ import annotations

from typing import Any

import boto3
import pytest
from evalsvc.core.settings import get_settings
from evalsvc.models.agreement import MetricAgreementOut
from evalsvc.models.evaluations import MAX_COMMENT_CHARS, Critique
from evalsvc.storage import critiques as critiques_store
from evalsvc.storage import results as results_store
from evalsvc.storage.dynamo import item_size

from tests.agreement_oracle import assert_matches_oracle, close, delong_the_long_way
from tests.integration.conftest import Tenant, ok
from tests.integration.test_agreement import vote, voter
from tests.integration.test_jury import JURORS, NAMES, QUESTION
from tests.integration.test_jury import OUTPUTS as JURY_OUTPUTS
from tests.integration.test_jury import jurors as jurors  # the fixture: three fake jurors

OUTPUTS = [
    *JURY_OUTPUTS,
    "please do",
    "sure",
    "yes please, of course",
    "absolutely not",
    "please wait a moment",
    "ok",
]
PAIRS = {f"p{k:02d}": out for k, out in enumerate(OUTPUTS)}
# (pair, person) -> (vote, source)
Cast = dict[tuple[str, str], tuple[int, str]]


def seed(tenant: Tenant, judges: list[str] | None) -> str:
    """A 12-pair result of a question (judged by `judges` as a jury, or by the single judge)
    and a check."""
    data = [{"id": pair, "input": f"q{pair}", "output": out} for pair, out in PAIRS.items()]
    ok(tenant.post("/data/seed/ds", {"data": data}))
    body: dict[str, Any] = {"metrics": [QUESTION, "check:non_empty"]}
    if judges is not None:
        body["judges"] = judges
    metrics_id = ok(tenant.post("/specify_questions", body)).json()["metrics_id"]
    answer = ok(tenant.post("/evaluate", {"seed_data_id": "ds", "metrics_id": metrics_id}))
    return str(answer.json()["eval_results_id"])


def cast_votes(acme: Tenant, results_id: str) -> Cast:
    """Two people vote on the question: +1 on "please" mostly, some against it, some 0, half
    from an audit sample; ann votes on a few pairs of the check too."""
    people = {"ann": acme, "bo": voter(acme, "bo")}
    cast: Cast = {}
    for k, (name, person) in enumerate(people.items()):
        for i, (pair, output) in enumerate(PAIRS.items()):
            if (i + k) % 4 == 3:
                continue  # not everybody votes on everything
            value = 1 if "please" in output else -1
            if (i * 3 + k) % 5 == 0:
                value = -value
            if (i + 2 * k) % 7 == 0:
                value = 0
            source = "audit" if (i + k) % 2 == 0 else "review"
            vote(person, results_id, pair, 0, value, source=source)
            cast[(pair, name)] = (value, source)
    for pair in ("p00", "p01", "p02"):
        vote(acme, results_id, pair, 1, 1)
    return cast


def jury_scores(tenant: Tenant, results_id: str) -> dict[str, float]:
    body = ok(tenant.get(f"/evaluation/{results_id}", params={"includeAllScores": "true"})).json()
    return {p["pair_id"]: p["score"] for p in body["all_scored_pairs"][0]}


def observations(cast: Cast, score: dict[str, float], audit_only: bool) -> list[tuple[float, int]]:
    return [
        (score[pair], value)
        for (pair, _), (value, source) in cast.items()
        if not audit_only or source == "audit"
    ]


def assert_per_judge(got: list[dict[str, Any]], cast: Cast, audit_only: bool) -> None:
    """Each judge's auc against scikit-learn, and its interval against DeLong the long way, over
    that judge's scores of the pairs voted +1 or -1."""
    # Imported here, not at collection: the workers that never run this test skip its import.
    from sklearn.metrics import roc_auc_score

    assert [j["judge"] for j in got] == list(NAMES)
    for entry, name in zip(got, NAMES, strict=True):
        rule = JURORS[name]
        seen = observations(cast, {p: float(rule(out)) for p, out in PAIRS.items()}, audit_only)
        pos = [s for s, v in seen if v == 1]
        neg = [s for s, v in seen if v == -1]
        assert len(pos) >= 2 and len(neg) >= 2
        auc = roc_auc_score([1] * len(pos) + [0] * len(neg), pos + neg)
        assert close(entry["auc"], float(auc)), (name, entry, auc)
        _, low, high = delong_the_long_way(pos, neg)
        assert low is not None and high is not None
        assert close(entry["auc_ci_low"], low) and close(entry["auc_ci_high"], high), name


def test_each_judge_of_the_jury_has_its_own_auc_beside_the_jurys(acme: Tenant, jurors: Any) -> None:
    results_id = seed(acme, list(NAMES))
    cast = cast_votes(acme, results_id)
    jury = jury_scores(acme, results_id)

    for audit_only, query in ((False, ""), (True, "?source=audit")):
        body = ok(acme.get(f"/evaluation/{results_id}/agreement{query}")).json()
        question, check = body["metrics"]
        # The jury's own figures are those of its scores, as before.
        assert_matches_oracle(question, observations(cast, jury, audit_only))
        assert_per_judge(question["per_judge"], cast, audit_only)
        # The check has no jury: no per_judge.
        assert "per_judge" not in check
    # The jurors disagree, and so do their AUCs: lenient and strict rank alike, by_length not.
    judges = ok(acme.get(f"/evaluation/{results_id}/agreement")).json()["metrics"][0]["per_judge"]
    assert judges[0]["auc"] == judges[1]["auc"] != judges[2]["auc"]

    # Pooled over the metrics set: no per_judge (the votes' index does not keep them).
    metrics_id = ok(acme.get(f"/evaluation/{results_id}")).json()["metrics_id"]
    pooled = ok(acme.get(f"/question/{metrics_id}/agreement")).json()
    assert all("per_judge" not in m for m in pooled["metrics"])


def _critiques() -> list[dict[str, Any]]:
    client = boto3.client("dynamodb", region_name="us-east-1")
    table = get_settings().critiques_table
    items: list[dict[str, Any]] = []
    for page in client.get_paginator("scan").paginate(TableName=table):
        items += page["Items"]
    return items


def test_each_judges_score_is_kept_with_the_vote(acme: Tenant, jurors: Any) -> None:
    results_id = seed(acme, list(NAMES))
    cast_votes(acme, results_id)
    items = _critiques()
    for item in items:
        pair = item["pair_id"]["S"]
        if item["metric_idx"]["N"] == "0":
            want = [float(JURORS[name](PAIRS[pair])) for name in NAMES]
            assert item["js"] == {"S": ",".join(map(repr, want)).join("[]")}, item
        else:
            assert "js" not in item  # the check: no jury judged it


def test_votes_stored_before_judges_scores_were_kept_take_their_pairs(
    acme: Tenant, jurors: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    results_id = seed(acme, list(NAMES))
    cast = cast_votes(acme, results_id)
    reads: list[list[str]] = []
    get_scored = results_store.get_scored

    def counted(tenant: str, results_id: str, pair_ids: Any) -> Any:
        reads.append(list(pair_ids))
        return get_scored(tenant, results_id, pair_ids)

    monkeypatch.setattr(results_store, "get_scored", counted)
    fresh = ok(acme.get(f"/evaluation/{results_id}/agreement")).json()
    assert reads == []  # every vote keeps each judge's score: the votes alone

    # Half the votes lose js, as votes stored before this change have none.
    client = boto3.client("dynamodb", region_name="us-east-1")
    table = get_settings().critiques_table
    stripped = [item for item in _critiques() if "js" in item][::2]
    for item in stripped:
        client.update_item(
            TableName=table,
            Key={"pk": item["pk"], "sk": item["sk"]},
            UpdateExpression="REMOVE js",
        )
    assert stripped and all(
        "js" not in i for i in _critiques() if i["sk"] in [s["sk"] for s in stripped]
    )

    legacy = ok(acme.get(f"/evaluation/{results_id}/agreement")).json()

    assert legacy == fresh
    assert_per_judge(legacy["metrics"][0]["per_judge"], cast, audit_only=False)
    # Their pairs were read once, together.
    assert len(reads) == 1
    assert sorted(reads[0]) == sorted({i["pair_id"]["S"] for i in stripped})


def test_a_result_without_a_jury_answers_as_before(acme: Tenant, jurors: Any) -> None:
    results_id = seed(acme, None)
    cast = cast_votes(acme, results_id)
    scores = jury_scores(acme, results_id)

    body = ok(acme.get(f"/evaluation/{results_id}/agreement")).json()

    fields = set(MetricAgreementOut.model_fields) - {"per_judge"}
    for metric in body["metrics"]:
        assert set(metric) == fields
    assert_matches_oracle(body["metrics"][0], observations(cast, scores, audit_only=False))
    # Nor are its votes stored with any judge's score.
    assert not any("js" in item for item in _critiques())


def test_a_vote_of_a_jury_of_five_stays_far_under_the_item_limit(acme: Tenant) -> None:
    critique = Critique(
        id="cr_1",
        pair_id="p" * 128,
        metric_idx=0,
        comment="x" * MAX_COMMENT_CHARS,
        vote=1,
        user="ann",
        user_email="ann@acme.test",
        time_ms=1,
        source="audit",
        score=3.1415926535897931,
    )
    critiques_store.upsert("acme", "ev_1", "m_1", critique, [1 / 3, 2 / 3, 4 / 3, 5 / 3, 7 / 3])
    (item,) = _critiques()
    assert item_size(item) < 400 * 1024
    assert len(item["js"]["S"]) < 120
