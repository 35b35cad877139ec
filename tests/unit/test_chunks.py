"""Cutting work into chunks, chunk messages, and the Prefer header: pure functions."""

from __future__ import annotations

import json
from collections.abc import Callable
from unittest.mock import patch

import pytest
from evalsvc.api.prefer import preferences, wait_budget
from evalsvc.core.deadlines import Deadline
from evalsvc.core.settings import get_settings
from evalsvc.logic import chunks, jobs
from evalsvc.logic.evaluations import runs_inline
from evalsvc.logic.kinds.augmentation import AUGMENTATION, seeds_per_chunk
from evalsvc.logic.kinds.evaluation import EVALUATION, pairs_per_chunk
from evalsvc.models.jobs import Chunk
from evalsvc.models.metric_sets import judge_calls
from evalsvc.storage import work_queue
from evalsvc.storage.datasets.keys import append_ord, fingerprint, make_ord
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from tests.conftest import point_service_at

ORDS = [f"1795660800000#{i:08d}" for i in range(7)]


def test_cut_makes_consecutive_chunks_covering_every_pair_once() -> None:
    pieces = jobs.cut(EVALUATION, "acme", "ev_1", ORDS, 3)

    assert [(c.index, c.start, c.count) for c in pieces] == [(0, 0, 3), (1, 3, 3), (2, 6, 1)]
    assert [(c.first_ord, c.last_ord) for c in pieces] == [
        (ORDS[0], ORDS[2]),
        (ORDS[3], ORDS[5]),
        (ORDS[6], ORDS[6]),
    ]


def test_cut_of_fewer_pairs_than_a_chunk_is_one_chunk() -> None:
    (only,) = jobs.cut(AUGMENTATION, "acme", "ds", ORDS[:2], 100)

    assert (only.start, only.count, only.first_ord, only.last_ord) == (0, 2, ORDS[0], ORDS[1])


def _chunk_cost(
    pairs: int, checks: int, questions: int, bytes_per_pair: float, samples: int = 1
) -> dict[str, float]:
    """What a chunk of `pairs` pairs costs, in each unit a chunk is limited in (a question is
    `samples` judge calls a pair: judge_samples)."""
    return {
        "checks": pairs * checks,
        "calls": pairs * questions * samples,
        "bytes": pairs * bytes_per_pair,
    }


def _largest_within(limits: dict[str, float], cost: Callable[[int], dict[str, float]]) -> int:
    """The largest chunk (at least 1 pair) whose every cost is within its limit, found by
    walking up one pair at a time: an oracle that shares no arithmetic with the code."""
    size = 1
    while all(value <= limits[unit] for unit, value in cost(size + 1).items()):
        size += 1
        if size > 200_000:
            break
    return size


@settings(max_examples=60, deadline=None, derandomize=True)
@given(
    checks=st.integers(0, 50),
    questions=st.integers(0, 50),
    bytes_per_pair=st.one_of(st.none(), st.floats(1, 2_000_000)),
    chunk_checks=st.integers(1, 20_000),
    chunk_calls=st.integers(1, 2_000),
    chunk_bytes=st.integers(1, 64 * 1024 * 1024),
    samples=st.integers(1, 5),
)
def test_a_chunk_is_the_largest_within_every_limit(
    checks: int,
    questions: int,
    bytes_per_pair: float | None,
    chunk_checks: int,
    chunk_calls: int,
    chunk_bytes: int,
    samples: int,
) -> None:
    assume(checks + questions > 0)
    definitions = ["check:non_empty"] * checks + ["Is it polite?"] * questions
    settings_now = get_settings().model_copy(
        update={
            "chunk_checks": chunk_checks,
            "chunk_judge_calls": chunk_calls,
            "chunk_max_bytes": chunk_bytes,
        }
    )
    limits = {"checks": chunk_checks, "calls": chunk_calls, "bytes": chunk_bytes}
    with patch("evalsvc.logic.kinds.evaluation.get_settings", return_value=settings_now):
        size = pairs_per_chunk(definitions, bytes_per_pair, samples)

    def cost(pairs: int) -> dict[str, float]:
        return _chunk_cost(pairs, checks, questions, bytes_per_pair or 0, samples)

    assert size == _largest_within(limits, cost)


