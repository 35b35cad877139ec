"""The embeddings of embed:similarity, against a scripted transport: distinct texts only, in
batches, cached per tenant as float32 in base64, metered and priced, bounded and shown to the
usage guard before any call, retried and failed as the judge is, within the deadline; the
cosine's arithmetic (zero vectors, bounds, never NaN)."""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any

import pytest
from evalsvc.core.deadlines import Deadline
from evalsvc.core.errors import JudgeFailed, ProviderUnavailable
from evalsvc.core.settings import Settings
from evalsvc.scoring.checks import Score
from evalsvc.scoring.embeddings import (
    CachedEmbeddings,
    cache_key,
    cosine,
    decode,
    encode,
    float32,
    similarity,
    unit,
)
from evalsvc.scoring.llm import InvalidAnswer, RetryableError
from evalsvc.scoring.llm.embedder import (
    Embedded,
    Embedder,
    EmbeddingRefused,
    provider_from_settings,
)
from evalsvc.spending.meter import (
    CALL_OVERHEAD_TOKENS,
    EMBEDDING_TEXT_OVERHEAD_TOKENS,
    Bound,
    Meter,
    Usage,
    metering,
    text_bytes,
)
from hypothesis import given
from hypothesis import strategies as st

from tests.fake_judge import bag_of_words, embedding_tokens

MODEL = "openai:text-embedding-3-small"


class MemoryCache:
    """An AnswerCache in memory, per tenant; counts its reads and writes."""

    def __init__(self) -> None:
        self.items: dict[tuple[str, str], tuple[int, str]] = {}
        self.reads = 0
        self.writes: list[dict[str, tuple[int, str]]] = []

    def get_many(self, tenant: str, keys: Sequence[str]) -> dict[str, tuple[int, str]]:
        self.reads += 1
        return {key: self.items[(tenant, key)] for key in keys if (tenant, key) in self.items}

    def put_many(self, tenant: str, verdicts: Mapping[str, tuple[int, str]]) -> None:
        self.writes.append(dict(verdicts))
        for key, value in verdicts.items():
            self.items[(tenant, key)] = value


class Scripted:
    """An embeddings transport: each call takes the next step (an exception to raise, or a
    function of the texts giving the answer), then answers with bag_of_words vectors and word
    counts as tokens; every call's texts are kept."""

    def __init__(self, *steps: Any, batch: int = 64, name: str = MODEL, delay: float = 0.0):
        self.name = name
        self.batch = batch
        self.steps = list(steps)
        self.calls: list[list[str]] = []
        self.delay = delay
        self._lock = threading.Lock()

    def embed(self, texts: Sequence[str], timeout: float) -> Embedded:
        with self._lock:
            self.calls.append(list(texts))
            step = self.steps.pop(0) if self.steps else None
        if self.delay:
            time.sleep(self.delay)
        if isinstance(step, Exception):
            raise step
        if step is not None:
            answer: Embedded = step(list(texts))
            return answer
        return Embedded([bag_of_words(t) for t in texts], embedding_tokens(list(texts)))

    def texts(self) -> list[str]:
        return [text for call in self.calls for text in call]


def settings(**changes: Any) -> Settings:
    return Settings(judge_retry_base_seconds=0.001, **changes)


def embeddings(
    provider: Scripted,
    cache: MemoryCache | None = None,
    deadline: Deadline | None = None,
    **changes: Any,
) -> CachedEmbeddings:
    embedder = Embedder(provider, settings(**changes), deadline)
    return CachedEmbeddings(embedder, "t1", cache if cache is not None else MemoryCache())


def run(cached: CachedEmbeddings, items: Sequence[tuple[str, str]]) -> dict[int, Score]:
    similarities = cached.begin(items)
    try:
        return similarities.result()
    finally:
        similarities.close()


# ---- batching, distinct texts, caching ---------------------------------------------------------


def test_130_distinct_texts_take_three_calls_of_at_most_64() -> None:
    provider = Scripted()
    items = [(f"output number {k}", f"reference number {k}") for k in range(65)]

    scores = run(embeddings(provider), items)

    assert sorted((len(call) for call in provider.calls), reverse=True) == [64, 64, 2]
    assert sorted(provider.texts()) == sorted(text for item in items for text in item)
    assert set(scores) == set(range(65))


def test_the_batch_is_a_setting() -> None:
    provider = Scripted(batch=10)
    items = [(f"o{k}", f"r{k}") for k in range(12)]

    run(embeddings(provider), items)

    assert [len(call) for call in provider.calls] == [10, 10, 4]


