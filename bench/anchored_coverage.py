"""Does the anchored interval (E12) hold what it says? A simulation with a known truth: a
population of 10,000 scored pairs, each with a person's label Y in {0, 1} (drawn once), and a
judge whose 1-5 score sees the label through noise and is too lenient. Audit samples of 50,
100, 200 and 400 pairs are drawn uniformly without replacement, as GET /evaluation/{id}/
audit_sample draws them, many times each; every draw is anchored by the service's own code,
U's moments built as the service builds them (`moments` of every scored pair's prediction,
then `without` the labeled pairs'), and the interval is checked against the population's true
share of label 1.

    .venv/bin/python bench/anchored_coverage.py [--reps 2000] [--seed 12] [--alpha 0.05]

Two judges over the same labels: a good one (score noise sd 0.9) and a poor one (sd 2.5), both
shifted up by one point of the scale. Per sample size it prints the coverage of the anchored and
the classical intervals (each with its Monte Carlo standard error √(c(1 - c)/reps)), the
anchored estimate's mean error and the judge alone's (the population's mean prediction less the
true share: a fixed number, since it reads every pair), the mean ratio of the two intervals'
widths, the mean effective_labels and lambda, and "se / sd of estimates": the mean se the
service gave over the spread of its estimates across the draws (above 1: wider than needed).

"expected coverage" is what the large-sample theory of sampling without replacement predicts
for this population: the estimate is, for a fixed lambda, a constant plus the mean over the
sample of Y - lambda·(M/N)·f (M = 10,000, N = M - n), so its variance is
(1 - n/M)·S²/n with S² that variable's variance over the population; the service's se² adds
lambda²·var_U(f)/N for U as if U were a fresh sample, and has no (1 - n/M). The coverage this
predicts is 2·Φ(z·se/sd) - 1, with lambda the population's. numpy draws the data and computes
that column; every estimate, se and interval is the service's.
"""

from __future__ import annotations

import argparse
import math
import time
from collections import Counter
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np
from evalsvc.statistics.anchored import Moments, anchored, moments, without
from evalsvc.statistics.scores import SCALE_MAX, SCALE_MIN, summarize_counts

POPULATION = 10_000
SIZES = (50, 100, 200, 400)
SHARE = 0.62  # the chance a pair's label is 1
LENIENCY = 1.0  # points of the 1-5 scale the judge adds
BASE, STEP = 1.5, 2.5  # the judge's score before noise: BASE + STEP·Y + LENIENCY
JUDGES = {"good": 0.9, "poor": 2.5}  # the sd of the judge's noise


@dataclass(frozen=True, slots=True)
class Population:
    labels: np.ndarray  # Y, 0.0 or 1.0
    predictions: np.ndarray  # f = (score - 1)/4
    truth: float  # the share of label 1
    whole: Moments  # f over every scored pair
    constant: bool  # every score equal


def population(rng: np.random.Generator, labels: np.ndarray, noise_sd: float) -> Population:
    """A judge's scores of the pairs, and what the service keeps of them."""
    raw = BASE + STEP * labels + LENIENCY + rng.normal(0.0, noise_sd, labels.size)
    scores = np.clip(np.rint(raw), SCALE_MIN, SCALE_MAX)
    predictions = (scores - SCALE_MIN) / (SCALE_MAX - SCALE_MIN)
    whole = moments(predictions.tolist())
    # The service reads the same moments from the result's stored summary (logic/anchored.py,
    # population): the scores' mean and sample sd, rescaled. Check that they agree.
    summary = summarize_counts(Counter(scores.tolist()))
    scale = SCALE_MAX - SCALE_MIN
    mean, variance = (summary.mean - SCALE_MIN) / scale, (summary.std_dev / scale) ** 2
    stored = Moments(whole.count, mean, variance)
    assert abs(stored.mean - whole.mean) < 1e-12, (stored, whole)
    assert abs(stored.variance - whole.variance) < 1e-12, (stored, whole)
    return Population(
        labels, predictions, float(labels.mean()), whole, bool(summary.min == summary.max)
    )


@dataclass(slots=True)
class Tally:
    covered: int = 0
    covered_classical: int = 0
    error: float = 0.0
    squares: float = 0.0
    se: float = 0.0
    width_ratio: float = 0.0
    ratios: int = 0
    effective: float = 0.0
    effectives: int = 0
    lam: float = 0.0
    reps: int = 0


