"""GET /evaluation/{id}/report, E12: per metric with audit votes, what people would say of every
pair (the judge's scores anchored to their votes), from how many audited pairs and judge scores,
beside what the judge alone says, and the audited pairs a ±5-point interval would need; the
figures are what GET /evaluation/{id}/anchored and POST /plan answer."""

from __future__ import annotations

import pytest
from evalsvc.logic import reports as report_logic

from tests.integration.conftest import Tenant
from tests.integration.test_reports import assert_safe, evaluate, metrics, report, seed

# 24 pairs: "please" in 15 of them (the check scores 5), not in 9 (it scores 1).
OUTPUTS = [f"please answer {k}" if k % 8 < 5 else f"answer {k}" for k in range(24)]


def vote(acme: Tenant, results_id: str, pair_id: str, value: int, source: str) -> None:
    body = {"pair_id": pair_id, "metric_idx": 0, "vote": value, "source": source}
    voted = acme.put(f"/vote_eval_pair/{results_id}", body)
    assert voted.status_code == 200, voted.text


def percent(share: float) -> str:
    return f"{100 * share:.1f}"


def test_the_page_says_what_people_would_say_from_the_audit_votes_alone(acme: Tenant) -> None:
    seed(acme, "d", OUTPUTS)
    results_id = evaluate(acme, "d", metrics(acme, ["check:contains:please", "check:non_empty"]))[
        "eval_results_id"
    ]
    # Audit votes on 8 pairs of metric 0 (people mostly agree with the check, not always);
    # review votes, cast on pairs chosen for their scores, never count
    for k, value in enumerate([1, 1, -1, 1, -1, -1, 1, -1]):
        vote(acme, results_id, f"p{k:02d}", value, "audit")
    vote(acme, results_id, "p10", -1, "review")
    vote(acme, results_id, "p11", -1, "review")

    page = assert_safe(report(acme, results_id).text)
    words = " ".join(page.words.split())

    said = acme.get(f"/evaluation/{results_id}/anchored?metric_idx=0").json()
    assert said["n_labeled"] == 8 and said["n_unlabeled"] == 16
    assert (
        f"People would say {percent(said['estimate'])} % meet "
        f"({percent(said['ci_low'])}\u2013{percent(said['ci_high'])} %, 95 % interval), "
        f"from 8 audited pairs and 16 judge scores; the judge alone says "
        f"{percent(said['judge_only']['estimate'])} %."
    ) in words
    body = {"result_id": results_id, "metric_idx": 0, "half_width": 0.05}
    planned = acme.post("/plan", body).json()
    assert planned["labels_now"] == 8
    if planned["labels_needed"] is None:
        assert (
            "±5 points cannot be reached with the judge's scores (they alone leave a wider "
            f"interval); without the judge it would need {planned['classical_labels_needed']:,} "
            "audited pairs; there are 8 now."
        ) in words
    else:
        assert (
            f"±5 points would need {planned['labels_needed']:,} audited pairs "
            f"({planned['classical_labels_needed']:,} without the judge); there are 8 now."
        ) in words
    # Metric 1 has no audit vote: nothing is said of it
    assert words.count("What people would say") == 1


@pytest.mark.parametrize(
    ("audited", "said"),
    [
        (1, "1 audited pair so far: at least 2 are needed"),
        (0, None),
    ],
)
def test_fewer_than_two_audited_pairs_say_how_many_there_are(
    acme: Tenant, audited: int, said: str | None
) -> None:
    seed(acme, "d", OUTPUTS)
    results_id = evaluate(acme, "d", metrics(acme, ["check:contains:please"]))["eval_results_id"]
    for k in range(audited):
        vote(acme, results_id, f"p{k:02d}", 1, "audit")
    vote(acme, results_id, "p05", 1, "review")
    words = " ".join(assert_safe(report(acme, results_id).text).words.split())
    if said is None:
        assert "What people would say" not in words and "People would say" not in words
    else:
        assert said in words
        assert "The judge alone says 62.5 %." in words  # 15 of 24 pairs scored 5, 9 scored 1
        assert "People would say" not in words and "Audited pairs needed" not in words


def test_votes_beyond_what_a_report_reads_leave_the_estimate_uncomputed_and_say_so(
    acme: Tenant, monkeypatch: pytest.MonkeyPatch
) -> None:
    seed(acme, "d", OUTPUTS)
    results_id = evaluate(acme, "d", metrics(acme, ["check:contains:please"]))["eval_results_id"]
    for k, value in enumerate([1, -1, 1, 1]):
        vote(acme, results_id, f"p{k:02d}", value, "audit")
    monkeypatch.setattr(report_logic, "CRITIQUE_READ_ITEMS", 3)

    words = " ".join(assert_safe(report(acme, results_id).text).words.split())

    assert "not computed: this result has more votes than one report reads" in words
    assert f"GET /evaluation/{results_id}/anchored?metric_idx=0 computes it" in words
    assert "People would say" not in words and "Audited pairs needed" not in words