def test_a_text_is_embedded_once_however_often_it_comes() -> None:
    provider = Scripted()
    items = [("same words", "same words"), ("same words", "other words"), ("x", "other words")]

    scores = run(embeddings(provider), items)

    assert sorted(provider.texts()) == ["other words", "same words", "x"]
    assert scores[0].value == 5.0  # an output equal to its reference
    assert scores[0].reason.startswith("cosine similarity 1.0000 between the output and the")


def test_a_second_run_makes_no_call_and_counts_cache_hits() -> None:
    cache = MemoryCache()
    items = [("the cat sat", "a cat sat down"), ("red", "blue")]
    first = run(embeddings(Scripted(), cache), items)

    provider = Scripted()
    meter = Meter()
    with metering(meter):
        again = embeddings(provider, cache)
    assert run(again, items) == first
    assert provider.calls == []
    assert meter.usage() == Usage(0, 4, 0, 0, MODEL)
    assert again.bound(items) == Bound(cached=4, model=MODEL)


def test_the_cache_is_per_tenant_and_per_model() -> None:
    cache = MemoryCache()
    run(embeddings(Scripted(), cache), [("a b", "c d")])

    other_tenant = Scripted()
    embedder = Embedder(other_tenant, settings())
    run(CachedEmbeddings(embedder, "t2", cache), [("a b", "c d")])
    other_model = Scripted(name="openai:text-embedding-3-large")
    run(embeddings(other_model, cache), [("a b", "c d")])

    assert len(other_tenant.calls) == 1 and len(other_model.calls) == 1
    assert cache_key(MODEL, "a b") != cache_key(MODEL, "a b", 256)


def test_vectors_are_cached_as_float32_in_base64_and_8192_dimensions_fit_an_item() -> None:
    vector = [math.sin(k) * 1e-3 for k in range(8192)]

    dimensions, text = encode(float32(vector))

    assert dimensions == 8192 and len(text) == 43_692
    decoded = decode((dimensions, text))
    assert decoded is not None and list(decoded) == list(float32(vector))
    # The judge cache's item: its key (T#<tenant>#<sha256>), the number, the text, its expiry.
    item_bytes = len("pk") + 3 + 64 + 40 + len("score") + 8 + len("reason") + len(text) + 30
    assert item_bytes < 50_000 < 400 * 1024


@pytest.mark.parametrize(
    "value",
    [(3, "AAAA"), (0, ""), (1, "not base64!"), (1, "AACAfw=="), (70_000, "AAAA"), (2, "é")],
)
def test_a_cache_entry_that_holds_no_vector_is_a_miss(value: tuple[int, str]) -> None:
    assert decode(value) is None


def test_a_damaged_cache_entry_is_embedded_again() -> None:
    cache = MemoryCache()
    cache.items[("t1", cache_key(MODEL, "hello"))] = (4, "garbage")
    provider = Scripted()

    run(embeddings(provider, cache), [("hello", "hello")])

    assert provider.texts() == ["hello"]


# ---- zero vectors and the cosine ---------------------------------------------------------------


def test_an_empty_text_is_not_sent_and_is_a_zero_vector() -> None:
    provider = Scripted()

    scores = run(embeddings(provider), [("", "a reference"), ("", "")])

    assert provider.texts() == ["a reference"]
    assert scores[0].value == 1.0
    assert "cosine similarity 0.0000" in scores[0].reason
    assert "the output has a zero vector" in scores[0].reason
    assert "the output and the reference have a zero vector" in scores[1].reason


def test_a_zero_vector_from_the_model_is_cos_0_and_said() -> None:
    provider = Scripted(lambda texts: Embedded([[0.0, 0.0, 0.0] for _ in texts], None))

    scores = run(embeddings(provider), [("a", "b")])

    assert scores[0] == Score(
        1.0,
        f"cosine similarity 0.0000 between the output and the reference ({MODEL}): the output "
        "and the reference have a zero vector (an empty text, or a model's zero answer), "
        "alike to nothing",
    )


def test_similar_texts_score_higher_than_unrelated_ones() -> None:
    items = [
        ("the refund arrives in five days", "the refund arrives within five days"),
        ("the refund arrives in five days", "bananas are yellow"),
    ]

    scores = run(embeddings(Scripted()), items)

    assert scores[0].value > 4 and scores[1].value < scores[0].value
    assert scores[0].reason.endswith(f"({MODEL})")


def test_a_negative_cosine_is_graded_1() -> None:
    a, b = unit([1.0, 0.0]), unit([-1.0, 0.0])

    assert cosine(a, b) == -1.0
    assert similarity(a, b, MODEL).value == 1.0


