"""The jobs table: the state of queued work, apart from what the work produces.

    pk                               sk            what
    T#<tenant>#J#<kind>#<job_id>     job           status, counters, progress time, params, plan
    T#<tenant>#J#<kind>#<job_id>     chunk#<k>     chunk k counted: its pairs, bytes and totals
    T#<tenant>#J#<kind>#<job_id>     spent#<k>     LLM usage of every delivery of chunk k (added
                                                   as its calls end), and the holds of
                                                   deliveries not yet settled
    T#<tenant>#text#<sha256>         part#<k>      long params or plans (storage.texts)
    T#<tenant>#running               running       `running`: the tenant's running jobs, a
                                                   string set of <kind>#<job_id>

The job item stays small: counters and a reference to its chunk plan (the chunks' boundaries,
read only by the sweeper). A chunk is counted once by creating its chunk item, in one
transaction with the counters' update; finishing a job reads its chunk items, one per chunk,
never the pairs. While a job runs its item carries `sweep`, which puts it in the sparse index
`stalled` by `progress_ms`; ending the job removes it.

A job is in its tenant's running set exactly while it runs: it is added in the transaction
that creates the job (only while the set is smaller than the room allowed), and removed in the
transaction that ends it, complete or failed (by a worker, the dead-letter worker or the
sweeper). So the set cannot drift from the jobs' states, two requests racing for the last
slot cannot both take it, and a job that stalls holds its slot only until the sweeper ends it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from evalsvc.core.errors import Failure
from evalsvc.core.settings import get_settings
from evalsvc.models.jobs import (
    Chunk,
    Job,
    Status,
    Tally,
    members_from_text,
    members_text,
)
from evalsvc.spending.meter import Usage
from evalsvc.storage import dynamo, texts
from evalsvc.storage.dynamo import Item, get_n, get_s, n, s
from evalsvc.storage.writes import Writes

JOB_SK = "job"
CHUNK_PREFIX = "chunk#"
SPENT_PREFIX = "spent#"
STALLED_INDEX = "stalled"
RUNNING_MARK = "running"
RUNNING_SK = "running"

# The most bytes of params a job item holds itself.
PARAMS_INLINE_BYTES = 1024

_STATUS = {"#status": "status"}
_RUNNING = {":running": s(Status.RUNNING.value)}


def _table() -> str:
    return get_settings().jobs_table


def _pk(tenant: str, kind: str, job_id: str) -> str:
    return f"T#{tenant}#J#{kind}#{job_id}"


def key(tenant: str, kind: str, job_id: str) -> Item:
    return {"pk": s(_pk(tenant, kind, job_id)), "sk": s(JOB_SK)}


def _chunk_key(tenant: str, kind: str, job_id: str, index: int) -> Item:
    return {"pk": s(_pk(tenant, kind, job_id)), "sk": s(f"{CHUNK_PREFIX}{index:06d}")}


def _running_key(tenant: str) -> Item:
    return {"pk": s(f"T#{tenant}#running"), "sk": s(RUNNING_SK)}


def _running_entry(kind: str, job_id: str) -> str:
    return f"{kind}#{job_id}"


def running(tenant: str) -> list[tuple[str, str]]:
    """(kind, job id) of every job of the tenant running now (started since the running set
    was kept), in a stable order: one consistent read."""
    item = dynamo.get_item(_table(), _running_key(tenant))
    entries = sorted((item or {}).get("running", {}).get("SS", []))
    return [(kind, job_id) for kind, _, job_id in (e.partition("#") for e in entries)]


def _parse_pk(pk: str) -> tuple[str, str, str]:
    """(tenant, kind, job id) of a job's partition key."""
    tenant_part, rest = pk[2:].split("#J#", 1)
    kind, job_id = rest.split("#", 1)
    return tenant_part, kind, job_id


