"""People's agreement with each other (E12) on GET /evaluation/{id}/agreement and
GET /question/{id}/agreement: several API keys vote; reviewers, pairs_multi, Krippendorff's
alpha (against the `krippendorff` package) and percent agreement (the long way), with every
vote or audit votes only, per result and pooled over a metrics set's results."""

from __future__ import annotations

import math
from collections.abc import Hashable
from typing import Any

from tests.integration.conftest import Tenant
from tests.integration.test_agreement import METRICS, evaluated, vote, voter
from tests.unit.test_people_stats import oracle_alpha, percent_the_long_way

# (unit, person) -> (vote, source)
Cast = dict[tuple[Hashable, str], tuple[int, str]]


def expected(cast: Cast, audit_only: bool) -> dict[str, Any]:
    units: dict[Hashable, list[int]] = {}
    people = set()
    for (unit, person), (value, source) in cast.items():
        if audit_only and source != "audit":
            continue
        units.setdefault(unit, []).append(value)
        people.add(person)
    shared = [values for values in units.values() if len(values) >= 2]
    return {
        "reviewers": len(people),
        "pairs_multi": len(shared),
        "alpha": oracle_alpha(shared) if shared else None,
        "percent_agreement": percent_the_long_way(shared),
    }


def assert_people(got: dict[str, Any], cast: Cast, audit_only: bool = False) -> None:
    want = expected(cast, audit_only)
    assert (got["reviewers"], got["pairs_multi"]) == (want["reviewers"], want["pairs_multi"])
    assert got["alpha"] is not None and want["alpha"] is not None
    assert math.isclose(got["alpha"], want["alpha"], abs_tol=1e-9)
    assert math.isclose(got["percent_agreement"], want["percent_agreement"], abs_tol=1e-9)


def cast_votes(acme: Tenant, results_id: str, pairs: int, cast: Cast, unit: Any = None) -> None:
    """Four people vote on metric 0, each on some pairs (so pairs get 1 to 4 votes), half of
    them from an audit sample, with agreement and disagreement; the first changes one vote."""
    people = {
        "ann": acme,
        "bo": voter(acme, "bo"),
        "cy": voter(acme, "cy"),
        "di": voter(acme, "di"),
    }
    for k, (name, person) in enumerate(people.items()):
        for i in range(pairs):
            if (i + k) % (k + 2) == 1:
                continue  # not everybody votes on everything
            value = [1, -1, 0][(i * (k + 1) // 3 + (i % 2) * k) % 3]
            source = "audit" if (i + k) % 2 == 0 else "review"
            vote(person, results_id, f"p{i:02d}", 0, value, source=source)
            cast[((unit, f"p{i:02d}"), name)] = (value, source)
    # ann replaces a vote: only the new one counts
    old, source = cast[((unit, "p00"), "ann")]
    vote(acme, results_id, "p00", 0, -old or 1, source=source)
    cast[((unit, "p00"), "ann")] = (-old or 1, source)


def test_people_agreement_of_a_result_matches_the_package(acme: Tenant) -> None:
    assert acme.post("/specify_questions", {"metrics": METRICS}).status_code == 200
    results_id = evaluated(acme, count=16)
    cast: Cast = {}
    cast_votes(acme, results_id, 16, cast)

    everything = acme.get(f"/evaluation/{results_id}/agreement").json()["metrics"]
    audit = acme.get(f"/evaluation/{results_id}/agreement?source=audit").json()["metrics"]

    assert everything[0]["people"]["reviewers"] == 4
    assert everything[0]["people"]["pairs_multi"] > audit[0]["people"]["pairs_multi"] >= 2
    assert_people(everything[0]["people"], cast)
    assert_people(audit[0]["people"], cast, audit_only=True)
    # nobody voted on the other metrics
    for metric in (everything[1], everything[2], audit[1]):
        assert metric["people"] == {
            "reviewers": 0,
            "pairs_multi": 0,
            "alpha": None,
            "percent_agreement": None,
        }


def test_one_person_or_one_shared_pair_gives_no_alpha(acme: Tenant) -> None:
    assert acme.post("/specify_questions", {"metrics": ["check:non_empty"]}).status_code == 200
    results_id = evaluated(acme, count=4)
    for pair in ("p00", "p01", "p02"):
        vote(acme, results_id, pair, 0, 1)

    alone = acme.get(f"/evaluation/{results_id}/agreement").json()["metrics"][0]["people"]
    vote(voter(acme, "bo"), results_id, "p00", 0, -1)
    one_shared = acme.get(f"/evaluation/{results_id}/agreement").json()["metrics"][0]["people"]
    vote(voter(acme, "bo"), results_id, "p01", 0, 1)
    two_shared = acme.get(f"/evaluation/{results_id}/agreement").json()["metrics"][0]["people"]

    assert alone == {"reviewers": 1, "pairs_multi": 0, "alpha": None, "percent_agreement": None}
    assert one_shared == {
        "reviewers": 2,
        "pairs_multi": 1,
        "alpha": None,
        "percent_agreement": 0.0,
    }
    assert two_shared["pairs_multi"] == 2 and two_shared["percent_agreement"] == 0.5
    assert math.isclose(two_shared["alpha"], oracle_alpha([[1, -1], [1, 1]]), abs_tol=1e-9)


def test_pooled_over_a_metrics_set_a_unit_is_a_pair_of_a_result(acme: Tenant) -> None:
    metrics_id = acme.post("/specify_questions", {"metrics": METRICS}).json()["metrics_id"]
    first = evaluated(acme, "one", count=10)
    second = evaluated(acme, "two", count=12)  # the same pair ids p00.. as the first's
    cast: Cast = {}
    cast_votes(acme, first, 10, cast, unit=first)
    cast_votes(acme, second, 12, cast, unit=second)

    body = acme.get(f"/question/{metrics_id}/agreement").json()["metrics"]
    audit = acme.get(f"/question/{metrics_id}/agreement?source=audit").json()["metrics"]

    assert_people(body[0]["people"], cast)
    assert_people(audit[0]["people"], cast, audit_only=True)
    # p00 of the first and p00 of the second are two units, not one
    merged = {((None, pair), person): v for ((_, pair), person), v in cast.items()}
    assert body[0]["people"]["pairs_multi"] > expected(merged, False)["pairs_multi"]
    assert body[1]["people"]["reviewers"] == 0