_floats = st.floats(min_value=-3e38, max_value=3e38, allow_nan=False)


@given(st.lists(st.tuples(_floats, _floats), min_size=1, max_size=40))
def test_the_cosine_is_within_its_bounds_and_never_nan(pairs: list[tuple[float, float]]) -> None:
    a = unit([x for x, _ in pairs])
    b = unit([y for _, y in pairs])

    cos = cosine(a, b)
    score = similarity(a, b, MODEL)

    assert -1.0 <= cos <= 1.0 and not math.isnan(cos)
    assert 1.0 <= score.value <= 5.0 and not math.isnan(score.value)
    if a is not None:
        assert cosine(a, a) == pytest.approx(1.0, abs=1e-5)


# ---- usage, prices, bounds, the guard ----------------------------------------------------------


def test_calls_and_the_tokens_the_model_reports_are_metered_and_priced() -> None:
    provider = Scripted()
    items = [("one two", "three"), ("four", "one two")]
    meter = Meter()
    with metering(meter):
        cached = embeddings(provider)
    run(cached, items)

    tokens = embedding_tokens(["one two", "three", "four"])
    assert meter.usage() == Usage(1, 0, tokens, 0, MODEL)
    assert meter.usage().cost() == Decimal("0.02") * tokens / 1_000_000


def test_an_answer_without_counts_is_metered_at_its_bound() -> None:
    provider = Scripted(lambda texts: Embedded([bag_of_words(t) for t in texts], None))
    meter = Meter()
    with metering(meter):
        cached = embeddings(provider)
    run(cached, [("a é", "b")])

    sent = text_bytes("a é", "b") + 2 * EMBEDDING_TEXT_OVERHEAD_TOKENS + CALL_OVERHEAD_TOKENS
    assert meter.usage() == Usage(1, 0, sent, 0, MODEL)


def test_the_bound_covers_every_attempt_and_counts_the_cache() -> None:
    cache = MemoryCache()
    run(embeddings(Scripted(), cache), [("cached", "cached")])
    items = [("cached", "new one"), ("new two", "new one")]

    bound = embeddings(Scripted(), cache, judge_max_attempts=3).bound(items)

    sent = text_bytes("new one", "new two") + 2 * EMBEDDING_TEXT_OVERHEAD_TOKENS
    assert bound.calls == 1 and bound.cached == 1 and bound.model == MODEL
    assert bound.input_tokens_max == 3 * (sent + CALL_OVERHEAD_TOKENS)
    assert bound.output_tokens_max == 0 and bound.attempts_max == 3
    assert bound.attempt_most() == Usage(1, 0, sent + CALL_OVERHEAD_TOKENS, 0, MODEL)
    assert bound.cost_max() == Decimal("0.02") * bound.input_tokens_max / 1_000_000


def test_the_bound_unread_takes_every_text_as_a_call_s() -> None:
    bound = embeddings(Scripted(batch=64)).bound_unread(100, 50_000)

    assert bound.calls == 4  # 200 texts, 64 a call
    assert bound.cached == 0
    per_attempt = 50_000 + 200 * EMBEDDING_TEXT_OVERHEAD_TOKENS + 4 * CALL_OVERHEAD_TOKENS
    assert bound.input_tokens_max == 4 * per_attempt


def test_the_guard_sees_the_bound_and_its_refusal_comes_before_any_call() -> None:
    provider = Scripted()
    seen: list[Bound] = []

    class Capped(Exception):
        pass

    def guard(bound: Bound) -> None:
        seen.append(bound)
        cost = bound.cost_max()
        if cost is None or cost > Decimal("0.0000001"):
            raise Capped(f"could cost up to {cost}")

    cache = MemoryCache()
    with metering(Meter(), guard):
        cached = embeddings(provider, cache)
        with pytest.raises(Capped):
            cached.begin([("a long enough output", "and its reference")])

    assert provider.calls == [] and cache.writes == []
    assert seen[0].calls == 1 and seen[0].model == MODEL


def test_an_unpriced_model_has_no_cost_as_the_judge_s() -> None:
    bound = embeddings(Scripted(name="openai:nomic-embed")).bound([("a", "b")])

    assert bound.cost_max() is None


# ---- failures, retries, the deadline -----------------------------------------------------------


def test_throttling_and_5xx_are_retried() -> None:
    provider = Scripted(
        RetryableError("the embeddings model answered HTTP 429"), RetryableError("x")
    )

    scores = run(embeddings(provider), [("a", "b")])

    assert len(provider.calls) == 3 and set(scores) == {0}