def _json(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _plan(pieces: Sequence[Chunk]) -> str:
    rows = [[c.start, c.count, c.first_ord, c.last_ord, members_text(c.members)] for c in pieces]
    return _json(rows)


def _create_action(job: Job, pieces: Sequence[Chunk]) -> Item:
    """The transaction action that makes the job exist, running, with its chunk plan (long
    params or plans are written apart first); it fails when the job exists already."""
    table = _table()
    item: Item = {
        **key(job.tenant, job.kind, job.job_id),
        "status": s(Status.RUNNING.value),
        "sweep": s(RUNNING_MARK),
        "progress_ms": n(job.created_ms),  # starting is progress
        "created_ms": n(job.created_ms),
        "chunk_count": n(job.chunk_count),
        "pairs_total": n(job.pairs_total),
        "chunks_done": n(0),
        "pairs_done": n(0),
        "bytes_done": n(0),
        "sweeps": n(0),
        # Every count rewrites this item: only small params stay in it, and the plan (read by
        # the sweeper alone) is always kept apart.
        **texts.text_field(table, job.tenant, "params", _json(job.params), PARAMS_INLINE_BYTES),
        **texts.text_field(table, job.tenant, "plan", _plan(pieces), inline_bytes=0),
    }
    return {
        "Put": {"TableName": table, "Item": item, "ConditionExpression": "attribute_not_exists(pk)"}
    }


def _take_slot(job: Job, room: int) -> Item:
    """The transaction action that adds the job to its tenant's running set, only while the
    set holds fewer than `room` jobs."""
    return {
        "Update": {
            "TableName": _table(),
            "Key": _running_key(job.tenant),
            "UpdateExpression": "ADD running :job",
            "ConditionExpression": "attribute_not_exists(running) OR size(running) < :room",
            "ExpressionAttributeValues": {
                ":job": {"SS": [_running_entry(job.kind, job.job_id)]},
                ":room": n(room),
            },
        }
    }


def _free_slot(job: Job) -> Item:
    """The transaction action that removes the job from its tenant's running set (nothing to
    remove, for a job started before the set was kept, is no error)."""
    return {
        "Update": {
            "TableName": _table(),
            "Key": _running_key(job.tenant),
            "UpdateExpression": "DELETE running :job",
            "ExpressionAttributeValues": {":job": {"SS": [_running_entry(job.kind, job.job_id)]}},
        }
    }


def create(job: Job, pieces: Sequence[Chunk], also: Writes | None = None, *, room: int) -> bool:
    """Make the job exist and take its slot in its tenant's running set (with the writes
    `also`, in one transaction); False, changing nothing, when it exists already, the set
    holds `room` jobs, or a condition of `also` fails."""
    actions = [
        _create_action(job, pieces),
        _take_slot(job, room),
        *(also.actions() if also else []),
    ]
    return dynamo.transact(actions)


def _failure(item: Item, message: str, error: str) -> Failure | None:
    text = get_s(item, message, "") or ""
    if not text:
        return None
    return Failure(text, get_s(item, error, "") or Failure(text).error)


def _from_item(tenant: str, kind: str, job_id: str, item: Item, params: bool) -> Job:
    return Job(
        kind=kind,
        tenant=tenant,
        job_id=job_id,
        chunk_count=get_n(item, "chunk_count"),
        pairs_total=get_n(item, "pairs_total"),
        created_ms=get_n(item, "created_ms"),
        params=json.loads(texts.read_text(_table(), tenant, item, "params") or "{}")
        if params
        else {},
        status=Status(get_s(item, "status") or Status.RUNNING.value),
        chunks_done=get_n(item, "chunks_done"),
        pairs_done=get_n(item, "pairs_done"),
        bytes_done=get_n(item, "bytes_done"),
        progress_ms=get_n(item, "progress_ms"),
        sweeps=get_n(item, "sweeps"),
        failure=_failure(item, "failure", "failure_error"),
        last_error=_failure(item, "last_error", "last_error_class"),
    )


def get(tenant: str, kind: str, job_id: str, *, params: bool = False) -> Job | None:
    """The job's state; with `params`, what its kind needs to do its work too (a long prompt
    among them is read from where it is kept apart: pollers and sweepers go without)."""
    item = dynamo.get_item(_table(), key(tenant, kind, job_id))
    return _from_item(tenant, kind, job_id, item, params) if item else None


def plan(job: Job) -> list[Chunk]:
    """Every chunk of the job, as it was cut when the job started."""
    item = dynamo.get_item(_table(), key(job.tenant, job.kind, job.job_id))
    if item is None:
        return []
    rows = json.loads(texts.read_text(_table(), job.tenant, item, "plan") or "[]")
    return [
        Chunk(
            job.kind,
            job.tenant,
            job.job_id,
            k,
            int(row[0]),
            int(row[1]),
            str(row[2]),
            str(row[3]),
            # A plan cut before chunks named their pairs has four columns.
            members_from_text(row[4] if len(row) > 4 else None),
        )
        for k, row in enumerate(rows)
    ]


# ---- counting chunks ---------------------------------------------------------------------------


def is_counted(chunk: Chunk) -> bool:
    response = dynamo.call(
        "get_item",
        TableName=_table(),
        Key=_chunk_key(chunk.tenant, chunk.kind, chunk.job_id, chunk.index),
        ConsistentRead=True,
        ProjectionExpression="sk",
    )
    return "Item" in response


def count(chunk: Chunk, tally: Tally, now_ms: int) -> tuple[int, int] | None:
    """Count `chunk` done, once, leaving `tally`: (chunks done, chunk count) after it; None when
    it was counted before or the job is no longer running."""
    table = _table()
    chunk_item: Item = {
        **_chunk_key(chunk.tenant, chunk.kind, chunk.job_id, chunk.index),
        "pairs": n(tally.pairs),
        "bytes": n(tally.bytes),
        **texts.text_field(table, chunk.tenant, "totals", _json(tally.totals)),
    }
    counted = dynamo.transact(
        [
            {
                "Put": {
                    "TableName": table,
                    "Item": chunk_item,
                    "ConditionExpression": "attribute_not_exists(pk)",
                }
            },
            {
                "Update": {
                    "TableName": table,
                    "Key": key(chunk.tenant, chunk.kind, chunk.job_id),
                    "UpdateExpression": "SET progress_ms = :now "
                    "ADD chunks_done :one, pairs_done :pairs, bytes_done :bytes",
                    "ConditionExpression": "#status = :running",
                    "ExpressionAttributeNames": _STATUS,
                    "ExpressionAttributeValues": {
                        ":now": n(now_ms),
                        ":one": n(1),
                        ":pairs": n(tally.pairs),
                        ":bytes": n(tally.bytes),
                        **_RUNNING,
                    },
                }
            },
        ],
    )
    if not counted:
        return None
    job = get(chunk.tenant, chunk.kind, chunk.job_id)
    return (job.chunks_done, job.chunk_count) if job else None


def tallies(tenant: str, kind: str, job_id: str) -> Iterator[Tally]:
    """What every counted chunk of the job left, one item per chunk, read a page at a time as
    they are used (a large job's totals need not be held at once)."""
    items = dynamo.query_items(
        TableName=_table(),
        KeyConditionExpression="pk = :pk AND begins_with(sk, :chunk)",
        ExpressionAttributeValues={":pk": s(_pk(tenant, kind, job_id)), ":chunk": s(CHUNK_PREFIX)},
        ConsistentRead=True,
    )
    for item in items:
        yield Tally(
            index=int(item["sk"]["S"][len(CHUNK_PREFIX) :]),
            pairs=get_n(item, "pairs"),
            bytes=get_n(item, "bytes"),
            totals=json.loads(texts.read_text(_table(), tenant, item, "totals") or "{}"),
        )


def counted_indexes(job: Job) -> set[int]:
    """The indexes of the chunks counted so far (keys only)."""
    items = dynamo.query_items(
        TableName=_table(),
        KeyConditionExpression="pk = :pk AND begins_with(sk, :chunk)",
        ExpressionAttributeValues={
            ":pk": s(_pk(job.tenant, job.kind, job.job_id)),
            ":chunk": s(CHUNK_PREFIX),
        },
        ProjectionExpression="sk",
        ConsistentRead=True,
    )
    return {int(item["sk"]["S"][len(CHUNK_PREFIX) :]) for item in items}


# ---- LLM usage ---------------------------------------------------------------------------------


# A hold is kept as a top-level attribute of its chunk's spent item (no map to create first).
HOLD_PREFIX = "hold_"


def _spent_key(chunk: Chunk) -> Item:
    return {
        "pk": s(_pk(chunk.tenant, chunk.kind, chunk.job_id)),
        "sk": s(f"{SPENT_PREFIX}{chunk.index:06d}"),
    }


def hold_spent(chunk: Chunk, reservation: str, month: str, most: Usage) -> None:
    """While a delivery of `chunk` makes LLM calls: the most its attempts in flight, or ended
    and not added yet, can use (its rooms), under its reservation's id (in `month`'s ledger),
    until the delivery settles it (add_spent). A delivery killed mid-call never settles: its
    hold counts in full, as lost work."""
    dynamo.call(
        "update_item",
        TableName=_table(),
        Key=_spent_key(chunk),
        UpdateExpression="SET #hold = :hold",
        ExpressionAttributeNames={"#hold": HOLD_PREFIX + reservation},
        ExpressionAttributeValues={":hold": s(json.dumps({**most.as_dict(), "month": month}))},
    )


# Each model's counts on a chunk's spent item, beside the totals (which older items hold
# alone): BY_MODEL_PREFIX + model + "#" + one of BY_MODEL_FIELDS.
BY_MODEL_PREFIX = "by#"
BY_MODEL_FIELDS = ("calls", "hits", "in", "out")


def add_spent(chunk: Chunk, usage: Usage, holds: Sequence[str] = ()) -> None:
    """Add LLM usage of a delivery of `chunk` to the chunk's (each delivery's, counted or not:
    every call was made), its totals and each model's (a judge's and an embeddings model's are
    priced apart), dropping the delivery's `holds` when it settles, apart from the job item,
    which stays cool."""
    names = {f"#h{k}": HOLD_PREFIX + rid for k, rid in enumerate(holds)}
    values = {
        ":model": s(usage.model),
        ":calls": n(usage.llm_calls),
        ":hits": n(usage.cache_hits),
        ":input": n(usage.input_tokens),
        ":output": n(usage.output_tokens),
    }
    adds = ["llm_calls :calls", "cache_hits :hits", "input_tokens :input", "output_tokens :output"]
    for k, part in enumerate(p for p in usage.parts() if p.model and not p.empty):
        counts = (part.llm_calls, part.cache_hits, part.input_tokens, part.output_tokens)
        for field, count in zip(BY_MODEL_FIELDS, counts, strict=True):
            names[f"#m{k}{field}"] = f"{BY_MODEL_PREFIX}{part.model}#{field}"
            values[f":m{k}{field}"] = n(count)
            adds.append(f"#m{k}{field} :m{k}{field}")
    dynamo.call(
        "update_item",
        TableName=_table(),
        Key=_spent_key(chunk),
        UpdateExpression="SET model = :model ADD "
        + ", ".join(adds)
        + (" REMOVE " + ", ".join(h for h in names if h.startswith("#h")) if holds else ""),
        **({"ExpressionAttributeNames": names} if names else {}),
        ExpressionAttributeValues=values,
    )


def _spent_of(item: Item) -> Usage:
    """A chunk's spent item's usage: each model's counts, and what the totals hold beyond them
    (written before each model's were) as the item's model's."""
    total = Usage(
        get_n(item, "llm_calls"),
        get_n(item, "cache_hits"),
        get_n(item, "input_tokens"),
        get_n(item, "output_tokens"),
        get_s(item, "model") or "",
    )
    by: dict[str, list[int]] = {}
    for name, value in item.items():
        if name.startswith(BY_MODEL_PREFIX) and "N" in value:
            model, _, field = name[len(BY_MODEL_PREFIX) :].rpartition("#")
            if field in BY_MODEL_FIELDS:
                by.setdefault(model, [0] * 4)[BY_MODEL_FIELDS.index(field)] = int(value["N"])
    if not by:
        return total
    parts = [Usage(c[0], c[1], c[2], c[3], model) for model, c in by.items()]
    return Usage.of_parts([*parts, total.minus(Usage.of_parts(parts))])


@dataclass(frozen=True, slots=True)
class Spent:
    """The LLM usage of a job's chunks, every hold not settled counted in full as lost work,
    and those holds: (month, reservation id) of each."""

    usage: Usage
    holds: list[tuple[str, str]]


def spent(tenant: str, kind: str, job_id: str) -> Spent:
    """The LLM usage of every chunk of the job so far, with every hold not settled counted in
    full (a delivery still running, or killed), as lost work: one item per chunk that used
    any."""
    total = Usage()
    holds: list[tuple[str, str]] = []
    for item in dynamo.query_items(
        TableName=_table(),
        KeyConditionExpression="pk = :pk AND begins_with(sk, :spent)",
        ExpressionAttributeValues={":pk": s(_pk(tenant, kind, job_id)), ":spent": s(SPENT_PREFIX)},
        ConsistentRead=True,
    ):
        total += _spent_of(item)
        for name, value in item.items():
            if name.startswith(HOLD_PREFIX):
                hold = json.loads(value["S"])
                total += Usage.from_dict(hold).as_lost()
                holds.append((str(hold.get("month", "")), name[len(HOLD_PREFIX) :]))
    return Spent(total, holds)


# ---- ending and noting -------------------------------------------------------------------------


def completing(job: Job, now_ms: int) -> Writes:
    """The write that marks the running job complete (refused once it has ended)."""
    return _ending(job, Status.COMPLETE, "completed_ms = :now", {":now": n(now_ms)})


def failing(job: Job, failure: Failure) -> Writes:
    """The write that marks the running job failed, saying why (refused once it has ended)."""
    return _ending(
        job,
        Status.FAILED,
        "failure = :reason, failure_error = :error",
        {":reason": s(failure.message), ":error": s(failure.error)},
    )


def _ending(job: Job, status: Status, set_expression: str, values: Item) -> Writes:
    """The job's end (refused once it has ended), and its slot freed with it."""
    update = {
        "TableName": _table(),
        "Key": key(job.tenant, job.kind, job.job_id),
        "UpdateExpression": f"SET #status = :ended, {set_expression} REMOVE sweep",
        "ConditionExpression": "#status = :running",
        "ExpressionAttributeNames": _STATUS,
        "ExpressionAttributeValues": {":ended": s(status.value), **_RUNNING, **values},
    }
    return Writes([{"Update": update}, _free_slot(job)])


def _update_running(
    tenant: str, kind: str, job_id: str, update: str, values: Item, condition: str = ""
) -> bool:
    """One update of a job item, only while the job runs (and `condition` holds); whether it
    was made."""
    updated = dynamo.conditional(
        "update_item",
        TableName=_table(),
        Key=key(tenant, kind, job_id),
        UpdateExpression=update,
        ConditionExpression="#status = :running" + (f" AND {condition}" if condition else ""),
        ExpressionAttributeNames=_STATUS,
        ExpressionAttributeValues={**values, **_RUNNING},
    )
    return updated is not None


def note_error(chunk: Chunk, error: Failure, now_ms: int) -> None:
    """Remember the latest chunk failure of a running job (the reason it fails with if the
    chunk is given up); a failure is progress too (the job is being worked on)."""
    _update_running(
        chunk.tenant,
        chunk.kind,
        chunk.job_id,
        "SET last_error = :message, last_error_class = :error, progress_ms = :now",
        {":message": s(error.message), ":error": s(error.error), ":now": n(now_ms)},
    )


def touch(chunk: Chunk, now_ms: int) -> None:
    """Note that the running job moved (a chunk went back on the queue)."""
    _update_running(
        chunk.tenant, chunk.kind, chunk.job_id, "SET progress_ms = :now", {":now": n(now_ms)}
    )


# ---- the sweeper -------------------------------------------------------------------------------


def stalled(before_ms: int) -> Iterator[tuple[str, str, str]]:
    """(tenant, kind, job id) of every running job whose last progress was before
    `before_ms` (the sparse index: running jobs only)."""
    items = dynamo.query_items(
        TableName=_table(),
        IndexName=STALLED_INDEX,
        KeyConditionExpression="sweep = :running AND progress_ms < :before",
        ExpressionAttributeValues={":running": s(RUNNING_MARK), ":before": n(before_ms)},
    )
    for item in items:
        yield _parse_pk(item["pk"]["S"])


def claim_sweep(job: Job, now_ms: int, *, count: bool = True) -> bool:
    """Take the stalled job for this sweep (one sweeper wins when two see it): mark it as moved
    at `now_ms` (the time it is taken, never later), counting the sweep unless not `count`.
    False when it moved or ended meanwhile."""
    return _update_running(
        job.tenant,
        job.kind,
        job.job_id,
        "SET progress_ms = :now ADD sweeps :one",
        {":now": n(now_ms), ":one": n(1 if count else 0), ":seen": n(job.progress_ms)},
        condition="progress_ms = :seen",
    )
