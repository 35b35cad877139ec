"""The writes that make a result exist, inline (put: the scored pairs, then the header with a
condition) or queued (running: the header, with its job), and that complete or fail a queued
one (completing, failing). The order of those writes is the package's (storage.results)."""

from __future__ import annotations

import json
from collections.abc import Sequence

from evalsvc.core.errors import Failure
from evalsvc.core.observability import logger
from evalsvc.models.evaluations import EvaluationResult, ScoredPair
from evalsvc.models.jobs import Piece, Status
from evalsvc.storage import dynamo
from evalsvc.storage.dynamo import n, s
from evalsvc.storage.results.header import (
    error_bars_fields,
    get,
    header_item,
    histograms_field,
    inputs_field,
    lowest_json,
    selection_field,
    summaries_json,
)
from evalsvc.storage.results.keys import header_key, latest_pointer, result_pk, table
from evalsvc.storage.results.scored import discard_scored, scored_item
from evalsvc.storage.writes import Writes


def put(
    result: EvaluationResult, scored: Sequence[ScoredPair], pieces: Sequence[Piece] = ()
) -> None:
    """Store the scored pairs, then the header that makes the result exist (with `pieces`,
    what it scored)."""
    pk = result_pk(result.tenant, result.results_id)
    result.scored_bytes = sum(pair.listed_bytes for pair in scored)
    requests = [{"PutRequest": {"Item": scored_item(pk, pair)}} for pair in scored]
    try:
        dynamo.batch_write(table(), requests)
        dynamo.call(
            "transact_write_items",
            TransactItems=[
                {
                    "Put": {
                        "TableName": table(),
                        "Item": {
                            **header_item(result),
                            **selection_field(result.tenant, pieces),
                        },
                        "ConditionExpression": "attribute_not_exists(pk)",
                    }
                },
                {"Put": {"TableName": table(), "Item": latest_pointer(result)}},
            ],
        )
    except BaseException:
        stored = get(result.tenant, result.results_id)
        if stored is not None and stored.created_ms == result.created_ms:
            # The commit went through though its answer was lost: the result stands.
            logger.warning("a result commit succeeded unanswered", extra={"id": result.results_id})
            return
        discard_scored(pk, scored)
        raise


# ---- queued evaluations (their jobs: logic.jobs) ------------------------------------------------


def running(result: EvaluationResult, pieces: Sequence[Piece] = ()) -> Writes:
    """The write that makes the result exist, running (with its job, and `pieces`, what it
    scores); refused when it exists."""
    item = {**header_item(result), **selection_field(result.tenant, pieces)}
    item["status"] = s(Status.RUNNING.value)
    put = {"TableName": table(), "Item": item, "ConditionExpression": "attribute_not_exists(pk)"}
    return Writes([{"Put": put}])


def completing(result: EvaluationResult) -> Writes:
    """The writes that store the statistics and score histograms, mark the result complete
    and make it the dataset's newest."""
    values = {
        ":complete": s(Status.COMPLETE.value),
        ":usage": s(json.dumps(result.usage.as_dict())),
        ":summaries": s(summaries_json(result)),
        ":lowest": s(lowest_json(result)),
        ":pairs": n(result.pairs_done),
        ":bytes": n(result.scored_bytes or 0),
    }
    expression = (
        "SET #status = :complete, summaries = :summaries, lowest = :lowest, "
        "pairs_done = :pairs, bytes_done = :bytes, #usage = :usage"
    )
    histograms = histograms_field(result)
    if histograms:
        expression += ", histograms = :histograms"
        values[":histograms"] = histograms["histograms"]
    figures = {**error_bars_fields(result), **inputs_field(result)}
    names = {"#status": "status", "#usage": "usage"}
    for name in (
        "clustered",
        "judge_noise",
        "inputs",
        "not_applicable",
        "juries",
    ):  # "clustered" is a reserved word
        if name in figures:
            expression += f", #{name} = :{name}"
            names[f"#{name}"] = name
            values[f":{name}"] = figures[name]
    update = {
        "TableName": table(),
        "Key": header_key(result.tenant, result.results_id),
        "UpdateExpression": expression,
        "ExpressionAttributeNames": names,
        "ExpressionAttributeValues": values,
    }
    pointer = {"Put": {"TableName": table(), "Item": latest_pointer(result)}}
    return Writes([{"Update": update}, pointer])


def failing(tenant: str, results_id: str, failure: Failure) -> Writes:
    """The write that marks the result failed, saying why."""
    update = {
        "TableName": table(),
        "Key": header_key(tenant, results_id),
        "UpdateExpression": "SET #status = :failed, failure = :reason, failure_error = :error",
        "ExpressionAttributeNames": {"#status": "status"},
        "ExpressionAttributeValues": {
            ":failed": s(Status.FAILED.value),
            ":reason": s(failure.message),
            ":error": s(failure.error),
        },
    }
    return Writes([{"Update": update}])
