"""The LLM judge: asks the configured LLM (scoring.llm) each question about each pair, with one
pool of at most EVALSVC_JUDGE_CONCURRENCY calls across every (question, pair), and keeps verdicts in
the per-tenant cache.

Judging is planned (`plan`: the cache read, and the bound of the calls left), the plan shown to
the usage guard (which may refuse it before any call), started (`begin`) before the caller
scores its checks, so calls are in flight while the checks run, and collected (`result`)
after. Every verdict given is cached, whatever happens to the others: a failure, or the
deadline, leaves the verdicts already paid for where the next attempt finds them.

A question may be a rag: metric (scoring.rag): two calls an item, made in turn in one slot of
the pool; a pair the metric does not apply to (models.metric_sets.missing) is not asked about,
and has no verdict.
"""

from __future__ import annotations

import hashlib
import json
import math
import threading
from collections.abc import Callable, Hashable, Mapping, Sequence, Set
from concurrent.futures import FIRST_EXCEPTION, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, replace
from typing import Any, Protocol, cast

from evalsvc.core.deadlines import Deadline
from evalsvc.core.errors import JudgeFailed, OutOfTime
from evalsvc.core.observability import LogContextPool, logger, metrics
from evalsvc.models.conversations import compact_json
from evalsvc.models.datasets import Pair
from evalsvc.models.metric_sets import RAG_CALLS_PER_PAIR, RAG_METRICS, missing
from evalsvc.scoring import preferences, rag
from evalsvc.scoring.checks import Score
from evalsvc.scoring.llm import LLM, LLMFailed, LLMOutOfTime, configured_llm
from evalsvc.scoring.metric import Verdicts
from evalsvc.scoring.rag import RagAsk
from evalsvc.scoring.verdicts import (
    PROMPT_VERSION,
    SYSTEM,
    VERDICT_MAX_TOKENS,
    VERDICT_SCHEMA,
    message_bytes_most,
    user_message,
    verdict_from_object,
)
from evalsvc.spending.meter import EXPECTED_VERDICT_TOKENS, Bound, calls_bound, guard, text_bytes

TOOL_NAME = "record_verdict"
# How often collecting answers looks whether its calls were cancelled meanwhile.
WAKE_SECONDS = 0.25


def cache_key(
    provider: str, question: str, system_prompt: str, pair: Pair, sample: int | None = None
) -> str:
    """The judge cache's key of a verdict. `sample` j (0-based) of a pair asked k > 1 times
    (judge_samples) is an entry of its own, distinct from the single greedy verdict (None) and
    from the other samples, so that asking k times makes k answers, and asking k + 1 times
    later reuses the first k. A pair's reference and contexts (E10), messages and tool calls
    (E11), which its prompt shows, are in the key when it has them (only then: the key of a
    pair without them is what it was). A tool call is in it as its prompt shows it: its name
    and its arguments' compact JSON."""
    fields: list[object] = [provider, PROMPT_VERSION, question, system_prompt, pair.input]
    fields.append(pair.output)
    if pair.reference is not None:
        fields += ["reference", pair.reference]
    if pair.contexts:
        fields += ["contexts", pair.contexts]
    if pair.messages:
        fields += ["messages", [[m.role, m.content] for m in pair.messages]]
    if pair.tool_calls:
        fields += ["tool_calls", [[c.name, compact_json(c.arguments)] for c in pair.tool_calls]]
    if sample is not None:
        fields += ["sample", sample]
    return hashlib.sha256(json.dumps(fields).encode()).hexdigest()


def _preview(text: str) -> str:
    return text if len(text) <= 60 else text[:57] + "..."


@dataclass(frozen=True, slots=True)
class Ask:
    """One call to make of the judge: its prompt, the schema of its answer, how the answer is
    read into what is cached (an integer and a reason), and what a failure names."""

    system: str
    user: str
    schema: dict[str, Any]
    tool: str
    accept: Callable[[Any], tuple[int, str]]
    max_tokens: int
    # "... failed on <what> after N attempts": what was being judged.
    what: str
    # Sampled (client.RETRY_TEMPERATURE) from the first attempt: one of k answers to the same
    # question, which a greedy model would give alike.
    sample: bool = False


