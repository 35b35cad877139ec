"""E6's figures as a result gets them: from each chunk's totals (logic.scored_pairs) added up
at the finish, one chunk at a time (ErrorBarTotals), around the result's exact mean
(error_bars.clustered_around), whatever the chunking; the judge's noise from exact integer
numerators; the cluster names kept with each scored pair."""

from __future__ import annotations

import itertools
import math
import random
from typing import Any

import numpy as np
import pytest
from evalsvc.logic.scored_pairs import summarize_result, summarize_totals, totals
from evalsvc.models.datasets import DatasetKind
from evalsvc.models.evaluations import EvaluationResult, ScoredPair
from evalsvc.statistics.error_bars import (
    cluster_digest,
    clustered_around,
    clustered_mean,
    judge_noise_from,
    judge_noise_sd,
    noise_numerator,
)
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as scipy_stats

DEFINITIONS = ["check:max_words:4", "Is it polite?"]


def result(cluster_by: str | None, judge_samples: int = 1) -> EvaluationResult:
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
        judge_samples=judge_samples,
    )


def scored(rng: random.Random, count: int, labels: int, k: int = 1) -> list[ScoredPair]:
    """Pairs in `labels` topics (every ninth unlabelled), scores that move with the topic; the
    question judged k times."""
    out = []
    for i in range(count):
        topic = rng.randrange(labels)
        samples = [min(5, max(1, topic % 5 + 1 + rng.choice((-1, 0, 0, 1)))) for _ in range(k)]
        check = float(1 + (topic + i % 2) % 5)
        out.append(
            ScoredPair(
                pair_id=f"p{i:06d}",
                index=i,
                scores=[check, math.fsum(samples) / k],
                reasons=["r", "r"],
                label_cluster=None if i % 9 == 8 else cluster_digest(f"topic {topic}"),
                input_cluster=cluster_digest(f"input {i // 3}"),
                samples=[[], samples] if k > 1 else None,
            )
        )
    return out


def oracle(values: list[float], keys: list[str]) -> tuple[int, float, float, float]:
    s = np.asarray(values)
    mean = s.mean()
    groups: dict[str, float] = {}
    for key, value in zip(keys, s, strict=True):
        groups[key] = groups.get(key, 0.0) + (value - mean)
    se = float(np.sqrt(np.sum(np.square(list(groups.values())))) / len(s))
    t = float(scipy_stats.t.ppf(0.975, len(groups) - 1))
    return len(groups), se, float(mean - t * se), float(mean + t * se)


def keys_of(pairs: list[ScoredPair], by: str) -> list[str]:
    if by == "input":
        return [str(p.input_cluster) for p in pairs]
    return [p.label_cluster or f"own {p.pair_id}" for p in pairs]


@pytest.mark.parametrize("by", ["label", "input"])
def test_one_chunk_and_many_give_the_clustered_figures_of_numpy(by: str) -> None:
    pairs = scored(random.Random(7), 900, 40)
    whole, chunked = result(by), result(by)
    summarize_result(whole, pairs)
    summarize_totals(chunked, (totals(pairs[k : k + 70], 2, by) for k in range(0, 900, 70)))

    for m in range(2):
        clusters, se, low, high = oracle([p.scores[m] for p in pairs], keys_of(pairs, by))
        for got in (whole, chunked):
            assert got.clustered is not None
            figures = got.clustered[m]
            assert figures.clusters == clusters and figures.n == 900
            assert figures.mean == got.summaries[m].mean  # around the summary's exact mean
            assert figures.se_clustered == pytest.approx(se, rel=1e-9)
            assert figures.ci_low_clustered == pytest.approx(low, abs=1e-6)
            assert figures.ci_high_clustered == pytest.approx(high, abs=1e-6)
        assert chunked.clustered is not None and whole.clustered is not None
        assert chunked.clustered[m].se_clustered == pytest.approx(
            whole.clustered[m].se_clustered, rel=1e-12
        )
    assert chunked.summaries == whole.summaries


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    count=st.integers(1, 120),
    labels=st.integers(1, 30),
    cuts=st.lists(st.integers(1, 119), max_size=8),
    by=st.sampled_from(["label", "input"]),
)
def test_any_chunking_gives_the_same_figures(
    seed: int, count: int, labels: int, cuts: list[int], by: str
) -> None:
    pairs = scored(random.Random(seed), count, labels, k=3)
    bounds = sorted({0, count, *(c for c in cuts if c < count)})
    parts: list[dict[str, Any]] = [totals(pairs[a:b], 2, by) for a, b in itertools.pairwise(bounds)]
    random.Random(seed).shuffle(parts)  # chunks are counted in any order
    whole, chunked = result(by, 3), result(by, 3)
    summarize_result(whole, pairs)
    summarize_totals(chunked, iter(parts))

    assert whole.clustered is not None and chunked.clustered is not None
    for a, b in zip(whole.clustered, chunked.clustered, strict=True):
        assert (a.n, a.clusters, a.mean) == (b.n, b.clusters, b.mean)
        if a.se_clustered is None:
            assert b.se_clustered is None and b.ci_low_clustered is None
        else:
            assert b.se_clustered == pytest.approx(a.se_clustered, rel=1e-9, abs=1e-15)
    assert whole.judge_noise == chunked.judge_noise  # exact: integer numerators


