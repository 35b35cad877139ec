"""E10's not-applicable pairs: a metric a pair lacks what it needs for is left out of that
metric's statistics, lowest pairs, histograms and clusters, counted apart, never scored 1; the
figures are those of the applicable pairs alone, however the pairs were chunked. A comparison
counts a pair on a metric only where both results scored it."""

from __future__ import annotations

import math
import random
from collections.abc import Sequence

import pytest
from evalsvc.logic.comparisons import Tally
from evalsvc.logic.scored_pairs import score_pairs, summarize_result, summarize_totals, totals
from evalsvc.models.comparisons import CompareIn, MatchedMetric
from evalsvc.models.datasets import DatasetKind, Pair
from evalsvc.models.evaluations import EvaluationResult, ScoredPair
from evalsvc.models.metric_sets import missing
from evalsvc.scoring.checks import Score
from evalsvc.scoring.metric import PendingScores, scorers_for
from evalsvc.statistics.error_bars import cluster_digest, clustered_mean
from evalsvc.statistics.scores import summarize
from hypothesis import given, settings
from hypothesis import strategies as st

DEFINITIONS = ["check:non_empty", "check:token_f1", "embed:similarity"]


def result(
    definitions: Sequence[str] = DEFINITIONS, cluster_by: str | None = None
) -> EvaluationResult:
    return EvaluationResult(
        tenant="acme",
        results_id="ev_1",
        created_ms=0,
        dataset_id="ds",
        dataset_kind=DatasetKind.SEED,
        metrics_id="m",
        definitions=list(definitions),
        system_prompt="",
        pair_count=0,
        summaries=[],
        cluster_by=cluster_by,
    )


class FixedSimilarities:
    """An embeddings model that scores every (output, reference) item 3.0, and records them."""

    def __init__(self) -> None:
        self.items: list[tuple[str, str]] = []

    def begin(self, items: Sequence[tuple[str, str]]) -> PendingScores:
        self.items.extend(items)
        outer = self

        class Pending:
            def result(self) -> dict[int, Score]:
                return {i: Score(3.0, "similar") for i in range(len(items))}

            def close(self) -> None:
                outer.items.append(("closed", ""))

        return Pending()


def pairs() -> list[Pair]:
    return [
        Pair("a", "q", "the cat sat", reference="the cat sat"),
        Pair("b", "q", "a dog ran"),  # no reference: not applicable to 2 of the 3 metrics
        Pair("c", "q", "blue sky", reference="green grass"),
        Pair("d", "q", "", reference=""),  # an empty reference is a reference
    ]


def test_pairs_without_a_reference_are_not_applicable_and_never_scored() -> None:
    embeddings = FixedSimilarities()
    metrics = scorers_for(DEFINITIONS, judge=None, embeddings=embeddings)

    scoring = score_pairs(metrics, pairs(), "")

    assert scoring.complete
    by_id = {p.pair_id: p for p in scoring.scored}
    assert by_id["a"].scores == [5.0, 5.0, 3.0]
    assert by_id["b"].scores == [5.0, None, None]
    assert by_id["b"].reasons[1] == (
        "not applicable: check:token_f1 needs a reference, and the pair has none"
    )
    assert by_id["c"].scores[1] == 1.0  # applicable, and no word in common: 1, not absent
    assert by_id["d"].scores == [1.0, 5.0, 3.0]  # both empty: F1 is 1
    # The embeddings model saw only the pairs with a reference, then was closed.
    assert embeddings.items == [
        ("the cat sat", "the cat sat"),
        ("blue sky", "green grass"),
        ("", ""),
        ("closed", ""),
    ]


def test_a_metric_scored_with_a_model_that_is_not_configured_is_refused() -> None:
    with pytest.raises(Exception, match="EVALSVC_EMBEDDINGS"):
        scorers_for(["embed:similarity"], judge=None, embeddings=None)
    with pytest.raises(Exception, match="EVALSVC_LLM"):
        scorers_for(["rag:faithfulness"], judge=None)