@dataclass(slots=True)
class AskPlan:
    """What one batch of judging takes: the cache key of every item asked about, the answers
    the cache holds, the calls left to make (one per distinct key: identical items are judged
    once; a rag: item is two calls, made in turn) and their bound. `hits`: the calls the
    cache saves (a rag: answer found saves both of its calls, its claims found the first)."""

    keys: dict[Hashable, str]
    cached: dict[str, tuple[int, str]]
    todo: dict[str, Ask | RagAsk]
    hits: int
    bound: Bound


# A verdict plan is an ask plan keyed by (question index, pair index).
JudgePlan = AskPlan


@dataclass(slots=True)
class Answers:
    """The answers obtained, by the item they are about; `complete` unless the deadline came
    first."""

    by_item: dict[Hashable, tuple[int, str]]
    complete: bool


class AskRun:
    """The answers to every ask of one plan: cached ones read at once, the others asked of the
    LLM in one pool of at most EVALSVC_JUDGE_CONCURRENCY calls, in the plan's order (so that whole
    pairs finish first). Every answer given is cached, whatever happens to the others: a
    failure, or the deadline, leaves the answers already paid for where the next attempt finds
    them."""

    def __init__(self, judge: CachedJudge, plan: AskPlan) -> None:
        self._judge = judge
        self._llm = judge.llm
        self._retries_before = self._llm.retries
        self._keys = plan.keys
        self._answers = plan.cached
        self._hits = plan.hits
        self._llm.meter.record(cache_hits=plan.hits)
        self._pool: ThreadPoolExecutor | None = None
        self._futures: dict[str, Future[tuple[int, str] | None]] = {}
        # The claims rag: items listed, by cache key, cached with the answers.
        self._claims: dict[str, tuple[int, str]] = {}
        self._claims_lock = threading.Lock()
        self._rag = {key for key, ask in plan.todo.items() if isinstance(ask, RagAsk)}
        if plan.todo:
            self._pool = LogContextPool(max_workers=min(self._llm.concurrency, len(plan.todo)))
            self._futures = {
                key: self._pool.submit(self._ask, ask) for key, ask in plan.todo.items()
            }

    def _keep_claims(self, key: str, claims: tuple[int, str]) -> None:
        with self._claims_lock:
            self._claims[key] = claims

    def _ask(self, ask: Ask | RagAsk) -> tuple[int, str] | None:
        """The answer; None when the deadline came first (a rag: item's two calls are made in
        this one slot of the pool, in turn)."""
        try:
            if isinstance(ask, RagAsk):
                return ask.run(self._llm, self._keep_claims)
            return self._llm.ask(
                ask.system,
                ask.user,
                ask.schema,
                ask.tool,
                ask.accept,
                max_tokens=ask.max_tokens,
                sample=ask.sample,
            )
        except LLMOutOfTime:
            return None
        except LLMFailed as exc:
            judge = f"the judge {self._llm.name!r}" if self._judge.named else "the judge"
            raise JudgeFailed(
                f"{judge} failed on {ask.what} after {exc.attempts} attempts: {exc.problem}; "
                "nothing was stored",
                transient=exc.transient,
                retry_after=exc.retry_after,
            ) from exc

    def answers(self) -> Answers:
        """Every answer obtained, by item. A judge failure is raised once the answers given
        are cached."""
        failure: BaseException | None = None
        while self._futures:
            done, pending = wait(
                self._futures.values(), timeout=WAKE_SECONDS, return_when=FIRST_EXCEPTION
            )
            failed = [f for f in done if not f.cancelled() and f.exception() is not None]
            if failed:
                failure = failed[0].exception()
                self.close()
                break
            # Calls cancelled by close() from another thread (a jury's judge that failed) are
            # done, but wait() is never told of them.
            if all(f.done() for f in pending):
                break
        fresh: dict[str, tuple[int, str]] = {}
        for key, future in self._futures.items():
            if future.done() and not future.cancelled() and future.exception() is None:
                answer = future.result()
                if answer is not None:
                    fresh[key] = answer
        with self._claims_lock:
            kept = {**self._claims, **fresh}
        if failure is not None:
            try:
                self._judge.cache.put_many(self._judge.tenant, kept)
            except Exception:
                logger.exception("could not keep the answers given before a judge failure")
            raise failure
        self._judge.cache.put_many(self._judge.tenant, kept)
        self._answers.update(fresh)
        # A rag: item asks to list its claims (unless cached), then, if it has any, to check them.
        calls = sum(1 for key in self._futures if key not in self._rag) + len(self._claims)
        calls += sum(1 for key in self._rag & fresh.keys() if rag.claims_in(fresh[key]))
        metrics.add_metric(name="JudgeCacheHits", unit="Count", value=self._hits)
        metrics.add_metric(name="JudgeCalls", unit="Count", value=calls)
        metrics.add_metric(
            name="JudgeRetries", unit="Count", value=self._llm.retries - self._retries_before
        )
        logger.debug("judged", extra={"cache_hits": self._hits, "calls": calls})
        found = {
            item: self._answers[key] for item, key in self._keys.items() if key in self._answers
        }
        return Answers(found, complete=len(found) == len(self._keys))

    def close(self) -> None:
        """Stop: calls not started are cancelled; calls in flight end within their timeouts,
        which the deadline bounds."""
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None


