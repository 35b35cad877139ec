"""Adding one pair to a dataset, and creating the empty dataset that owns a system prompt."""

from __future__ import annotations

from botocore.exceptions import ClientError

from evalsvc.errors import Conflict, PayloadTooLarge, StorageUnavailable
from evalsvc.identifiers import new_id, now_ms
from evalsvc.models.datasets import (
    MAX_PAIRS,
    DatasetHeader,
    DatasetKind,
    Pair,
    pair_bytes,
)
from evalsvc.observability import logger
from evalsvc.storage import dynamo
from evalsvc.storage.datasets.codec import header_item, pair_items
from evalsvc.storage.datasets.keys import (
    COMMIT_ATTEMPTS,
    HEADER_SK,
    dataset_pk,
    next_ord,
    pause,
    split_ord,
    table,
    version_pk,
)
from evalsvc.storage.datasets.pointers import latest_pointer, prompt_pointer
from evalsvc.storage.datasets.reads import existing_header
from evalsvc.storage.dynamo import get_s, n, s


class PromptMismatch(Exception):
    """The dataset's system prompt is no longer the one the pair was filed under."""


def add_pair(
    tenant: str,
    kind: DatasetKind,
    dataset_id: str,
    pair: Pair,
    *,
    expected_prompt: str | None = None,
) -> DatasetHeader:
    """Append one pair to the current version. 404 if the dataset does not exist, 409 if the
    pair id is taken, 413 when the dataset is full. With `expected_prompt`, raise
    PromptMismatch unless the dataset's system prompt is exactly that."""
    for attempt in range(COMMIT_ATTEMPTS):
        pause(attempt)
        header = existing_header(tenant, kind, dataset_id)
        if expected_prompt is not None and header.system_prompt != expected_prompt:
            raise PromptMismatch
        if header.pair_count >= MAX_PAIRS:
            raise PayloadTooLarge(
                f"dataset {dataset_id!r} already holds {MAX_PAIRS} pairs, the limit"
            )
        ms = now_ms()
        ord_ = next_ord(header.last_ord, ms)
        pair.created_ms = split_ord(ord_)[0]
        pk = version_pk(tenant, kind, dataset_id, header.version)
        items = pair_items(pk, pair, ord_)
        added = pair_bytes(pair)
        # A header written before sizes were kept has none to add to: it stays unknown.
        counts = "pair_count :one, bytes :bytes" if header.bytes is not None else "pair_count :one"
        values = {
            ":new_ord": s(ord_),
            ":ms": n(ms),
            ":one": n(1),
            ":version": s(header.version),
            ":last_ord": s(header.last_ord),
        }
        if header.bytes is not None:
            values[":bytes"] = n(added)
        update = {
            "Update": {
                "TableName": table(),
                "Key": {"pk": s(dataset_pk(tenant, kind, dataset_id)), "sk": s(HEADER_SK)},
                "UpdateExpression": f"SET last_ord = :new_ord, updated_ms = :ms ADD {counts}",
                "ConditionExpression": "version = :version AND last_ord = :last_ord",
                "ExpressionAttributeValues": values,
            }
        }
        puts = [
            {
                "Put": {
                    "TableName": table(),
                    "Item": item,
                    "ConditionExpression": "attribute_not_exists(sk)",
                }
            }
            for item in items
        ]
        try:
            dynamo.call("transact_write_items", TransactItems=[update, *puts])
        except (ClientError, StorageUnavailable) as exc:
            if not (isinstance(exc, ClientError) and dynamo.cancelled(exc)):
                # No answer is not no write: the transaction may have committed.
                if not _pair_written(pk, pair.id, ord_):
                    raise
                logger.warning("a pair addition succeeded unanswered", extra={"id": dataset_id})
            else:
                assert isinstance(exc, ClientError)
                failed = dynamo.failed_conditions(exc)
                if failed is None or 0 in failed:
                    # The header moved on (another pair, an overwrite) or a concurrent
                    # transaction held it: try again.
                    continue
                raise Conflict(
                    f"pair id {pair.id!r} already exists in dataset {dataset_id!r}"
                ) from exc
        header.pair_count += 1
        header.last_ord = ord_
        if header.bytes is not None:
            header.bytes += added
        return header
    raise StorageUnavailable(f"dataset {dataset_id!r} is being written concurrently; retry")


def _pair_written(pk: str, pair_id: str, ord_: str) -> bool:
    """Whether the pair is stored under `pk` with order key `ord_` (this very addition)."""
    item = dynamo.get_item(table(), {"pk": s(pk), "sk": s(f"p#{pair_id}")})
    return item is not None and get_s(item, "ord") == ord_


def create_for_prompt(
    tenant: str, dataset_id: str, system_prompt: str, stale_id: str | None
) -> bool:
    """Create an empty seed dataset that owns `system_prompt`. False when another dataset claimed
    the prompt first (the caller then files the pair there)."""
    ms = now_ms()
    header = DatasetHeader(
        tenant=tenant,
        kind=DatasetKind.SEED,
        dataset_id=dataset_id,
        system_prompt=system_prompt,
        created_ms=ms,
        updated_ms=ms,
        version=new_id(),
        pair_count=0,
        last_ord="",
        bytes=0,
    )
    actions = [
        {
            "Put": {
                "TableName": table(),
                "Item": header_item(header),
                "ConditionExpression": "attribute_not_exists(pk)",
            }
        },
        {"Put": latest_pointer(tenant, DatasetKind.SEED, dataset_id, ms)},
        {"Put": prompt_pointer(tenant, system_prompt, dataset_id, replacing=stale_id, claim=True)},
    ]
    try:
        dynamo.call("transact_write_items", TransactItems=actions)
    except ClientError as exc:
        if dynamo.failed_conditions(exc) is not None or dynamo.cancelled(exc):
            return False  # claimed meanwhile, or being claimed: the caller looks again
        raise
    return True
