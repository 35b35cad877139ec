"""What the pairwise request and its queued kind share (logic.pairwise_judging): the sample of
shared pairs, comparisons asked in both orders, equal outputs tied without a call, the counts."""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Sequence
from typing import Any

import pytest
from evalsvc.logic.pairwise_judging import (
    Texts,
    calls_per_pair,
    counts_of,
    judge_pairs,
    matchups_of,
    sample,
)
from evalsvc.models.pairwise import Counts
from evalsvc.scoring.judges import Answers, Comparison
from hypothesis import given
from hypothesis import strategies as st

IDS = [f"p{k:05d}" for k in range(1_000)]


def test_a_sample_is_the_same_for_the_same_run_and_another_for_another() -> None:
    one = sample(IDS, 100, "pw_a")
    assert one == sample(IDS, 100, "pw_a") == sorted(one)
    assert len(set(one)) == 100 and set(one) <= set(IDS)
    assert one != sample(IDS, 100, "pw_b")
    assert sample(IDS[:50], 100, "pw_a") == IDS[:50]  # fewer than asked: all of them


def test_a_sample_is_uniform_over_the_pairs() -> None:
    # 400 runs' samples of 100 of 1,000 pairs: each pair is in about 40 of them. Under a
    # uniform draw, the count of one pair is Binomial(400, 0.1): mean 40, sd 6; the spread over
    # the 1,000 pairs stays within 40 -/+ 5 sd for every one (deterministic: fixed run ids).
    seen = Counter(pid for k in range(400) for pid in sample(IDS, 100, f"pw_{k}"))
    counts = [seen.get(pid, 0) for pid in IDS]
    assert all(10 <= c <= 70 for c in counts)
    assert sum(counts) == 400 * 100
    # ...and not by the pair's place in the order: the first and last hundred fare alike
    assert abs(sum(counts[:100]) - sum(counts[-100:])) < 400


class RecordingJudge:
    """Stands in for CachedJudge: answers every comparison "first", records what was asked."""

    def __init__(self) -> None:
        self.asked: list[Comparison] = []

    def begin_preferences(self, question: str, comparisons: Sequence[Comparison]) -> Any:
        self.asked.extend(comparisons)
        answers: dict[Hashable, tuple[int, str]] = {
            i: (1, "first") for i in range(len(comparisons))
        }

        class Run:
            def answers(self) -> Answers:
                return Answers(answers, complete=True)

            def close(self) -> None:
                pass

        return Run()


def test_both_orders_are_asked_and_equal_outputs_are_tied_without_a_call() -> None:
    judge = RecordingJudge()
    texts = {"p1": Texts("in", ["A", "B", "A"])}

    judged = judge_pairs(judge, "Q?", 3, True, texts, ["p1", "p2"])  # type: ignore[arg-type]

    # runs 0 and 2 have the same output: no call; (0, 1) and (1, 2) in both orders
    assert [(c.first, c.second) for c in judge.asked] == [
        ("A", "B"),
        ("B", "A"),
        ("B", "A"),
        ("A", "B"),
    ]
    assert [(v.a, v.b, v.winner) for v in judged.verdicts] == [
        (0, 1, "tie"),
        (0, 2, "tie"),
        (1, 2, "tie"),
    ]
    equal = judged.verdicts[1]
    assert equal.first_order is None and equal.second_order is None
    counts = counts_of(judged.verdicts)
    assert counts.orders == Counter({"first|first": 2})  # the equal pair made no judgement
    assert Counts.from_json(counts.as_json()) == counts


@given(runs=st.integers(2, 8), both=st.booleans())
def test_calls_per_pair_count_every_matchup_in_each_order(runs: int, both: bool) -> None:
    assert len(matchups_of(runs)) == runs * (runs - 1) // 2
    assert calls_per_pair(runs, both) == len(matchups_of(runs)) * (2 if both else 1)


def test_without_a_judge_only_equal_outputs_can_be_compared() -> None:
    equal = {"p1": Texts("in", ["A", "A"])}
    assert [v.winner for v in judge_pairs(None, "Q?", 2, True, equal, ["p1"]).verdicts] == ["tie"]
    with pytest.raises(Exception, match="judge"):
        judge_pairs(None, "Q?", 2, True, {"p1": Texts("in", ["A", "B"])}, ["p1"])
