"""GET /evaluation/{id}/audit_sample?overlap=: a share of the caller's random draw taken from the
pairs other people audited (E12), in the caller's own order; review votes never qualify; the
rest and any shortfall from the usual draw; and every bad value."""

from __future__ import annotations

from typing import Any

import pytest
from evalsvc.logic import audit

from tests.integration.conftest import Tenant, ok
from tests.integration.test_agreement import evaluated, voter

METRIC = 1


@pytest.fixture
def result(acme: Tenant) -> str:
    metrics = {"metrics": ["check:max_words:6", "check:readability"]}
    assert acme.post("/specify_questions", metrics).status_code == 200
    return evaluated(acme, count=40)


def drawn(tenant: Tenant, results_id: str, query: str = "") -> list[str]:
    response = tenant.get(f"/evaluation/{results_id}/audit_sample?metric_idx={METRIC}&n=10{query}")
    assert response.status_code == 200, response.text
    return [p["pair_id"] for p in response.json()["pairs"]]


def votes_on(tenant: Tenant, results_id: str, pairs: list[str], **extra: Any) -> None:
    for pair_id in pairs:
        body = {"pair_id": pair_id, "metric_idx": METRIC, "vote": 1, **extra}
        ok(tenant.put(f"/vote_eval_pair/{results_id}", body))


def in_order_of(user: str, results_id: str, pairs: set[str]) -> list[str]:
    """`pairs` in `user`'s own random order (the ranking the audit draw uses)."""
    return sorted(pairs, key=lambda pair_id: audit._rank(results_id, METRIC, user, pair_id))


def test_a_fifth_of_ten_comes_from_another_persons_audit_votes(acme: Tenant, result: str) -> None:
    # Given bo audited the ten pairs of his own draw
    bo = voter(acme, "bo")
    bos = drawn(bo, result)
    votes_on(bo, result, bos, source="audit")
    before = drawn(acme, result)

    sample = drawn(acme, result, "&overlap=0.2")

    # Then acme's ten hold the first two of bo's pairs in acme's order (and whichever others
    # of bo's acme's usual draw holds by chance); the other eight are acme's usual draw
    # without those two; all in acme's order
    shared = in_order_of("ann", result, set(bos))[:2]
    assert len(sample) == len(set(sample)) == 10 and set(shared) <= set(sample)
    usual = [p for p in drawn(acme, result, "&n=40") if p not in shared]
    assert [p for p in sample if p not in shared] == usual[:8]
    assert sample == in_order_of("ann", result, set(sample))
    # overlap=0 is the draw as before; and the sample stays the same until acme votes
    assert drawn(acme, result, "&overlap=0") == before
    assert drawn(acme, result, "&overlap=0.2") == sample
    votes_on(acme, result, [shared[0]], source="audit")
    after = drawn(acme, result, "&overlap=0.2")
    assert shared[0] not in after
    assert set(in_order_of("ann", result, set(bos) - {shared[0]})[:2]) <= set(after)


def test_exactly_two_when_the_callers_usual_ten_hold_none_of_them(
    acme: Tenant, result: str
) -> None:
    # Given bo audited ten pairs, none of them among ann's usual ten
    usual = drawn(acme, result, "&n=40")
    bo = voter(acme, "bo")
    votes_on(bo, result, usual[10:20], source="audit")

    sample = drawn(acme, result, "&overlap=0.2")

    # Then two of ann's ten are bo's: the first two in ann's order; eight are her usual first
    assert sorted(sample) == sorted(usual[10:12] + usual[:8])
    assert len(set(sample) & set(usual[10:20])) == 2
    assert sample == in_order_of("ann", result, set(sample))
    # and bo, asking the same, gets no pair of his own back
    assert not set(drawn(bo, result, "&overlap=0.2")) & set(usual[10:20])


def test_review_votes_by_others_never_qualify(acme: Tenant, result: str) -> None:
    bo = voter(acme, "bo")
    votes_on(bo, result, drawn(bo, result, "&order=lowest"), source="review")
    votes_on(bo, result, drawn(bo, result, "&order=lowest"))  # review, the default

    assert drawn(acme, result, "&overlap=1") == drawn(acme, result)


def test_fewer_shared_pairs_than_asked_are_filled_from_the_usual_draw(
    acme: Tenant, result: str
) -> None:
    bo, cy = voter(acme, "bo"), voter(acme, "cy")
    audited = drawn(bo, result)[:1] + drawn(cy, result)[:1]
    votes_on(bo, result, audited[:1], source="audit")
    votes_on(cy, result, audited[1:], source="audit")
    # acme's own vote on cy's pair takes it out of acme's share
    votes_on(acme, result, audited[1:], source="review")
    usual = drawn(acme, result, "&n=40")

    sample = drawn(acme, result, "&overlap=0.5")

    assert audited[0] in sample and audited[1] not in sample
    assert [p for p in sample if p != audited[0]] == [p for p in usual if p != audited[0]][:9]


def test_half_rounds_up(acme: Tenant, result: str) -> None:
    usual = drawn(acme, result, "&n=40")
    votes_on(voter(acme, "bo"), result, usual[5:15], source="audit")

    def five(overlap: str) -> list[str]:
        query = f"metric_idx={METRIC}&n=5&overlap={overlap}"
        return [
            p["pair_id"]
            for p in ok(acme.get(f"/evaluation/{result}/audit_sample?{query}")).json()["pairs"]
        ]

    assert sorted(five("0.1")) == sorted([usual[5], *usual[:4]])  # 0.5: one pair
    assert five("0.09") == usual[:5]  # 0.45: none
    assert sorted(five("0.3")) == sorted([*usual[5:7], *usual[:3]])  # 1.5: two


@pytest.mark.parametrize(
    ("query", "said"),
    [
        ("overlap=-0.1", "overlap must be a share from 0 to 1"),
        ("overlap=1.01", "overlap must be a share from 0 to 1"),
        ("overlap=nan", "overlap must be a share from 0 to 1"),
        ("overlap=inf", "overlap must be a share from 0 to 1"),
        ("overlap=20%25", "overlap"),
        ("overlap=a+fifth", "overlap"),
        ("overlap=0.2&order=lowest", "overlap goes only with order=random"),
    ],
)
def test_a_bad_overlap_is_400_saying_why(acme: Tenant, result: str, query: str, said: str) -> None:
    response = acme.get(f"/evaluation/{result}/audit_sample?metric_idx=0&{query}")

    assert response.status_code == 400, response.text
    assert said in response.json()["error"]


def test_no_overlap_goes_with_either_order(acme: Tenant, result: str) -> None:
    ok(acme.get(f"/evaluation/{result}/audit_sample?metric_idx=0&order=lowest&overlap=0"))
    ok(acme.get(f"/evaluation/{result}/audit_sample?metric_idx=0&overlap=0.0"))
