"""E13: a jury of judges. Every judged (pair, metric) is asked of each judge of the jury (k times
each with judge_samples k), each judge with its own pool of calls, so that the judges are asked
at once and a pair takes the time of the slowest, not the sum. The pair's score is the jury's
aggregate of the judges' scores (their mean, or their median), its reason the reason of the
judge whose score is nearest the aggregate (the first in the jury's order among equals), and
each judge's own score is kept beside it.

A judge of the jury is a CachedJudge like the single judge: its verdicts are cached under its
own name, its calls are planned, metered and priced as its own model's, its structured output
negotiated with its own server. All the judges' plans are shown to the usage guard as one
bound before any call. A judge that fails after its retries fails the jury's judging, naming
the judge: a verdict from fewer judges than the jury's is never given.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from concurrent.futures import FIRST_EXCEPTION, wait
from dataclasses import dataclass

from evalsvc.core.deadlines import Deadline
from evalsvc.core.errors import InvalidInput
from evalsvc.core.observability import LogContextPool
from evalsvc.models.datasets import Pair
from evalsvc.models.metric_sets import Aggregate
from evalsvc.scoring.checks import Score
from evalsvc.scoring.judges import (
    AnswerCache,
    CachedJudge,
    JudgePlan,
    JudgeRun,
    configured_judge,
)
from evalsvc.scoring.llm import LLM
from evalsvc.scoring.llm.jurors import provider_for, unusable
from evalsvc.scoring.metric import Verdicts
from evalsvc.spending.meter import Bound, guard


def aggregate(scores: Sequence[float], how: Aggregate) -> float:
    """The jury's score of the judges' scores: their mean, or their median (the mean of the two
    middle ones for an even count)."""
    if how == "mean":
        return math.fsum(scores) / len(scores)
    ordered = sorted(scores)
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[middle]
    return (ordered[middle - 1] + ordered[middle]) / 2


def nearest(scores: Sequence[float], value: float) -> int:
    """The index of the score nearest `value` (the first among equals)."""
    return min(range(len(scores)), key=lambda r: (abs(scores[r] - value), r))


def verdict_of(verdicts: Sequence[Score], how: Aggregate) -> Score:
    """The jury's verdict of its judges' verdicts (in the jury's order)."""
    values = [v.value for v in verdicts]
    score = aggregate(values, how)
    return Score(score, verdicts[nearest(values, score)].reason)


@dataclass(slots=True)
class JuryPlan:
    """Each judge's plan, in the jury's order, and their bound together."""

    plans: list[JudgePlan]
    bound: Bound


class JuryRun:
    """The verdicts of every judge on every (question, pair) of one scoring, aggregated."""

    def __init__(self, jury: Jury, runs: list[JudgeRun]) -> None:
        self._jury = jury
        self._runs = runs

    def result(self) -> Verdicts:
        """The jury's verdicts: a (question, pair) has one when every judge gave its own;
        `complete` when each judge's are. A judge's failure is raised (naming it) once the
        verdicts every judge gave are cached."""
        # Each judge's verdicts are collected (and cached) at once, so that a judge's failure
        # stops the others' calls not yet started as soon as it comes, and no judge's cache
        # write waits for another's.
        with LogContextPool(max_workers=len(self._runs)) as pool:
            collecting = [pool.submit(run.result) for run in self._runs]
            done, _ = wait(collecting, return_when=FIRST_EXCEPTION)
            if any(f.exception() is not None for f in done):
                self.close()  # the calls not started are not made
            wait(collecting)
        failures = [e for f in collecting if (e := f.exception()) is not None]
        if failures:
            # The first in the jury's order: a judge's own failure, or what stopped it.
            raise failures[0]
        given = [f.result() for f in collecting]
        scores: dict[tuple[int, int], Score] = {}
        by_judge: dict[tuple[int, int], list[float]] = {}
        for key in given[0].scores:
            verdicts = [judged.scores.get(key) for judged in given]
            if any(v is None for v in verdicts):
                continue  # the deadline came before every judge's verdict
            complete = [v for v in verdicts if v is not None]
            scores[key] = verdict_of(complete, self._jury.aggregate)
            by_judge[key] = [v.value for v in complete]
        return Verdicts(
            scores,
            complete=all(judged.complete for judged in given),
            by_judge=by_judge,
        )

    def close(self) -> None:
        for run in self._runs:
            run.close()


class Jury:
    """Judges asked together, their verdicts aggregated (`aggregate`: mean or median)."""

    def __init__(self, judges: list[CachedJudge], how: Aggregate) -> None:
        self.judges = judges
        self.aggregate: Aggregate = how
        for judge in judges:
            judge.named = True
        # Each judge has its own pool: the rooms the meter holds for attempts in flight are
        # every judge's together.
        meter = judges[0].llm.meter
        meter.allow_rooms(sum(judge.llm.concurrency for judge in judges))

    @property
    def names(self) -> list[str]:
        return [judge.llm.name for judge in self.judges]

    def set_deadline(self, deadline: Deadline) -> None:
        for judge in self.judges:
            judge.set_deadline(deadline)

    def plan(
        self, questions: Sequence[str], pairs: Sequence[Pair], system_prompt: str, samples: int = 1
    ) -> JuryPlan:
        plans = [judge.plan(questions, pairs, system_prompt, samples) for judge in self.judges]
        bound = Bound()
        for plan in plans:
            bound += plan.bound
        return JuryPlan(plans, bound)

    def bound_unread(
        self,
        questions: Sequence[str],
        system_prompt: str,
        pair_count: int,
        pair_bytes: int,
        samples: int = 1,
        documented: tuple[int, int] | None = None,
    ) -> Bound:
        bound = Bound()
        for judge in self.judges:
            bound += judge.bound_unread(
                questions, system_prompt, pair_count, pair_bytes, samples, documented
            )
        return bound

    def begin(
        self, questions: Sequence[str], pairs: Sequence[Pair], system_prompt: str, samples: int = 1
    ) -> JuryRun:
        """Plan every judge's calls, show them to the usage guard together (which may refuse
        them), and start every judge's."""
        plan = self.plan(questions, pairs, system_prompt, samples)
        guard(plan.bound)
        runs = [
            judge.run(questions, judge_plan, samples)
            for judge, judge_plan in zip(self.judges, plan.plans, strict=True)
        ]
        return JuryRun(self, runs)

    def expected_seconds(self, calls: int) -> float | None:
        """How long `calls` calls of each judge are expected to take: the slowest judge's (each
        has its own pool); None until each judge has made a call in this process."""
        expected = [judge.expected_seconds(calls) for judge in self.judges]
        if any(e is None for e in expected):
            return None
        return max(e for e in expected if e is not None)


def configured_jury(
    names: Sequence[str],
    how: Aggregate,
    tenant: str,
    cache: AnswerCache,
    deadline: Deadline | None = None,
) -> Jury:
    """The jury of the judges `names` (each one of EVALSVC_JUDGES), for `tenant`, asking before
    `deadline`."""
    from evalsvc.core.settings import get_settings

    settings = get_settings()
    for name in names:
        problem = unusable(name, settings)
        if problem is not None:
            # The operator changed the judges since the set was made: the user makes a new one.
            raise InvalidInput(
                f"this metrics set's jury cannot be used: {problem}; create a metrics set whose "
                "judges are among those configured"
            )
    judges = [
        CachedJudge(LLM(provider_for(name, settings), settings, deadline), tenant, cache)
        for name in names
    ]
    return Jury(judges, how)


AnyJudge = CachedJudge | Jury


def judge_of(
    judges: Sequence[str] | None,
    how: Aggregate,
    tenant: str,
    cache: AnswerCache,
    deadline: Deadline | None = None,
) -> AnyJudge | None:
    """What judges a metrics set's judged metrics: its jury when it names one, else the judge
    EVALSVC_LLM configures (None when it is unset)."""
    if judges:
        return configured_jury(judges, how, tenant, cache, deadline)
    return configured_judge(tenant, cache, deadline)
