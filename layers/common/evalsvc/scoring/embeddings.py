"""Embeddings for `embed:similarity`: how alike each item's output and reference are, as the
cosine of their vectors, graded onto 1..5 (1 + 4·max(0, cos)).

The texts are embedded by the model EVALSVC_EMBEDDINGS configures (scoring.llm.embedder), each
distinct text once (an output equal to its reference, or to another item's text, is one text),
in calls of at most EVALSVC_EMBEDDINGS_BATCH texts (one for Bedrock), in one pool of at most
EVALSVC_JUDGE_CONCURRENCY calls, in the items' order (so that whole items finish first). An empty
text is not sent: its vector is the zero vector, and a zero vector is alike to nothing (cos 0).

Vectors are kept per tenant in the judge's cache (the AnswerCache the caller passes: scoring
reads no storage), each under the sha256 of (model, "embedding", text), as (its dimensions, the
vector as float32 little-endian in base64): 8,192 dimensions are 43,692 characters, far under
DynamoDB's 400 KB an item. Cached vectors are cache hits in the usage, and cost nothing.

Embedding is planned (the cache read, and the bound of the calls left), the bound shown to the
usage guard (which may refuse it before any call), started (`begin`) before the caller scores
its checks, and collected (`result`) after, as the judge's calls are. Every vector obtained is
cached, whatever happens to the others: a failure, or the deadline, leaves the vectors already
paid for where the next attempt finds them. No text is ever logged.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import math
import operator
import sys
from array import array
from collections.abc import Sequence
from concurrent.futures import FIRST_EXCEPTION, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import Protocol

from evalsvc.core.deadlines import Deadline
from evalsvc.core.errors import JudgeFailed
from evalsvc.core.observability import LogContextPool, logger, metrics
from evalsvc.scoring.checks import Score, graded
from evalsvc.scoring.judges import AnswerCache
from evalsvc.scoring.llm import LLMFailed, LLMOutOfTime
from evalsvc.scoring.llm.embedder import Embedder, configured_embedder
from evalsvc.spending.meter import Bound, guard

# What each side of an item is called in a failure's message.
SIDES = ("output", "reference")
# The most dimensions a cached vector may have.
MAX_DIMENSIONS = 65_536


def cache_key(model: str, text: str, dimensions: int | None = None) -> str:
    """The cache key of `text`'s vector by `model` (with the dimensions asked for, when they
    were: vectors of other dimensions are others)."""
    fields: list[object] = [model, "embedding", text]
    if dimensions is not None:
        fields += ["dimensions", dimensions]
    return hashlib.sha256(json.dumps(fields).encode("utf-8", "surrogatepass")).hexdigest()


def float32(vector: Sequence[float]) -> array[float]:
    """`vector` as float32 (the model's numbers are checked to fit)."""
    return array("f", vector)


def encode(vector: array[float]) -> tuple[int, str]:
    """A float32 vector as the cache keeps it: (dimensions, little-endian bytes in base64)."""
    if sys.byteorder == "big":
        vector = array("f", vector)
        vector.byteswap()
    return len(vector), base64.b64encode(vector.tobytes()).decode("ascii")


def decode(value: tuple[int, str]) -> array[float] | None:
    """The vector a cache entry holds; None when it holds none (another kind of answer, or
    one damaged)."""
    dimensions, text = value
    if not 0 < dimensions <= MAX_DIMENSIONS:
        return None
    try:
        packed = base64.b64decode(text.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError):
        return None
    if len(packed) != 4 * dimensions:
        return None
    vector = array("f")
    vector.frombytes(packed)
    if sys.byteorder == "big":
        vector.byteswap()
    return vector if all(math.isfinite(x) for x in vector) else None


def unit(vector: Sequence[float]) -> array[float] | None:
    """`vector` scaled to length 1, as float32; None for the zero vector. Scaled by its largest
    number first, so that neither large numbers (their squares past a float's range) nor tiny
    ones (their squares under it) are lost."""
    largest = max((abs(x) for x in vector), default=0.0)
    if not math.isfinite(largest) or largest == 0.0:
        return None
    scaled = [x / largest for x in vector]
    norm = math.sqrt(math.fsum(x * x for x in scaled))
    return array("f", (x / norm for x in scaled))


def cosine(a: Sequence[float] | None, b: Sequence[float] | None) -> float:
    """The cosine of two unit vectors (unit's), in [-1, 1]; 0 when either is the zero vector
    (None) or they differ in dimensions."""
    if a is None or b is None or len(a) != len(b):
        return 0.0
    dot = math.fsum(map(operator.mul, a, b))
    return max(-1.0, min(1.0, dot)) if math.isfinite(dot) else 0.0


def similarity(a: Sequence[float] | None, b: Sequence[float] | None, model: str) -> Score:
    """The score of an output whose unit vector is `a` against a reference's `b`: 1 + 4·max(0,
    cos), and a reason naming the cosine and the model (and a zero vector, when there is one)."""
    cos = cosine(a, b)
    reason = f"cosine similarity {cos:.4f} between the output and the reference ({model})"
    zero = [side for side, vector in zip(SIDES, (a, b), strict=True) if vector is None]
    if zero:
        whose = " and the reference" if len(zero) == 2 else ""
        reason += (
            f": the {zero[0]}{whose} {'have' if whose else 'has'} a zero vector "
            "(an empty text, or a model's zero answer), alike to nothing"
        )
    return Score(graded(max(0.0, cos)), reason)


class Similarities(Protocol):
    """What the scorer holds while its checks run."""

    def result(self) -> dict[int, Score]:
        """The score of every item finished before the deadline, by item index; JudgeFailed
        (once the vectors obtained are cached) when the model failed."""
        ...

    def close(self) -> None:
        """Stop: calls not started are cancelled; calls in flight end within their timeouts."""
        ...


@dataclass(slots=True)
class EmbeddingPlan:
    """What embedding a batch of items takes: the distinct texts (in the items' order) with
    their cache keys, the vectors the cache holds, the calls left (each a list of texts), what
    a failure of each text names, and the bound of those calls."""

    items: list[tuple[str, str]]
    keys: dict[str, str]
    cached: dict[str, array[float] | None]
    calls: list[list[str]]
    named: dict[str, str]
    hits: int
    bound: Bound


class CachedEmbeddings:
    """Vectors of texts: cached ones first (`cache`, per tenant), then the embeddings model."""

    def __init__(self, embedder: Embedder, tenant: str, cache: AnswerCache) -> None:
        self.embedder = embedder
        self.tenant = tenant
        self.cache = cache

    @property
    def name(self) -> str:
        return self.embedder.name

    def _key(self, text: str) -> str:
        return cache_key(self.embedder.name, text, self.embedder.asked_dimensions)

    def plan(self, items: Sequence[tuple[str, str]]) -> EmbeddingPlan:
        """Read the cache for every distinct non-empty text of `items` ((output, reference)
        each) and bound the calls left; no call."""
        named: dict[str, str] = {}
        for index, pair in enumerate(items):
            for side, text in zip(SIDES, pair, strict=True):
                if text:
                    named.setdefault(text, f"item {index}'s {side}")
        keys = {text: self._key(text) for text in named}
        stored = self.cache.get_many(self.tenant, list(dict.fromkeys(keys.values())))
        cached: dict[str, array[float] | None] = {"": None}
        for text, key in keys.items():
            vector = decode(stored[key]) if key in stored else None
            if vector is not None and self.embedder.expect_dimensions(len(vector)):
                cached[text] = unit(vector)
        hits = len(cached) - 1
        todo = [text for text in named if text not in cached]
        batch = self.embedder.batch
        calls = [todo[start : start + batch] for start in range(0, len(todo), batch)]
        bound = self.embedder.bound(calls)
        bound.cached = hits
        return EmbeddingPlan(list(items), keys, cached, calls, named, hits, bound)

    def bound(self, items: Sequence[tuple[str, str]]) -> Bound:
        """The cache read, and the bound of the calls left, for estimates and caps; no call."""
        return self.plan(items).bound

    def bound_unread(self, item_count: int, text_bytes: int) -> Bound:
        """The bound of `item_count` items whose texts (outputs and references), not read,
        take at most `text_bytes` together: every text a call's, none cached; no cache read."""
        return self.embedder.bound_unread(2 * item_count, text_bytes)

    def begin(self, items: Sequence[tuple[str, str]]) -> Similarities:
        """Plan, show the bound to the usage guard (which may refuse it before any call), and
        start the calls."""
        plan = self.plan(items)
        guard(plan.bound)
        return SimilarityRun(self, plan)


class SimilarityRun:
    """The similarities of one plan's items: cached vectors read at once, the others asked of
    the model in one pool of at most EVALSVC_JUDGE_CONCURRENCY calls, in the plan's order."""

    def __init__(self, embeddings: CachedEmbeddings, plan: EmbeddingPlan) -> None:
        self._embeddings = embeddings
        self._embedder = embeddings.embedder
        self._plan = plan
        self._result: dict[int, Score] | None = None
        self._embedder.meter.record(cache_hits=plan.hits, model=self._embedder.name)
        self._pool: ThreadPoolExecutor | None = None
        self._futures: list[Future[list[array[float]] | None]] = []
        if plan.calls:
            workers = min(self._embedder.concurrency, len(plan.calls))
            self._pool = LogContextPool(max_workers=workers)
            self._futures = [self._pool.submit(self._embed, texts) for texts in plan.calls]

    def _embed(self, texts: list[str]) -> list[array[float]] | None:
        """The vectors of one call's texts, as float32; None when the deadline came first."""
        try:
            return [float32(vector) for vector in self._embedder.embed(texts)]
        except LLMOutOfTime:
            return None
        except LLMFailed as exc:
            raise JudgeFailed(
                f"the embeddings model {self._embedder.name} failed on {self._what(texts)} "
                f"after {exc.attempts} attempts: {exc.problem}; nothing was stored",
                transient=exc.transient,
                retry_after=exc.retry_after,
            ) from exc

    def _what(self, texts: list[str]) -> str:
        """What a failed call was embedding: its text's item, or, for several, the item of
        the longest (the likeliest to be refused) and how many more."""
        longest = max(texts, key=len)
        what = self._plan.named[longest]
        if len(texts) > 1:
            what += f" ({len(longest):,} characters, the longest of the {len(texts)} texts "
            what += "in its call)"
        return what

    def result(self) -> dict[int, Score]:
        """The score of every item whose two vectors came before the deadline, by item index.
        A failure is raised once the vectors obtained are cached."""
        if self._result is not None:
            return self._result
        failure: BaseException | None = None
        if self._futures:
            done, _ = wait(self._futures, return_when=FIRST_EXCEPTION)
            failed = [f for f in done if not f.cancelled() and f.exception() is not None]
            if failed:
                failure = failed[0].exception()
                self.close()
        fresh: dict[str, array[float]] = {}
        for texts, future in zip(self._plan.calls, self._futures, strict=True):
            if future.done() and not future.cancelled() and future.exception() is None:
                got = future.result()
                if got is not None:
                    fresh.update(zip(texts, got, strict=True))
        kept = {self._plan.keys[text]: encode(vector) for text, vector in fresh.items()}
        if failure is not None:
            try:
                self._embeddings.cache.put_many(self._embeddings.tenant, kept)
            except Exception:
                logger.exception("could not keep the embeddings made before a failure")
            raise failure
        self._embeddings.cache.put_many(self._embeddings.tenant, kept)
        vectors = self._plan.cached
        vectors.update((text, unit(vector)) for text, vector in fresh.items())
        metrics.add_metric(name="EmbeddingCacheHits", unit="Count", value=self._plan.hits)
        metrics.add_metric(name="EmbeddingCalls", unit="Count", value=len(self._futures))
        logger.debug(
            "embedded",
            extra={"cache_hits": self._plan.hits, "calls": len(self._futures), "texts": len(fresh)},
        )
        self._result = {
            index: similarity(vectors[output], vectors[reference], self._embedder.name)
            for index, (output, reference) in enumerate(self._plan.items)
            if output in vectors and reference in vectors
        }
        return self._result

    def close(self) -> None:
        """Stop: calls not started are cancelled; calls in flight end within their timeouts,
        which the deadline bounds."""
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None


def configured_embeddings(
    tenant: str, cache: AnswerCache, deadline: Deadline | None = None
) -> CachedEmbeddings | None:
    """The embeddings EVALSVC_EMBEDDINGS configures, for `tenant`, its vectors kept in `cache`,
    asked before `deadline`; None when it is unset."""
    embedder = configured_embedder(deadline)
    return CachedEmbeddings(embedder, tenant, cache) if embedder else None
