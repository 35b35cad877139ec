"""`cluster_by: "conversation"` (E6, E11): pairs with one conversation_id share a cluster, a pair
without one is its own. The cluster is named when the pair is scored (a digest of the id, kept
with the scored pair as `cc` only when it has one, so other scored pairs are stored as before);
the clustered figures, inline or from any chunking, and a comparison's (by the baseline pair's
conversation) are those of the formula computed with numpy and scipy."""

from __future__ import annotations

import itertools
import math
import random
from typing import Any, get_args

import numpy as np
import pytest
from evalsvc.logic.comparisons import Tally, merge
from evalsvc.logic.scored_pairs import score_pairs, summarize_result, summarize_totals, totals
from evalsvc.models.comparisons import CompareIn, MatchedMetric
from evalsvc.models.datasets import DatasetKind, Pair
from evalsvc.models.evaluations import ClusterBy, EvaluateIn, EvaluationResult, ScoredPair
from evalsvc.scoring.metric import scorers_for
from evalsvc.statistics.error_bars import cluster_digest
from evalsvc.storage.results.scored import scored_from_item, scored_item
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.error_bar_oracles import oracle_clustered

DEFINITIONS = ["check:max_words:4", "check:contains:please"]
WORDS = ["please", "thanks", "the", "answer", "is", "a", "long", "reply"]


def result(cluster_by: str | None = "conversation") -> EvaluationResult:
    return EvaluationResult(
        tenant="acme",
        results_id="ev_1",
        created_ms=0,
        dataset_id="ds",
        dataset_kind=DatasetKind.SEED,
        metrics_id="m",
        definitions=list(DEFINITIONS),
        system_prompt="",
        pair_count=0,
        summaries=[],
        cluster_by=cluster_by,
    )


def conversation_of(i: int) -> str | None:
    """23 conversations, their pairs spread through the dataset; every seventh pair in none."""
    return None if i % 7 == 6 else f"conversation {(i * 5) % 23}"


def pairs(count: int, seed: int = 0) -> list[Pair]:
    """Pairs whose outputs move with their conversation, labelled and with inputs that say
    nothing of it (so that clustering by label or input would differ)."""
    rng = random.Random(seed)
    out = []
    for i in range(count):
        conversation = conversation_of(i)
        topic = (i * 5) % 23
        length = 1 + (topic + rng.randrange(3)) % 7
        words = " ".join(WORDS[(topic + k + seed) % len(WORDS)] for k in range(length))
        out.append(
            Pair(
                f"p{i:04d}",
                f"question {i}",
                words,
                labels=[f"label {i % 3}"],
                conversation_id=conversation,
            )
        )
    return out


def keys_of(data: list[Pair]) -> list[str]:
    """Each pair's cluster as the contract says: its conversation, or its own."""
    return [p.conversation_id or f"own {p.id}" for p in data]


def scored(data: list[Pair]) -> list[ScoredPair]:
    scoring = score_pairs(scorers_for(DEFINITIONS, judge=None), data, "")
    assert scoring.complete
    return scoring.scored


# ---- the cluster a scored pair falls in --------------------------------------------------------


def test_conversation_is_a_cluster_by_and_the_default_stays_none() -> None:
    assert get_args(ClusterBy) == ("label", "input", "conversation")
    assert EvaluateIn.model_validate({"seed_data_id": "ds"}).cluster_by is None
    body = EvaluateIn.model_validate({"seed_data_id": "ds", "cluster_by": "conversation"})
    assert body.cluster_by == "conversation"
    compare = CompareIn.model_validate(
        {"baseline_id": "a", "candidate_id": "b", "cluster_by": "conversation"}
    )
    assert compare.cluster_by == "conversation"


def test_pairs_of_one_conversation_share_a_cluster_and_pairs_without_one_have_none() -> None:
    data = [
        Pair("a", "hi", "please", conversation_id="c1"),
        Pair("b", "and then?", "thanks", conversation_id="c1"),
        Pair("c", "hi", "please", conversation_id="c2"),
        Pair("d", "hi", "please"),
        Pair("e", "hi", "please"),
        Pair("f", "hi", "please", conversation_id="C1"),
    ]

    by_id = {p.pair_id: p for p in scored(data)}

    assert by_id["a"].conversation_cluster == by_id["b"].conversation_cluster
    assert by_id["a"].conversation_cluster == cluster_digest("c1")
    assert len(by_id["a"].conversation_cluster or "") == 16
    assert by_id["c"].conversation_cluster == cluster_digest("c2")
    assert by_id["f"].conversation_cluster not in (None, by_id["a"].conversation_cluster)
    assert by_id["d"].conversation_cluster is None and by_id["e"].conversation_cluster is None
    # The other clusters are named as ever.
    assert by_id["a"].input_cluster == by_id["c"].input_cluster == cluster_digest("hi")


def test_a_scored_pair_keeps_its_conversation_cluster_only_when_it_has_one() -> None:
    with_one, without = scored(
        [Pair("a", "hi", "please", conversation_id="c1"), Pair("b", "hi", "please")]
    )

    item = scored_item("pk", with_one)
    assert item["cc"] == {"S": cluster_digest("c1")}
    assert scored_from_item(item) == with_one
    plain = scored_item("pk", without)
    assert "cc" not in plain
    assert set(plain) == {"pk", "sk", "idx", "scores", "reasons", "ic"}
    assert scored_from_item(plain) == without


# ---- the clustered figures ---------------------------------------------------------------------


