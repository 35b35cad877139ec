"""The LLM judge: asks the configured LLM (scoring.llm) one question about each pair, with
bounded concurrency, and keeps verdicts in the per-tenant cache."""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout

from evalsvc.errors import JudgeFailed, OutOfTime
from evalsvc.models.datasets import Pair
from evalsvc.observability import logger, metrics
from evalsvc.scoring.checks import Score
from evalsvc.scoring.llm import LLM, LLMFailed, configured_llm
from evalsvc.scoring.verdicts import (
    PROMPT_VERSION,
    SYSTEM,
    VERDICT_SCHEMA,
    user_message,
    verdict_from_object,
)
from evalsvc.storage import judge_cache

TOOL_NAME = "record_verdict"


def cache_key(provider: str, question: str, system_prompt: str, pair: Pair) -> str:
    material = json.dumps(
        [provider, PROMPT_VERSION, question, system_prompt, pair.input, pair.output]
    )
    return hashlib.sha256(material.encode()).hexdigest()


class CachedJudge:
    """Scores every pair for one question: cached verdicts first, then the LLM, with up to
    `concurrency` calls in flight."""

    def __init__(self, llm: LLM, tenant: str) -> None:
        self.llm = llm
        self.tenant = tenant
        # time.monotonic() after which no more verdicts are awaited (a queue worker's time);
        # the verdicts given by then are cached and OutOfTime raised.
        self.deadline: float | None = None

    def _ask(self, question: str, pair: Pair, system_prompt: str) -> tuple[int, str]:
        user = user_message(question, system_prompt, pair.input, pair.output)
        try:
            return self.llm.ask(
                SYSTEM, user, VERDICT_SCHEMA, TOOL_NAME, verdict_from_object, max_tokens=512
            )
        except LLMFailed as exc:
            preview = question if len(question) <= 60 else question[:57] + "..."
            raise JudgeFailed(
                f"the judge failed on metric {preview!r} for pair {pair.id!r} after "
                f"{exc.attempts} attempts: {exc.problem}; nothing was stored",
                transient=exc.transient,
            ) from exc

    def _time_left(self) -> float | None:
        return None if self.deadline is None else max(0.0, self.deadline - time.monotonic())

    def score_all(self, question: str, pairs: Sequence[Pair], system_prompt: str) -> list[Score]:
        retries_before = self.llm.retries
        keys = [cache_key(self.llm.name, question, system_prompt, p) for p in pairs]
        verdicts = judge_cache.get_many(self.tenant, keys)
        hits = sum(1 for key in keys if key in verdicts)
        todo = [i for i, key in enumerate(keys) if key not in verdicts]
        fresh: dict[str, tuple[int, str]] = {}
        if todo:
            pool = ThreadPoolExecutor(max_workers=min(self.llm.concurrency, len(todo)))
            failure: BaseException | None = None
            futures: dict[int, Future[tuple[int, str]]] = {}
            try:
                futures = {
                    i: pool.submit(self._ask, question, pairs[i], system_prompt) for i in todo
                }
                for i, future in futures.items():
                    try:
                        fresh[keys[i]] = future.result(timeout=self._time_left())
                    except FutureTimeout:
                        failure = OutOfTime(
                            f"stopped after {len(fresh)} of {len(todo)} judge calls to stay "
                            "within the worker's time; the verdicts given are kept"
                        )
                        break
                    except BaseException as exc:
                        failure = exc
                        break
            finally:
                pool.shutdown(wait=True, cancel_futures=True)
            # Verdicts already given are kept even when another pair failed: a retry of the
            # same work asks only for what is missing.
            for i, future in futures.items():
                given = future.done() and not future.cancelled() and future.exception() is None
                if given and keys[i] not in fresh:
                    fresh[keys[i]] = future.result()
            if failure is None:
                judge_cache.put_many(self.tenant, fresh)
            else:
                try:
                    judge_cache.put_many(self.tenant, fresh)
                except Exception:
                    logger.exception("could not keep the verdicts given before a judge failure")
                raise failure
        verdicts.update(fresh)
        metrics.add_metric(name="JudgeCacheHits", unit="Count", value=hits)
        metrics.add_metric(name="JudgeCalls", unit="Count", value=len(todo))
        metrics.add_metric(
            name="JudgeRetries", unit="Count", value=self.llm.retries - retries_before
        )
        logger.debug("judged", extra={"pairs": len(pairs), "cache_hits": hits, "calls": len(todo)})
        return [Score(float(verdicts[key][0]), verdicts[key][1]) for key in keys]


def configured_judge(tenant: str) -> CachedJudge | None:
    """The judge EVALSVC_LLM configures, for `tenant`; None when it is unset."""
    llm = configured_llm()
    return CachedJudge(llm, tenant) if llm else None