def test_one_cluster_has_no_interval_and_all_unlabelled_is_every_pair_its_own() -> None:
    pairs = scored(random.Random(1), 50, 1)
    for p in pairs:
        p.label_cluster = cluster_digest("the one topic")
    one = result("label")
    summarize_result(one, pairs)
    assert one.clustered is not None
    assert [(c.clusters, c.se_clustered, c.ci_low_clustered) for c in one.clustered] == [
        (1, None, None)
    ] * 2

    for p in pairs:
        p.label_cluster = None
    own = result("label")
    summarize_result(own, pairs)
    assert own.clustered is not None
    for m, figures in enumerate(own.clustered):
        values = np.asarray([p.scores[m] for p in pairs])
        assert figures.clusters == 50
        # every pair its own cluster: the population-variance standard error
        assert figures.se_clustered == pytest.approx(
            math.sqrt(np.var(values, ddof=0) / 50), rel=1e-9
        )


def test_a_result_without_cluster_by_has_no_clustered_figures() -> None:
    plain = result(None)
    summarize_result(plain, scored(random.Random(2), 20, 4))
    assert plain.clustered is None and plain.judge_noise is None
    assert "clusters" not in totals(scored(random.Random(2), 20, 4), 2)


@pytest.mark.parametrize("k", [1, 2, 3, 4, 5])
def test_judge_noise_from_the_totals_is_numpys(k: int) -> None:
    pairs = scored(random.Random(k), 300, 12, k=max(k, 1))
    got = result(None, k)
    summarize_totals(got, (totals(pairs[a : a + 64], 2) for a in range(0, 300, 64)))
    if k == 1:
        assert got.judge_noise is None
        return
    samples = [p.samples[1] for p in pairs if p.samples is not None]
    expected = math.sqrt(np.mean(np.var(np.asarray(samples, dtype=float), ddof=1, axis=1)))
    assert got.judge_noise is not None
    assert got.judge_noise[0] is None  # a check has no judge noise
    assert got.judge_noise[1] == pytest.approx(expected, abs=1e-12)
    assert got.judge_noise[1] == pytest.approx(judge_noise_sd(samples), abs=1e-12)


@given(st.lists(st.integers(1, 5), min_size=1, max_size=5))
def test_the_noise_numerator_is_k_k_minus_1_times_the_sample_variance(samples: list[int]) -> None:
    k = len(samples)
    numerator = noise_numerator(samples)
    assert numerator >= 0
    if k > 1:
        assert numerator / (k * (k - 1)) == pytest.approx(np.var(samples, ddof=1), abs=1e-12)
        assert judge_noise_from(numerator, 1, k) == pytest.approx(
            np.std(samples, ddof=1), abs=1e-12
        )
    else:
        assert numerator == 0 and judge_noise_from(numerator, 1, k) is None


def test_clustered_around_agrees_with_clustered_mean() -> None:
    rng = random.Random(3)
    items = [(rng.randrange(60), float(rng.randint(1, 5))) for _ in range(2_000)]
    one_pass = clustered_mean(items)
    sums: dict[int, list[float]] = {}
    for key, value in items:
        sums.setdefault(key, [0, 0.0])
        sums[key][0] += 1
        sums[key][1] += value
    around = clustered_around(one_pass.mean, ((int(n), s) for n, s in sums.values()))
    assert (around.n, around.clusters) == (one_pass.n, one_pass.clusters)
    assert around.se_clustered == pytest.approx(one_pass.se_clustered, rel=1e-12)
    assert around.ci_low_clustered == pytest.approx(one_pass.ci_low_clustered, rel=1e-12)


@pytest.mark.parametrize(
    "clusters", [[], [(0, 0.0)], [(1, float("nan")), (1, 2.0)], [(1, float("inf")), (2, 1.0)]]
)
def test_clustered_around_refuses_what_has_no_meaning(clusters: list[tuple[int, float]]) -> None:
    with pytest.raises(ValueError):
        clustered_around(3.0, clusters)


def test_cluster_names_are_short_stable_and_tell_texts_apart() -> None:
    names = {cluster_digest(f"topic {k}") for k in range(10_000)}
    assert len(names) == 10_000
    assert cluster_digest("billing") == cluster_digest("billing")
    assert cluster_digest("billing") != cluster_digest("billing ")
    long = "𝄞" * 100_000  # 400 KB of 4-byte UTF-8
    assert len(cluster_digest(long)) == 16 and len(cluster_digest("")) == 16
    assert len(cluster_digest("\ud800 lone surrogate")) == 16