def test_what_each_metric_needs() -> None:
    bare = Pair("p", "q", "a")
    full = Pair("p", "q", "a", reference="r", contexts=["c"])
    assert missing("check:exact_match", bare) == "reference"
    assert missing("rag:faithfulness", bare) == "contexts"
    assert missing("rag:faithfulness", Pair("p", "q", "a", contexts=[])) == "contexts"
    assert missing("rag:context_recall", Pair("p", "q", "a", contexts=["c"])) == "reference"
    for definition in ("check:exact_match", "rag:faithfulness", "rag:context_recall"):
        assert missing(definition, full) is None
    assert missing("Is it polite?", bare) is None
    assert missing("check:non_empty", bare) is None


def scored_pairs(rng: random.Random, count: int) -> list[ScoredPair]:
    out = []
    for i in range(count):
        first = float(rng.randint(1, 5))
        second = None if rng.random() < 0.4 else round(1 + 4 * rng.random(), 4)
        label = None if i % 7 == 0 else f"t{rng.randrange(6)}"
        out.append(
            ScoredPair(
                pair_id=f"p{i:05d}",
                index=i,
                scores=[first, second],
                reasons=["r", "r" if second is not None else "not applicable"],
                label_cluster=None if label is None else cluster_digest(label),
                input_cluster=cluster_digest(f"in{i % 5}"),
            )
        )
    return out


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), count=st.integers(1, 60), cut=st.integers(1, 7))
def test_figures_are_those_of_the_applicable_pairs_whatever_the_chunks(
    seed: int, count: int, cut: int
) -> None:
    rng = random.Random(seed)
    scored = scored_pairs(rng, count)
    definitions = ["check:non_empty", "check:token_f1"]
    whole = result(definitions, cluster_by="label")
    summarize_result(whole, scored)
    chunked = result(definitions, cluster_by="label")
    parts = [totals(scored[i : i + cut], 2, "label") for i in range(0, count, cut)]
    summarize_totals(chunked, parts)

    applicable = [p.scores[1] for p in scored if p.scores[1] is not None]
    skipped = count - len(applicable)
    for figures in (whole, chunked):
        assert figures.not_applicable_count(1) == skipped
        assert figures.not_applicable_count(0) == 0
        if applicable:
            expected = summarize([float(s) for s in applicable])
            summary = figures.summaries[1]
            assert summary is not None
            assert summary.mean == pytest.approx(expected.mean, abs=1e-12)
            assert summary.ci_low == pytest.approx(expected.ci_low, abs=1e-9)
            assert figures.histograms is not None and sum(figures.histograms[1]) == len(applicable)
            assert all(low.score is not None for low in figures.lowest[1])
            assert {low.pair_id for low in figures.lowest[1]} <= {
                p.pair_id for p in scored if p.scores[1] is not None
            }
        else:
            assert figures.summaries[1] is None
            assert figures.clustered is not None and figures.clustered[1] is None
    # The clustered figures of metric 1 are those of its applicable pairs alone.
    if len(applicable) >= 2:
        kept = [p for p in scored if p.scores[1] is not None]
        clusters = [
            p.label_cluster if p.label_cluster is not None else f"single-{p.pair_id}" for p in kept
        ]
        oracle = clustered_mean(
            (cluster, float(p.scores[1] or 0)) for cluster, p in zip(clusters, kept, strict=True)
        )
        for figures in (whole, chunked):
            assert figures.clustered is not None
            got = figures.clustered[1]
            assert got is not None
            assert got.n == oracle.n and got.clusters == oracle.clusters
            if oracle.se_clustered is None:
                assert got.se_clustered is None
            else:
                assert got.se_clustered is not None
                assert math.isclose(got.se_clustered, oracle.se_clustered, rel_tol=1e-9)


def test_a_comparison_counts_a_pair_only_where_both_results_scored_it() -> None:
    matched = [MatchedMetric("check:token_f1", 0, 0)]
    tally = Tally(matched, threshold=1.0, limit=10)
    tally.add("a", [2.0], [4.0])
    tally.add("b", [None], [4.0])  # the baseline could not score it
    tally.add("c", [3.0], [None])
    tally.add("d", [5.0], [1.0])
    comparison = tally.comparison(CompareIn(baseline_id="x", candidate_id="y"))
    metric = comparison.metrics[0]
    assert comparison.pairs_matched == 4
    assert metric.stats.n == 2
    assert metric.not_applicable == 2
    assert metric.stats.mean_diff == pytest.approx(-1.0)
    assert [c.pair_id for c in comparison.regressions] == ["d"]
    assert [c.pair_id for c in comparison.improvements] == ["a"]