def draw(rng: np.random.Generator, people: Population, n: int, alpha: float, tally: Tally) -> None:
    """One audit sample of n pairs, anchored as the service anchors it."""
    chosen = rng.choice(POPULATION, size=n, replace=False)
    labeled = list(
        zip(people.labels[chosen].tolist(), people.predictions[chosen].tolist(), strict=True)
    )
    unlabeled = without(people.whole, [f for _, f in labeled], people.constant)
    figures = anchored(labeled, unlabeled, alpha)
    ppi, classical = figures.anchored, figures.classical
    assert ppi is not None and classical is not None and figures.lam is not None
    tally.reps += 1
    tally.covered += ppi.ci_low <= people.truth <= ppi.ci_high
    tally.covered_classical += classical.ci_low <= people.truth <= classical.ci_high
    tally.error += ppi.estimate - people.truth
    tally.squares += (ppi.estimate - people.truth) ** 2
    tally.se += ppi.se
    tally.lam += figures.lam
    if classical.ci_high > classical.ci_low:
        tally.width_ratio += (ppi.ci_high - ppi.ci_low) / (classical.ci_high - classical.ci_low)
        tally.ratios += 1
    if figures.effective_labels is not None:
        tally.effective += figures.effective_labels
        tally.effectives += 1


def percent(hits: int, reps: int) -> str:
    share = hits / reps
    return f"{100 * share:.1f} ± {100 * math.sqrt(share * (1 - share) / reps):.1f}"


def mean_error(tally: Tally) -> str:
    mean = tally.error / tally.reps
    sd = math.sqrt(max(0.0, tally.squares / tally.reps - mean * mean))
    return f"{mean:+.4f} ± {sd / math.sqrt(tally.reps):.4f}"


def spread(tally: Tally) -> float:
    """The mean se the service gave over the sd of its estimates across the draws (above 1:
    the interval is wider than the estimate's spread needs)."""
    mean = tally.error / tally.reps
    sd = math.sqrt((tally.squares / tally.reps - mean * mean) * tally.reps / (tally.reps - 1))
    return (tally.se / tally.reps) / sd


def expected_coverage(people: Population, n: int, alpha: float) -> float:
    """The large-sample coverage of the anchored interval over samples of n of this population
    (see the module's notes), with lambda at its population value."""
    y, f = people.labels, people.predictions
    big_n = POPULATION - n
    var_f = float(f.var(ddof=1))
    lam = min(1.0, max(0.0, float(np.cov(y, f)[0, 1]) / ((1 + n / big_n) * var_f)))
    design = (1 - n / POPULATION) * float(np.var(y - lam * (POPULATION / big_n) * f, ddof=1)) / n
    formula = lam * lam * var_f / big_n + float(np.var(y - lam * f, ddof=1)) / n
    z = NormalDist().inv_cdf(1 - alpha / 2)
    return 2 * NormalDist().cdf(z * math.sqrt(formula / design)) - 1


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=2_000, help="audit samples per size")
    parser.add_argument("--seed", type=int, default=12)
    parser.add_argument("--alpha", type=float, default=0.05)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    labels = (rng.random(POPULATION) < SHARE).astype(float)
    started = time.perf_counter()
    print(
        f"{POPULATION:,} pairs, true share of label 1: {labels.mean():.4f}; "
        f"{args.reps:,} audit samples per size, alpha {args.alpha}, seed {args.seed}"
    )
    print()
    print(
        "| judge | corr(f, Y) | n | anchored coverage % | expected coverage % "
        "| classical coverage % "
        "| anchored mean error | se / sd of estimates | judge-only error "
        "| width anchored/classical | effective_labels | lambda |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    # Both judges' scores first, so that --reps changes the draws and not the populations.
    judges = {judge: population(rng, labels, noise_sd) for judge, noise_sd in JUDGES.items()}
    for judge, people in judges.items():
        noise_sd = JUDGES[judge]
        correlation = float(np.corrcoef(people.predictions, people.labels)[0, 1])
        judge_error = people.whole.mean - people.truth
        for n in SIZES:
            tally = Tally()
            for _ in range(args.reps):
                draw(rng, people, n, args.alpha, tally)
            print(
                f"| {judge} (sd {noise_sd}) | {correlation:.2f} | {n} "
                f"| {percent(tally.covered, tally.reps)} "
                f"| {100 * expected_coverage(people, n, args.alpha):.1f} "
                f"| {percent(tally.covered_classical, tally.reps)} "
                f"| {mean_error(tally)} | {spread(tally):.3f} | {judge_error:+.4f} "
                f"| {tally.width_ratio / max(tally.ratios, 1):.3f} "
                f"| {tally.effective / max(tally.effectives, 1):.0f} "
                f"| {tally.lam / tally.reps:.3f} |"
            )
    print()
    print(f"({time.perf_counter() - started:.1f} s)")


if __name__ == "__main__":
    main()