class JudgeRun:
    """The verdicts on every (question, pair) of one scoring, as scores by (question index,
    pair index). Asked k > 1 times, a (question, pair) has a verdict when all k answers came:
    its score is their mean and its reason the one given with the median answer (the lower of
    the two middle ones for an even k; the first asked among equals).

    A rag: metric's (`rag_questions`, by question index) verdict is scored from its answers'
    fractions of claims supported (rag.verdict_of: with k > 1, the mean fraction on the 1..5
    scale, the reason of the median). It has no `samples`: those are the judge's integer
    scores, whose mean is the score and whose spread is the judge's noise (E6), and a rag:
    sample's score is a fraction on the 1..5 scale (1 + 4 * 3/7), which an integer could hold
    only rounded, away from the mean and with a noise that is the rounding's. A pair the metric
    does not apply to was not asked about: it has no verdict, and `complete` does not wait for
    one."""

    def __init__(
        self,
        judge: CachedJudge,
        plan: AskPlan,
        samples: int = 1,
        rag_questions: Set[int] = frozenset(),
    ) -> None:
        self._run = AskRun(judge, plan)
        self._samples = samples
        self._rag = rag_questions

    def result(self) -> Verdicts:
        """Every verdict obtained; `complete` unless the deadline came first. A judge failure
        is raised once the verdicts given are cached."""
        answers = self._run.answers()
        given: dict[tuple[int, int], list[tuple[int, str] | None]] = {}
        for item, answer in answers.by_item.items():
            q, i, *sample = cast(tuple[int, ...], item)
            given.setdefault((q, i), [None] * self._samples)[sample[0] if sample else 0] = answer
        verdicts: dict[tuple[int, int], Score] = {}
        samples: dict[tuple[int, int], list[int]] = {}
        for key, got in given.items():
            complete = [answer for answer in got if answer is not None]
            if len(complete) < len(got):
                continue  # the deadline came before all k
            if key[0] in self._rag:
                verdicts[key] = rag.verdict_of(complete)
            elif self._samples == 1:
                verdicts[key] = Score(float(complete[0][0]), complete[0][1])
            else:
                median = sorted(range(len(complete)), key=lambda j: (complete[j][0], j))[
                    (len(complete) - 1) // 2
                ]
                values = [score for score, _ in complete]
                verdicts[key] = Score(math.fsum(values) / len(values), complete[median][1])
                samples[key] = values
        return Verdicts(verdicts, complete=answers.complete, samples=samples)

    def close(self) -> None:
        self._run.close()