def test_the_clustered_figures_by_conversation_are_numpys_inline_and_chunked() -> None:
    data = pairs(300)
    scores = scored(data)
    whole, chunked = result(), result()
    summarize_result(whole, scores)
    summarize_totals(
        chunked, (totals(scores[k : k + 40], 2, "conversation") for k in range(0, 300, 40))
    )

    keys = keys_of(data)
    assert len(set(keys)) == 23 + sum(1 for p in data if p.conversation_id is None)
    for m in range(2):
        expected = oracle_clustered([p.scores[m] for p in scores], keys)  # type: ignore[misc]
        for got in (whole, chunked):
            assert got.clustered is not None
            figures = got.clustered[m]
            assert figures.clusters == expected["clusters"] and figures.n == 300
            assert figures.se_clustered == pytest.approx(expected["se_clustered"], rel=1e-9)
            assert figures.ci_low_clustered == pytest.approx(expected["ci_low_clustered"], abs=1e-6)
            assert figures.ci_high_clustered == pytest.approx(
                expected["ci_high_clustered"], abs=1e-6
            )
    # Not the figures of the other clusterings: the conversations are what counted.
    by_label = result("label")
    summarize_result(by_label, scores)
    assert by_label.clustered is not None and whole.clustered is not None
    assert by_label.clustered[0].clusters == 3 != whole.clustered[0].clusters


def test_without_any_conversation_id_every_pair_is_its_own_cluster() -> None:
    data = [Pair(p.id, p.input, p.output, labels=p.labels) for p in pairs(50)]
    scores = scored(data)
    own = result()
    summarize_result(own, scores)

    assert own.clustered is not None
    for m, figures in enumerate(own.clustered):
        values = np.asarray([p.scores[m] for p in scores], dtype=float)
        assert figures.clusters == 50
        # every pair its own cluster: the population-variance standard error
        assert figures.se_clustered == pytest.approx(
            math.sqrt(np.var(values, ddof=0) / 50), rel=1e-9
        )


def test_one_conversation_has_no_clustered_interval() -> None:
    data = [Pair(p.id, p.input, p.output, conversation_id="one") for p in pairs(20)]
    one = result()
    summarize_result(one, scored(data))

    assert one.clustered is not None
    assert [(c.clusters, c.se_clustered, c.ci_low_clustered) for c in one.clustered] == [
        (1, None, None)
    ] * 2


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    count=st.integers(1, 90),
    cuts=st.lists(st.integers(1, 89), max_size=6),
)
def test_any_chunking_gives_the_same_figures(seed: int, count: int, cuts: list[int]) -> None:
    scores = scored(pairs(count, seed % 5))
    bounds = sorted({0, count, *(c for c in cuts if c < count)})
    parts: list[dict[str, Any]] = [
        totals(scores[a:b], 2, "conversation") for a, b in itertools.pairwise(bounds)
    ]
    random.Random(seed).shuffle(parts)
    whole, chunked = result(), result()
    summarize_result(whole, scores)
    summarize_totals(chunked, iter(parts))

    assert whole.clustered is not None and chunked.clustered is not None
    for a, b in zip(whole.clustered, chunked.clustered, strict=True):
        assert (a.n, a.clusters, a.mean) == (b.n, b.clusters, b.mean)
        if a.se_clustered is None:
            assert b.se_clustered is None
        else:
            assert b.se_clustered == pytest.approx(a.se_clustered, rel=1e-9, abs=1e-15)


# ---- comparisons -------------------------------------------------------------------------------


def rows(scores: list[ScoredPair]) -> list[tuple[str, list[float | None], Any, Any, Any]]:
    """The scored pairs as score_pages(clusters=True) reads them, in pair id order."""
    return sorted(
        (p.pair_id, p.scores, p.label_cluster, p.input_cluster, p.conversation_cluster)
        for p in scores
    )


def test_a_comparison_clusters_by_the_baseline_pairs_conversation() -> None:
    base_pairs = pairs(120, seed=1)
    # The candidate's pairs are in other conversations: the baseline's are what count.
    cand_pairs = [
        Pair(p.id, p.input, p.output, conversation_id=f"x {p.id}") for p in pairs(120, seed=2)
    ]
    baseline, candidate = scored(base_pairs), scored(cand_pairs)
    matched = [MatchedMetric(d, m, m) for m, d in enumerate(DEFINITIONS)]
    tally = Tally(matched, None, 5, "conversation")

    merge(
        iter(rows(baseline)),
        iter(sorted((p.pair_id, p.scores) for p in candidate)),
        tally,
    )

    comparison = tally.comparison(
        CompareIn(baseline_id="a", candidate_id="b", cluster_by="conversation")
    )
    keys = {p.id: k for p, k in zip(base_pairs, keys_of(base_pairs), strict=True)}
    by_id = {p.pair_id: p for p in baseline}
    cand = {p.pair_id: p for p in candidate}
    ids = sorted(by_id)
    for m, metric in enumerate(comparison.metrics):
        d = [cand[i].scores[m] - by_id[i].scores[m] for i in ids]  # type: ignore[operator]
        expected = oracle_clustered(d, [keys[i] for i in ids])
        assert metric.clustered is not None
        assert metric.clustered.clusters == expected["clusters"]
        assert metric.clustered.se_clustered == pytest.approx(expected["se_clustered"], rel=1e-9)
        assert metric.clustered.ci_low_clustered == pytest.approx(
            expected["ci_low_clustered"], abs=1e-6
        )
