"""POST /otlp/v1/traces: an OpenTelemetry trace export, its GenAI spans kept as pairs of a seed
dataset (E11).

The body is decoded and split by trace; a trace is mapped once its local root has arrived, its
earlier pieces joined to it, and a trace whose root has not arrived waits (logic.otlp.waiting,
storage.waiting_spans). Every pair the mapping gives is checked by the
same model as a pair written through the dataset routes, so its limits are theirs; then the
pairs are appended through the dataset appends (storage.datasets.add_new_pairs), whose pair ids
(`<traceId>-<spanId>`) make a span sent again add nothing. The dataset is the one the request
names (`X-Evalsvc-Dataset`), else the one each span's resource names (`evalsvc.dataset_id`),
created empty when absent.

Planned against the request's deadline: what the work cannot finish in time is not cut short
silently; the request answers 503, as an exporter retries, and the pairs stored already are
skipped when the export is sent again."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from pydantic import ValidationError

from evalsvc.core.errors import InvalidInput, NotFound
from evalsvc.core.identifiers import check_dataset_id
from evalsvc.core.observability import logger, metrics
from evalsvc.logic.datasets import to_pair
from evalsvc.logic.otlp import waiting
from evalsvc.logic.otlp.decode import decode_export, media_type
from evalsvc.logic.otlp.mapping import Mapped, SpanPair, export_response, map_export
from evalsvc.models.api_keys import Identity
from evalsvc.models.conversations import messages_out, tool_calls_out
from evalsvc.models.datasets import DatasetKind, Pair, PairIn
from evalsvc.storage import datasets as store
from evalsvc.storage import waiting_spans

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
    request = decode_export(body, content_type, content_encoding)
    pieces = waiting.by_trace(request, dataset_id)
    if any(waiting.without_dataset(piece) for piece in pieces.values()):
        raise _no_dataset()
    now, joined, waits = _ready(identity.tenant, pieces)
    mapped = map_export(now)
    pairs, rejected = _checked(mapped)
    by_dataset: dict[str, list[Pair]] = {}
    for span_pair, pair in pairs:
        target = dataset_id or span_pair.dataset_id
        if target is None:
            raise _no_dataset()
        by_dataset.setdefault(target, []).append(pair)
    added = _append(identity, by_dataset, waits, out_of_time)
    # The pairs are stored: the pieces they were made of are no longer waited for. A trace
    # still without its root waits, unless it grew too large to.
    waiting_spans.remove(identity.tenant, joined)
    if waits and out_of_time():
        raise store.no_time()
    serialized = {trace_id: piece.SerializeToString() for trace_id, piece in waits.items()}
    for trace_id in waiting_spans.add_all(identity.tenant, serialized):
        rejected.rejected += waiting.gen_ai_spans(waits[trace_id])
        rejected.reasons.append(
            f"trace {trace_id.hex()}: too large to wait for its root span (over "
            f"{waiting_spans.MAX_BYTES:,} bytes of GenAI attributes)"
        )
    total = sum(added.values())
    metrics.add_metric(name="PairsWritten", unit="Count", value=total)
    logger.info(
        "trace export kept",
        extra={"pairs": len(pairs), "new": total, "rejected": rejected.rejected},
    )
    return Ingested(export_response(rejected, media), media, added)


def _ready(
    tenant: str, pieces: dict[bytes, ExportTraceServiceRequest]
) -> tuple[ExportTraceServiceRequest, list[bytes], dict[bytes, ExportTraceServiceRequest]]:
    """Of the export's traces (`pieces`), joined to their pieces that waited: those whose local
    root is here, as one export to map; which of them had pieces waiting; and the pieces of
    traces that wait on (those with a GenAI span or earlier pieces)."""
    earlier = waiting_spans.read(tenant, list(pieces))
    now = ExportTraceServiceRequest()
    joined: list[bytes] = []
    waits: dict[bytes, ExportTraceServiceRequest] = {}
    for trace_id, piece in pieces.items():
        stored = [ExportTraceServiceRequest.FromString(p) for p in earlier.get(trace_id, [])]
        whole = waiting.joined([*stored, piece])
        if waiting.has_local_root(whole):
            now.resource_spans.extend(whole.resource_spans)
            if stored:
                joined.append(trace_id)
        elif stored or waiting.gen_ai_spans(piece):
            waits[trace_id] = piece
    return now, joined, waits


def _append(
    identity: Identity,
    by_dataset: dict[str, list[Pair]],
    waits: dict[bytes, ExportTraceServiceRequest],
    out_of_time: Callable[[], bool],
) -> dict[str, int]:
    """Append each dataset's pairs (those it does not hold yet), creating a dataset an append
    finds absent; and create, empty, a dataset only waiting pieces name, so that every dataset
    an export names exists once it is answered. How many pairs each dataset gained."""
    waited_in: set[str] = set()
    for piece in waits.values():
        waited_in |= {d for d in waiting.datasets_named(piece) if _valid_id(d)}
    for target in sorted(waited_in - set(by_dataset)):
        if store.get_header(identity.tenant, DatasetKind.SEED, target, counted=False) is None:
            _create(identity, target)
    added: dict[str, int] = {}
    for target, kept in by_dataset.items():
        append = functools.partial(
            store.add_new_pairs, identity.tenant, DatasetKind.SEED, target, kept, out_of_time
        )
        try:
            new = append()
        except NotFound:
            _create(identity, target)
            new = append()
        added[target] = len(new)
    return added


def _create(identity: Identity, dataset_id: str) -> None:
    """Create the seed dataset, empty, unless another request just did."""
    if store.create_empty(identity.tenant, DatasetKind.SEED, dataset_id):
        logger.info("seed dataset created for traces", extra={"dataset_id": dataset_id})


def _valid_id(dataset_id: str) -> bool:
    try:
        check_dataset_id(dataset_id)
    except InvalidInput:
        return False
    return True


def _no_dataset() -> InvalidInput:
    return InvalidInput(
        f"no dataset to keep the spans in: send the header {DATASET_HEADER}: <seed dataset id>, "
        f"or set the resource attribute {DATASET_ATTRIBUTE}"
    )


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