@dataclass(frozen=True, slots=True)
class Comparison:
    """Two outputs for one input, in the order the judge is to see them; `what` names it in a
    failure ("pair 'q1', run A first")."""

    input: str
    first: str
    second: str
    what: str


class AnswerCache(Protocol):
    """Where a judge's answers are kept by their cache key (storage.judge_cache)."""

    def get_many(self, tenant: str, keys: Sequence[str]) -> dict[str, tuple[int, str]]: ...

    def put_many(self, tenant: str, verdicts: Mapping[str, tuple[int, str]]) -> None: ...


class CachedJudge:
    """Scores pairs for questions: cached verdicts first (`cache`), then the LLM."""

    def __init__(self, llm: LLM, tenant: str, cache: AnswerCache) -> None:
        self.llm = llm
        self.tenant = tenant
        self.cache = cache
        # A judge of a jury (scoring.jury): its failures name it.
        self.named = False

    @property
    def names(self) -> list[str]:
        """The judge's name, as a jury's are listed."""
        return [self.llm.name]

    def set_deadline(self, deadline: Deadline) -> None:
        """Ask before `deadline` from now on."""
        self.llm.deadline = deadline

    def plan(
        self,
        questions: Sequence[str],
        pairs: Sequence[Pair],
        system_prompt: str,
        samples: int = 1,
    ) -> JudgePlan:
        """Read the cache for every (question, pair) and bound the calls left; no call. With
        `samples` k > 1 every (question, pair) is k items, (q, i, j) for j < k, each its own
        cache entry, asked sampling. A rag: metric's item is two calls (scoring.rag); a pair
        the metric does not apply to is no item."""
        keys: dict[Hashable, str] = {}
        rag_keys: set[str] = set()
        for i, pair in enumerate(pairs):
            for q, question in enumerate(questions):
                is_rag = question in RAG_METRICS
                if is_rag and missing(question, pair) is not None:
                    continue  # not applicable: not asked, no verdict
                for j in range(samples) if samples > 1 else (None,):
                    if is_rag:
                        key = rag.answer_key(self.llm.name, question, pair, j)
                        rag_keys.add(key)
                    else:
                        key = cache_key(self.llm.name, question, system_prompt, pair, j)
                    keys[(q, i) if j is None else (q, i, j)] = key

        def ask_of(item: Hashable) -> Ask | RagAsk:
            q, i, *sample = cast(tuple[int, ...], item)
            question, pair = questions[q], pairs[i]
            what = f"metric {_preview(question)!r} for pair {pair.id!r}"
            if sample:
                what += f" (sample {sample[0] + 1} of {samples})"
            if question in RAG_METRICS:
                return RagAsk.of(self.llm, question, pair, what, sample[0] if sample else None)
            return Ask(
                SYSTEM,
                user_message(
                    question,
                    system_prompt,
                    pair.input,
                    pair.output,
                    reference=pair.reference,
                    contexts=pair.contexts,
                    messages=pair.messages,
                    tool_calls=pair.tool_calls,
                ),
                VERDICT_SCHEMA,
                TOOL_NAME,
                verdict_from_object,
                VERDICT_MAX_TOKENS,
                what,
                sample=samples > 1,
            )

        return self.plan_asks(keys, ask_of, EXPECTED_VERDICT_TOKENS, rag_keys)

    def plan_asks(
        self,
        keys: dict[Hashable, str],
        ask_of: Callable[[Hashable], Ask | RagAsk],
        expected_output: int,
        rag_keys: Set[str] = frozenset(),
    ) -> AskPlan:
        """Read the cache for every item's key (`keys`: item -> cache key, in the order to ask)
        and bound the calls left; no call. `ask_of(item)`: the call for an item not cached (made
        only for those); `expected_output`: the tokens an answer is expected to take.
        `rag_keys`: the keys of rag: items, whose claims the cache may hold too."""
        cached = self.cache.get_many(self.tenant, list(keys.values()))
        for key in rag_keys & cached.keys():
            if not rag.is_answer(cached[key]):
                del cached[key]  # not one this version wrote: asked again
        hits = sum(
            RAG_CALLS_PER_PAIR if key in rag_keys else 1 for key in keys.values() if key in cached
        )
        todo: dict[str, Ask | RagAsk] = {}
        for item, key in keys.items():
            if key not in cached and key not in todo:
                todo[key] = ask_of(item)
        hits += self._read_claims(todo)
        bound = Bound(cached=hits, model=self.llm.name)
        for ask in todo.values():
            if isinstance(ask, RagAsk):
                bound += ask.bound(self.llm)
                continue
            bound += self.llm.bound(
                ask.system,
                ask.user,
                ask.schema,
                ask.tool,
                ask.max_tokens,
                expected_output=expected_output,
            )
        return AskPlan(keys, cached, todo, hits, bound)

    def _read_claims(self, todo: dict[str, Ask | RagAsk]) -> int:
        """Give the rag: items of `todo` the claims the cache holds for them; how many had."""
        wanted = {key: ask for key, ask in todo.items() if isinstance(ask, RagAsk)}
        if not wanted:
            return 0
        found = self.cache.get_many(self.tenant, [ask.claims_key for ask in wanted.values()])
        read = 0
        for key, ask in wanted.items():
            claims = rag.decode_claims(found[ask.claims_key]) if ask.claims_key in found else None
            if claims is not None:
                todo[key] = replace(ask, claims=claims)
                read += 1
        return read

    def plan_preferences(self, question: str, comparisons: Sequence[Comparison]) -> AskPlan:
        """Read the cache for every comparison (each in the order given) under `question` and
        bound the calls left; no call. Byte-equal outputs are not the caller's to send: a tie
        needs no judge."""
        keys: dict[Hashable, str] = {
            index: preferences.cache_key(self.llm.name, question, c.input, c.first, c.second)
            for index, c in enumerate(comparisons)
        }

        def ask_of(item: Hashable) -> Ask:
            c = comparisons[cast(int, item)]
            return Ask(
                preferences.SYSTEM,
                preferences.user_message(question, c.input, c.first, c.second),
                preferences.SCHEMA,
                preferences.TOOL_NAME,
                preferences.preference_from_object,
                preferences.MAX_TOKENS,
                f"the comparison {c.what}",
            )

        return self.plan_asks(keys, ask_of, preferences.EXPECTED_TOKENS)

    def bound_preferences_unread(self, question: str, calls: int, sent_text_bytes: int) -> Bound:
        """A bound of `calls` comparisons under `question` whose texts, not read, take at most
        `sent_text_bytes` together (input and both outputs of each call); no cache read (all
        are counted as calls)."""
        fixed = text_bytes(
            preferences.SYSTEM,
            json.dumps(preferences.SCHEMA),
            preferences.TOOL_NAME,
            preferences.user_message(question, "", "", ""),
        )
        bound = calls_bound(
            calls,
            calls * fixed + sent_text_bytes,
            preferences.MAX_TOKENS,
            self.llm.max_attempts,
            preferences.EXPECTED_TOKENS,
        )
        bound.model = self.llm.name
        return bound

    def begin_preferences(self, question: str, comparisons: Sequence[Comparison]) -> AskRun:
        """Plan, show the plan to the usage guard (which may refuse it), and start the calls;
        the answers come by comparison index, as (index in preferences.WINNERS, reason)."""
        plan = self.plan_preferences(question, comparisons)
        guard(plan.bound)
        return AskRun(self, plan)

    def bound_unread(
        self,
        questions: Sequence[str],
        system_prompt: str,
        pair_count: int,
        pair_bytes: int,
        samples: int = 1,
        documented: tuple[int, int] | None = None,
    ) -> Bound:
        """A bound of judging `pair_count` pairs whose texts, not read, take at most
        `pair_bytes` together (models.datasets.pair_bytes: reference, contexts, messages and
        tool calls included), on every question, `samples` times each; no cache read (all are
        counted as calls), every pair counted as applicable to every rag: metric (two calls
        each, rag.bound_unread).

        `documented`: how many of the pairs show the judge more blocks than input and output
        (a reference or contexts, E10; messages or tool calls, E11: the pairs whose head item
        has `d`), and their bytes (None: not known, every pair counted so). A question's prompt
        for those is counted as a pair with every such block at its most has it
        (message_bytes_most; every text neutralised: at most 1.5 times as large); for the
        others, as it was before E10."""
        asked = [q for q in questions if q not in RAG_METRICS]
        fixed = text_bytes(SYSTEM, json.dumps(VERDICT_SCHEMA), TOOL_NAME)
        with_documents, documents_bytes = documented or (pair_count, pair_bytes)
        plain = pair_count - with_documents
        sent = sum(
            pair_count * fixed
            + plain * text_bytes(user_message(q, system_prompt, "", ""))
            + with_documents * message_bytes_most(q, system_prompt)
            + pair_bytes
            + documents_bytes // 2
            for q in asked
        )
        one = calls_bound(
            pair_count * len(asked),
            sent,
            VERDICT_MAX_TOKENS,
            self.llm.max_attempts,
            EXPECTED_VERDICT_TOKENS,
        )
        for metric in questions:
            if metric in RAG_METRICS:
                one += rag.bound_unread(self.llm, pair_count, pair_bytes)
        # One sample's bound, k times: k samples are bounded (and expected) k times as high.
        bound = Bound(model=self.llm.name)
        for _ in range(samples):
            bound += one
        bound.model = self.llm.name
        return bound

    def begin(
        self,
        questions: Sequence[str],
        pairs: Sequence[Pair],
        system_prompt: str,
        samples: int = 1,
    ) -> JudgeRun:
        """Plan, show the plan to the usage guard (which may refuse it), and start the calls."""
        plan = self.plan(questions, pairs, system_prompt, samples)
        guard(plan.bound)
        return self.run(questions, plan, samples)

    def run(self, questions: Sequence[str], plan: JudgePlan, samples: int = 1) -> JudgeRun:
        """Start the calls of `plan` (one of `plan`'s, already shown to the usage guard)."""
        rag_questions = {q for q, question in enumerate(questions) if question in RAG_METRICS}
        return JudgeRun(self, plan, samples, rag_questions)

    def expected_seconds(self, calls: int) -> float | None:
        """How long `calls` judge calls are expected to take at this judge's concurrency, from
        the provider's recent latency in this process; None before any call."""
        latency = self.llm.expected_call_seconds()
        if latency is None or calls <= 0:
            return None if latency is None else 0.0
        return math.ceil(calls / self.llm.concurrency) * latency

    def score_all(self, question: str, pairs: Sequence[Pair], system_prompt: str) -> list[Score]:
        """One question on every pair (no deadline applies beyond the LLM's)."""
        run = self.begin([question], pairs, system_prompt)
        try:
            verdicts = run.result()
        finally:
            run.close()
        if not verdicts.complete:
            raise OutOfTime(f"{len(verdicts.scores)} of {len(pairs)} pairs judged in time")
        return [verdicts.scores[(0, i)] for i in range(len(pairs))]


def configured_judge(
    tenant: str, cache: AnswerCache, deadline: Deadline | None = None
) -> CachedJudge | None:
    """The judge EVALSVC_LLM configures, for `tenant`, its answers kept in `cache`, asking
    before `deadline`; None when it is unset."""
    llm = configured_llm(deadline)
    return CachedJudge(llm, tenant, cache) if llm else None