@pytest.mark.parametrize(
    ("samples", "inline"), [(1, True), (2, True), (3, False)], ids=["k1", "k2", "k3"]
)
def test_an_evaluation_runs_inline_within_its_judge_calls_counting_every_sample(
    monkeypatch: pytest.MonkeyPatch, samples: int, inline: bool
) -> None:
    # Given a request that may make 10 judge calls, and 5 pairs on one question and a check
    point_service_at({"EVALSVC_INLINE_MAX_JUDGE_CALLS": "10"}, monkeypatch)
    definitions = ["Is it polite?", "check:non_empty"]

    # Then k samples are 5k calls: within the request for k <= 2 only
    assert runs_inline(definitions, 5, 1_000, samples) is inline
    assert judge_calls(definitions, 5, samples) == 5 * samples


def test_a_chunk_is_never_empty_even_when_the_limits_are_tiny(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    point_service_at(
        {
            "EVALSVC_CHUNK_JUDGE_CALLS": "1",
            "EVALSVC_CHUNK_CHECKS": "1",
            "EVALSVC_CHUNK_MAX_BYTES": "1",
        },
        monkeypatch,
    )

    assert pairs_per_chunk(["Is it polite?", "Is it short?"], 500.0) == 1
    assert pairs_per_chunk(["Is it polite?", "Is it short?"], 500.0, 5) == 1
    assert seeds_per_chunk(50, False, 500.0) == 1


def test_seeds_per_chunk_is_one_call_each_with_an_llm_else_within_pairs_and_bytes() -> None:
    limits = get_settings()
    assert seeds_per_chunk(5, True, 10_000.0) == limits.chunk_generation_calls
    # Without an LLM a seed makes `multiple` pairs of about its own size
    for multiple, per_seed in [(5, None), (5, 100.0), (5, 1_000_000.0), (50, 3_000.0)]:
        seeds = seeds_per_chunk(multiple, False, per_seed)
        written = lambda n, m=multiple, b=per_seed: {  # noqa: E731
            "pairs": n * m,
            "bytes": n * m * (b or 0),
        }
        chunk_limits = {"pairs": limits.chunk_checks, "bytes": limits.chunk_max_bytes}
        assert seeds == _largest_within(chunk_limits, written)


def test_a_chunk_message_round_trips() -> None:
    chunk = Chunk(AUGMENTATION, "acme", "ds_1", 4, 12, 3, ORDS[0], ORDS[2], requeues=2)

    assert work_queue.decode(work_queue.encode(chunk)) == chunk


def test_a_chunk_names_its_pairs_and_its_message_carries_them() -> None:
    ords = [make_ord(1000, k) for k in range(5)] + [append_ord(2000, "late-id")]
    first, second = jobs.cut(EVALUATION, "acme", "ev_1", ords, 4)

    assert (first.count, second.count) == (4, 2)
    assert first.member_set() == {fingerprint(o) for o in ords[:4]}
    assert second.member_set() == {fingerprint(o) for o in ords[4:]}
    assert work_queue.decode(work_queue.encode(second)) == second
    # A message whose members do not match its count is not a chunk
    body = json.loads(work_queue.encode(second))
    body["count"] = 3
    with pytest.raises(work_queue.BadMessage):
        work_queue.decode(json.dumps(body))


def test_the_largest_chunk_fits_one_message_and_batches_stay_under_the_limit() -> None:
    ords = [append_ord(1_795_000_000_000 + k, "p" * 128) for k in range(10_000)]
    [chunk] = jobs.cut(EVALUATION, "t" * 64, "ev_" + "x" * 60, ords, 10_000)
    body = work_queue.encode(chunk)
    assert len(body.encode()) < 256 * 1024 - 1024

    bodies = [body] * 7 + ["small"] * 25
    batches = work_queue.batched(bodies)

    assert [b for batch in batches for b in batch] == bodies
    # Two of the largest messages to a call, never three; ten small ones
    assert [len(batch) for batch in batches] == [2, 2, 2, 10, 10, 6]
    for batch in batches:
        assert sum(len(b.encode()) for b in batch) <= work_queue.SEND_BATCH_BYTES


@pytest.mark.parametrize(
    "body",
    [
        "not json",
        "[]",
        '{"v": 2, "kind": "evaluation"}',
        '{"v": 1, "kind": "evaluation", "tenant": "acme"}',
        '{"v": 1, "kind": "No such kind", "tenant": "a", "job": "j", "chunk": 0, "start": 0, '
        '"count": 1, "first_ord": "a", "last_ord": "b"}',
        '{"v": 1, "kind": "evaluation", "tenant": "a", "job": "j", "chunk": "x", "start": 0, '
        '"count": 1, "first_ord": "a", "last_ord": "b"}',
    ],
)
def test_anything_but_a_chunk_message_is_a_bad_message(body: str) -> None:
    with pytest.raises(work_queue.BadMessage):
        work_queue.decode(body)


def test_backoff_doubles_with_jitter_and_stops_at_15_minutes() -> None:
    base = get_settings().chunk_retry_base_seconds
    for attempt in range(1, 12):
        delay = chunks.backoff(attempt)
        ceiling = min(900.0, base * 2 ** (attempt - 1))
        assert ceiling / 2 - 1 <= delay <= ceiling


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        (None, {}),
        ("respond-async", {"respond-async": ""}),
        ("Respond-Async, wait=10", {"respond-async": "", "wait": "10"}),
        ('wait="5"; foo=bar, handling=lenient', {"wait": "5", "handling": "lenient"}),
        ("wait=1, wait=9", {"wait": "1"}),  # the first of a repeated preference counts
    ],
)
def test_prefer_header_preferences(header: str | None, expected: dict[str, str]) -> None:
    assert preferences(header) == expected


