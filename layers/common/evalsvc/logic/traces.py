"""POST /otlp/v1/traces: an OpenTelemetry trace export, its GenAI spans kept as pairs of a seed
dataset (E11).

The body is decoded and mapped (logic.otlp); every pair the mapping gives is checked by the
same model as a pair written through the dataset routes, so its limits are theirs; then the
pairs are appended through the dataset appends (storage.datasets.add_new_pairs), whose pair ids
(`<traceId>-<spanId>`) make a span sent again add nothing. The dataset is the one the request
names (`X-Evalsvc-Dataset`), else the one each span's resource names (`evalsvc.dataset_id`),
created empty when absent.

Planned against the request's deadline: what the work cannot finish in time is not cut short
silently; the request answers 503, as an exporter retries, and the pairs stored already are
skipped when the export is sent again."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from pydantic import ValidationError

from evalsvc.core.errors import InvalidInput, NotFound
from evalsvc.core.identifiers import check_dataset_id
from evalsvc.core.observability import logger, metrics
from evalsvc.logic.datasets import to_pair
from evalsvc.logic.otlp.decode import decode_export, media_type
from evalsvc.logic.otlp.mapping import Mapped, SpanPair, export_response, map_export
from evalsvc.models.api_keys import Identity
from evalsvc.models.conversations import messages_out, tool_calls_out
from evalsvc.models.datasets import DatasetKind, Pair, PairIn
from evalsvc.storage import datasets as store

DATASET_HEADER = "X-Evalsvc-Dataset"
DATASET_ATTRIBUTE = "evalsvc.dataset_id"


@dataclass(frozen=True, slots=True)
class Ingested:
    """What an export gave: OTLP's answer in the export's own encoding (`media_type`: an
    ExportTraceServiceResponse in protobuf, or its JSON), and how many pairs were new per
    dataset."""

    body: bytes
    media_type: str
    added: dict[str, int]


def ingest(
    identity: Identity,
    body: bytes,
    content_type: str | None,
    content_encoding: str | None,
    dataset_id: str | None,
    out_of_time: Callable[[], bool],
) -> Ingested:
    """Keep the GenAI spans of one OTLP/HTTP trace export as pairs (the module's docstring)."""
    if dataset_id is not None:
        _check_named(dataset_id, f"the {DATASET_HEADER} header")
    media = media_type(content_type)
    mapped = map_export(decode_export(body, content_type, content_encoding))
    pairs, rejected = _checked(mapped)
    by_dataset: dict[str, list[Pair]] = {}
    for span_pair, pair in pairs:
        target = dataset_id or span_pair.dataset_id
        if target is None:
            raise InvalidInput(
                f"no dataset to keep the spans in: send the header {DATASET_HEADER}: <seed "
                f"dataset id>, or set the resource attribute {DATASET_ATTRIBUTE}"
            )
        if dataset_id is None:
            _check_named(target, f"the resource attribute {DATASET_ATTRIBUTE}")
        by_dataset.setdefault(target, []).append(pair)
    added: dict[str, int] = {}
    for target, kept in by_dataset.items():
        if store.create_empty(identity.tenant, DatasetKind.SEED, target):
            logger.info("seed dataset created for traces", extra={"dataset_id": target})
        try:
            new = store.add_new_pairs(identity.tenant, DatasetKind.SEED, target, kept, out_of_time)
        except NotFound:
            # Deleted between its creation and the appends: made again on the next sending.
            raise InvalidInput(
                f"dataset {target!r} was removed while spans were added; retry"
            ) from None
        added[target] = len(new)
    total = sum(added.values())
    metrics.add_metric(name="PairsWritten", unit="Count", value=total)
    logger.info(
        "trace export kept",
        extra={"pairs": len(pairs), "new": total, "rejected": rejected.rejected},
    )
    return Ingested(export_response(rejected, media), media, added)


def _check_named(dataset_id: str, where: str) -> None:
    try:
        check_dataset_id(dataset_id)
    except InvalidInput as exc:
        raise InvalidInput(f"{where}: {exc.message}") from None


def _checked(mapped: Mapped) -> tuple[list[tuple[SpanPair, Pair]], Mapped]:
    """The mapped pairs that pass the dataset routes' own pair model (and the Mapped that
    counts those that do not among the rejected); one pair per id, the last sent."""
    pairs: dict[str, tuple[SpanPair, Pair]] = {}
    reasons = list(mapped.reasons)
    rejected = mapped.rejected
    for span_pair in mapped.pairs:
        try:
            item = PairIn.model_validate(_as_request(span_pair))
        except ValidationError as exc:
            rejected += 1
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            reasons.append(f"span {span_pair.id}: {where}: {first['msg']}")
            continue
        pair = to_pair(item)
        pairs[pair.id] = (span_pair, pair)
    return list(pairs.values()), Mapped(pairs=[], rejected=rejected, reasons=reasons)


def _as_request(span_pair: SpanPair) -> dict[str, object]:
    """The pair as a client would write it to POST /data/seed/{id}/pair."""
    out: dict[str, object] = {
        "id": span_pair.id,
        "input": span_pair.input,
        "output": span_pair.output,
        "labels": list(span_pair.labels),
    }
    if span_pair.messages is not None:
        out["messages"] = messages_out(span_pair.messages)
    if span_pair.tool_calls is not None:
        out["tool_calls"] = tool_calls_out(span_pair.tool_calls)
    if span_pair.conversation_id is not None:
        out["conversation_id"] = span_pair.conversation_id
    return out