def test_a_failure_after_every_attempt_is_named_and_keeps_what_was_embedded() -> None:
    failing = RetryableError("the embeddings model answered HTTP 503")
    provider = Scripted(None, failing, failing, failing, failing, batch=2)
    cache = MemoryCache()

    with pytest.raises(JudgeFailed) as raised:
        run(embeddings(provider, cache, judge_concurrency=1), [("a", "b"), ("c", "dd")])

    assert str(raised.value) == (
        f"the embeddings model {MODEL} failed on item 1's reference (2 characters, the longest "
        "of the 2 texts in its call) after 4 attempts: the embeddings model answered HTTP 503; "
        "nothing was stored"
    )
    assert raised.value.transient
    assert set(cache.items) == {("t1", cache_key(MODEL, "a")), ("t1", cache_key(MODEL, "b"))}


def test_a_refused_text_is_not_asked_again_and_is_named() -> None:
    provider = Scripted(EmbeddingRefused("HTTP 400: the input is too long"), batch=1)

    with pytest.raises(JudgeFailed) as raised:
        run(embeddings(provider), [("x" * 100_000, "short")])

    assert str(raised.value).startswith(
        f"the embeddings model {MODEL} failed on item 0's output after 1 attempts: it refused "
        "the texts (HTTP 400: the input is too long)"
    )
    assert not raised.value.transient


@pytest.mark.parametrize(
    ("answer", "problem"),
    [
        (lambda texts: Embedded([[1.0, 2.0]], 3), "1 vectors for 2 texts"),
        (lambda texts: Embedded([[1.0, math.inf], [1.0, 2.0]], 3), "not finite"),
        (lambda texts: Embedded([[1.0, 1e39], [1.0, 2.0]], 3), "not finite"),
        (lambda texts: Embedded([[1.0, 2.0], [1.0]], 3), "not all of the same dimensions"),
        (lambda texts: Embedded([[1.0, "2"], [1.0, 2.0]], 3), "other than numbers"),
        (lambda texts: Embedded([[], []], 3), "not a list"),
        (lambda texts: Embedded([[[1.0], [2.0]], [[1.0]]], 3), "a vector for each token"),
    ],
)
def test_an_unusable_answer_is_retried_then_fails(answer: Any, problem: str) -> None:
    provider = Scripted(*[answer] * 4)
    meter = Meter()
    with metering(meter):
        cached = embeddings(provider)

    with pytest.raises(JudgeFailed, match=f"after 4 attempts: unusable answer .*{problem}"):
        run(cached, [("a", "b")])
    assert meter.usage() == Usage(4, 0, 12, 0, MODEL)


def test_vectors_of_other_dimensions_than_the_first_are_unusable() -> None:
    provider = Scripted(
        None, *[lambda texts: Embedded([[1.0, 0.0] for _ in texts], None)] * 4, batch=1
    )

    with pytest.raises(JudgeFailed, match="vectors of 2 dimensions, where this model's have 64"):
        run(embeddings(provider, judge_concurrency=1), [("a", "b")])


def test_an_unusable_answer_then_a_usable_one_succeeds() -> None:
    provider = Scripted(InvalidAnswer("the response is not JSON"))

    assert set(run(embeddings(provider), [("a", "b")])) == {0}
    assert len(provider.calls) == 2


def test_items_whose_vectors_miss_the_deadline_are_missing() -> None:
    provider = Scripted(batch=1, delay=0.6)
    cached = embeddings(provider, deadline=Deadline.after(1.5), judge_concurrency=1)

    started = time.monotonic()
    scores = run(cached, [("a", "a"), ("b", "c"), ("d", "e")])

    assert time.monotonic() - started < 3
    assert 0 in scores and set(scores) < {0, 1, 2}


def test_unavailable_configuration_is_said_at_once() -> None:
    with pytest.raises(ProviderUnavailable, match="EVALSVC_EMBEDDINGS='nomodel' names no model"):
        provider_from_settings(Settings(embeddings="nomodel"))
    with pytest.raises(ProviderUnavailable, match="is not understood"):
        provider_from_settings(Settings(embeddings="azure:x"))
    assert provider_from_settings(Settings()) is None
    openai = provider_from_settings(Settings(embeddings="openai:e", embeddings_batch=7))
    assert openai is not None and (openai.name, openai.batch) == ("openai:e", 7)
    bedrock = provider_from_settings(Settings(embeddings="bedrock:amazon.titan-embed-text-v2:0"))
    assert bedrock is not None and (bedrock.name, bedrock.batch) == (
        "bedrock:amazon.titan-embed-text-v2:0",
        1,
    )