def test_a_plain_request_waits_no_longer_than_the_setting_the_deadline_or_the_caller_allow() -> (
    None
):
    roomy = Deadline.after(60)
    assert wait_budget(roomy, {}) == 25.0
    assert wait_budget(Deadline.after(12), {}) == pytest.approx(10.0, abs=0.05)
    assert wait_budget(Deadline.after(1), {}) == 0.0
    assert wait_budget(roomy, {"wait": "3"}) == 3.0
    assert wait_budget(roomy, {"wait": "later"}) == 25.0


def _cancelled(*codes: str) -> Exception:
    from botocore.exceptions import ClientError

    return ClientError(
        {
            "Error": {"Code": "TransactionCanceledException", "Message": "cancelled"},
            "CancellationReasons": [{"Code": code} for code in codes],
        },
        "TransactWriteItems",
    )


def test_only_a_false_condition_means_a_job_has_ended() -> None:
    from botocore.exceptions import ClientError
    from evalsvc.storage.dynamo import failed_conditions

    conditional = ClientError(
        {"Error": {"Code": "ConditionalCheckFailedException", "Message": "no"}}, "UpdateItem"
    )
    assert failed_conditions(conditional) == [0]
    assert failed_conditions(_cancelled("ConditionalCheckFailed", "None")) == [0]  # type: ignore[arg-type]
    assert failed_conditions(_cancelled("None", "ConditionalCheckFailed")) == [1]  # type: ignore[arg-type]
    # A conflict with another transaction says nothing about the job: the work is retried
    assert failed_conditions(_cancelled("None", "TransactionConflict")) is None  # type: ignore[arg-type]
    throttled = ClientError({"Error": {"Code": "ThrottlingException", "Message": "x"}}, "PutItem")
    assert failed_conditions(throttled) is None


def test_the_reasons_are_read_from_the_message_when_the_response_lacks_them() -> None:
    from botocore.exceptions import ClientError
    from evalsvc.storage.dynamo import failed_conditions

    def cancelled(message: str) -> ClientError:
        error = {"Code": "TransactionCanceledException", "Message": message}
        return ClientError({"Error": error}, "TransactWriteItems")

    listed = "Transaction cancelled, please refer cancellation reasons for specific reasons"
    assert failed_conditions(cancelled(f"{listed} [None, ConditionalCheckFailed]")) == [1]
    assert failed_conditions(cancelled(f"{listed} [TransactionConflict, None]")) is None
    assert failed_conditions(cancelled("cancelled")) is None


def test_a_transaction_conflicting_with_another_is_tried_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from evalsvc.storage import dynamo

    monkeypatch.setattr(dynamo.time, "sleep", lambda seconds: None)
    answers: list[Exception | None] = []

    def call(operation: str, **kwargs: object) -> dict[str, object]:
        answer = answers.pop(0)
        if answer is not None:
            raise answer
        return {}

    monkeypatch.setattr(dynamo, "call", call)
    conflict = _cancelled("None", "TransactionConflict")
    answers[:] = [conflict, conflict, None]
    assert dynamo.transact([{}]) is True and answers == []
    answers[:] = [conflict, _cancelled("ConditionalCheckFailed", "None")]
    assert dynamo.transact([{}]) is False
    answers[:] = [conflict] * dynamo.TRANSACT_ATTEMPTS
    with pytest.raises(Exception, match="cancelled"):
        dynamo.transact([{}])
