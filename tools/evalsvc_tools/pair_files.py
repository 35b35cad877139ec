"""The files of pairs `evalsvc push` sends: JSON Lines (.jsonl, .ndjson, .json; or a .json
holding one array) or CSV, read and checked against the service's limits before anything is
sent, every bad row reported as `file:line: what`.

A pair is its input and output, and optionally its id, labels, reference (the answer it should
give) and contexts (what the app retrieved, in rank order); in JSON Lines also the conversation
before the input (`messages`), the tools called and those that should have been
(`tool_calls`, `expected_tool_calls`) and a `conversation_id`, checked by the service's own
models of them. In CSV, `labels` is a JSON list or texts separated by `;`, `contexts` a JSON
array of strings in its cell; an empty cell of id, labels, reference or contexts leaves the
field out; the conversation fields are JSON Lines' only (a CSV column of one is refused)."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evalsvc.core.identifiers import CLIENT_ID_RULE, is_client_id
from evalsvc.models.datasets import (
    MAX_CONTEXT_CHARS,
    MAX_CONTEXTS,
    MAX_LABEL_CHARS,
    MAX_LABELS,
    MAX_PAIRS,
    MAX_REFERENCE_CHARS,
    MAX_TEXT_CHARS,
    PairIn,
)
from evalsvc.scoring import bounded_json
from pydantic import ValidationError

from evalsvc_tools.client import EXIT_USAGE, ClientError
from evalsvc_tools.terminal import cut

JSON_LINES_SUFFIXES = (".jsonl", ".ndjson", ".json")
# CSV: the separator of labels in one cell, when the cell is not a JSON list.
LABEL_SEPARATOR = ";"


class BadFile(ClientError):
    """A file that cannot be pushed: every problem found, each `file:line: what`."""

    def __init__(self, path: Path, problems: list[str], bad_rows: int) -> None:
        what = f"{bad_rows} bad row{'s' if bad_rows != 1 else ''}" if bad_rows else "not valid"
        super().__init__(f"{path}: {what} (listed above); nothing was sent", EXIT_USAGE)
        self.problems = problems
        self.bad_rows = bad_rows


@dataclass(slots=True)
class Row:
    """One record of the file as read, before it is checked; `labels_text` and
    `contexts_text` are CSV cells."""

    line: int
    record: Any
    labels_text: str | None = None
    contexts_text: str | None = None


# What is wrong with the record that starts on a line.
Problem = tuple[int, str]


def read_bytes(path: Path) -> bytes:
    """The file's bytes, or a usage error that says why they cannot be read."""
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise ClientError(f"{path}: no such file", EXIT_USAGE) from None
    except IsADirectoryError:
        raise ClientError(f"{path}: is a directory, not a file", EXIT_USAGE) from None
    except OSError as exc:
        raise ClientError(f"{path}: cannot be read ({exc.strerror})", EXIT_USAGE) from None


def _text(raw: bytes, path: Path) -> str:
    """The file as text: UTF-8, with or without a byte order mark."""
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise BadFile(path, [f"{path}:{line}: not UTF-8 text (byte {exc.start})"], 1) from None


def _not_json(exc: bounded_json.NotJson) -> str:
    cause = exc.__cause__
    if isinstance(cause, json.JSONDecodeError):
        return f"not valid JSON ({cause.msg}, column {cause.colno})"
    return f"not valid JSON ({exc})"  # nested too deep, an overlong integer, NaN


def _json_lines(text: str) -> Iterator[Row | Problem]:
    # Lines end at \n only: JSON text may hold other line separators (U+2028) as they are.
    # Read as the service's checks read JSON: strictly, and bounded in depth and digits.
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            yield Row(number, bounded_json.loads(line))
        except bounded_json.NotJson as exc:
            yield number, _not_json(exc)


def _json_array(text: str) -> Iterator[Row | Problem]:
    """A .json file holding one array of objects; each item is placed at the line it starts."""
    try:
        items = bounded_json.loads(text)
    except bounded_json.NotJson as exc:
        cause = exc.__cause__
        yield (cause.lineno if isinstance(cause, json.JSONDecodeError) else 1), _not_json(exc)
        return
    decoder = json.JSONDecoder()
    position, line, counted = text.index("[") + 1, 1, 0
    for _ in items:
        while text[position] in " \t\r\n,":
            position += 1
        line += text.count("\n", counted, position)
        counted = position
        record, position = decoder.raw_decode(text, position)
        yield Row(line, record)


# E11's fields: read from JSON Lines only, checked by the service's own models.
CONVERSATION_FIELDS = ("messages", "tool_calls", "expected_tool_calls", "conversation_id")

CSV_COLUMNS = "the columns: input, output, and optionally id, labels, reference and contexts"


def _csv_rows(text: str) -> Iterator[Row | Problem]:
    csv.field_size_limit(2**31 - 1)  # an overlong text is reported by its size, below
    # strict: a stray quote is an error on its line, not a field that swallows the lines after.
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    header: list[str] | None = None
    start = 1
    try:
        for cells in reader:
            line, start = start, reader.line_num + 1
            if not any(cell.strip() for cell in cells):
                continue
            if header is None:
                header = [cell.strip().lower() for cell in cells]
                missing = [name for name in ("input", "output") if name not in header]
                doubled = sorted({name for name in header if name and header.count(name) > 1})
                wrong = [f"no {' or '.join(missing)} column"] if missing else []
                if doubled:
                    wrong.append(f"column {', '.join(doubled)} appears more than once")
                structured = [name for name in CONVERSATION_FIELDS if name in header]
                if structured:
                    wrong.append(
                        f"column {', '.join(structured)} is read from JSON Lines only: write "
                        "pairs with a conversation or tool calls as .jsonl"
                    )
                if wrong:
                    yield line, f"the header row has {'; '.join(wrong)} ({CSV_COLUMNS})"
                    return
                continue
            if len(cells) > len(header):
                yield (
                    line,
                    (
                        f"{len(cells)} fields, but the header has {len(header)} "
                        "(quote a text that holds a comma)"
                    ),
                )
                continue
            record = {name: cell for name, cell in zip(header, cells, strict=False) if name}
            labels = record.pop("labels", None)
            contexts = record.pop("contexts", None)
            for optional in ("id", "reference"):
                if record.get(optional) == "":
                    del record[optional]
            contexts = contexts if contexts and contexts.strip() else None
            yield Row(line, record, labels_text=labels, contexts_text=contexts)
    except csv.Error as exc:
        yield reader.line_num, f"not valid CSV ({exc})"
    if header is None:
        yield 1, f"no header row ({CSV_COLUMNS})"


def _csv_labels(cell: str) -> Any:
    """Labels from a CSV cell: a JSON list of strings, or texts separated by `;` (each without
    the spaces around it; empty ones dropped)."""
    cell = cell.strip()
    if cell.startswith("["):
        try:
            return bounded_json.loads(cell)
        except bounded_json.NotJson as exc:
            cause = exc.__cause__
            detail = cause.msg if isinstance(cause, json.JSONDecodeError) else str(exc)
            raise ValueError(
                f"labels look like a JSON list but are not valid JSON ({detail})"
            ) from None
    return [label.strip() for label in cell.split(LABEL_SEPARATOR) if label.strip()]


def _csv_contexts(cell: str) -> Any:
    """Contexts from a CSV cell: a JSON array of strings."""
    try:
        contexts = bounded_json.loads(cell)
    except bounded_json.NotJson as exc:
        cause = exc.__cause__
        detail = cause.msg if isinstance(cause, json.JSONDecodeError) else str(exc)
        raise ValueError(
            f'contexts must be a JSON array of strings in its cell, like ["first", "second"] '
            f"(not valid JSON: {detail})"
        ) from None
    if not isinstance(contexts, list):
        raise ValueError(
            'contexts must be a JSON array of strings in its cell, like ["first", "second"]'
        )
    return contexts


def _check_text(name: str, value: Any, wrong: list[str], limit: int = MAX_TEXT_CHARS) -> None:
    if not isinstance(value, str):
        wrong.append(f"{name} is missing" if value is None else f"{name} must be a string")
    elif len(value) > limit:
        wrong.append(f"{name} has {len(value):,} characters, over the limit of {limit:,}")


def _check_contexts(contexts: Any, wrong: list[str]) -> None:
    if not isinstance(contexts, list) or not all(isinstance(c, str) for c in contexts):
        wrong.append("contexts must be a list of strings")
        return
    if len(contexts) > MAX_CONTEXTS:
        wrong.append(f"{len(contexts)} contexts, over the limit of {MAX_CONTEXTS}")
    for number, context in enumerate(contexts, start=1):
        if not context:
            wrong.append(f"context {number} is empty")
        elif len(context) > MAX_CONTEXT_CHARS:
            wrong.append(
                f"context {number} has {len(context):,} characters, over the limit of "
                f"{MAX_CONTEXT_CHARS:,}"
            )


def _check_labels(labels: Any, wrong: list[str]) -> None:
    if not isinstance(labels, list) or not all(isinstance(label, str) for label in labels):
        wrong.append("labels must be a list of strings")
        return
    if len(labels) > MAX_LABELS:
        wrong.append(f"{len(labels)} labels, over the limit of {MAX_LABELS}")
    for label in labels:
        if not label:
            wrong.append("a label is empty")
        elif len(label) > MAX_LABEL_CHARS:
            wrong.append(
                f"label {cut(label, 40)!r} has {len(label)} characters, over the limit of "
                f"{MAX_LABEL_CHARS}"
            )


def _pair(row: Row, wrong: list[str]) -> dict[str, Any]:
    """The pair a row writes; what is wrong with it goes to `wrong`."""
    record = row.record
    if not isinstance(record, dict):
        wrong.append("expected an object with input and output")
        return {}
    _check_text("input", record.get("input"), wrong)
    _check_text("output", record.get("output"), wrong)
    pair: dict[str, Any] = {"input": record.get("input"), "output": record.get("output")}
    pair_id = record.get("id")
    if pair_id is not None:
        if not isinstance(pair_id, str):
            wrong.append("id must be a string")
        elif not is_client_id(pair_id):
            wrong.append(f"id {cut(pair_id, 40)!r} is not valid: use {CLIENT_ID_RULE}")
        else:
            pair["id"] = pair_id
    labels: Any = record.get("labels")
    if row.labels_text is not None:
        try:
            labels = _csv_labels(row.labels_text)
        except ValueError as exc:
            wrong.append(str(exc))
            labels = None
    if labels is not None:
        _check_labels(labels, wrong)
        if labels:
            pair["labels"] = labels
    _e10_fields(row, pair, wrong)
    _conversation_fields(row.record, pair, wrong)
    return pair


def _where(loc: tuple[int | str, ...]) -> str:
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else part)
    return text


def _conversation_fields(record: dict[str, Any], pair: dict[str, Any], wrong: list[str]) -> None:
    """The record's messages, tool calls, expected tool calls and conversation id, into `pair`
    when it has them, checked as the service checks them (the same model, so the same limits
    and the same words)."""
    given = {name: record[name] for name in CONVERSATION_FIELDS if record.get(name) is not None}
    if not given:
        return
    try:
        PairIn.model_validate({"input": "", "output": "", **given})
    except ValidationError as exc:
        for error in exc.errors()[:5]:
            message = str(error["msg"]).removeprefix("Value error, ")
            wrong.append(f"{_where(error['loc'])}: {message}")
        return
    pair.update(given)


def _e10_fields(row: Row, pair: dict[str, Any], wrong: list[str]) -> None:
    """The row's reference and contexts, into `pair` when it has them."""
    reference = row.record.get("reference")
    if reference is not None:
        _check_text("reference", reference, wrong, MAX_REFERENCE_CHARS)
        pair["reference"] = reference
    contexts: Any = row.record.get("contexts")
    if row.contexts_text is not None:
        try:
            contexts = _csv_contexts(row.contexts_text)
        except ValueError as exc:
            wrong.append(str(exc))
            return
    if contexts is not None:
        _check_contexts(contexts, wrong)
        pair["contexts"] = contexts


def read_pairs(path: Path) -> list[dict[str, Any]]:
    """Every pair of a JSON Lines (.jsonl, .ndjson, .json; or a .json array) or CSV file,
    checked against the service's limits. Raises BadFile listing every bad row."""
    suffix = path.suffix.lower()
    if suffix not in (*JSON_LINES_SUFFIXES, ".csv"):
        raise ClientError(
            f"{path}: cannot tell the format from the extension {path.suffix or '(none)'!r}: "
            "name the file .jsonl (one JSON object a line) or .csv (a header row: input, "
            "output, id, labels, reference, contexts)",
            EXIT_USAGE,
        )
    raw = read_bytes(path)
    text = _text(raw, path)
    rows: Iterable[Row | Problem]
    if suffix == ".csv":
        rows = _csv_rows(text)
    elif suffix == ".json" and text.lstrip().startswith("["):
        rows = _json_array(text)
    else:
        rows = _json_lines(text)

    problems: list[str] = []
    bad_rows = 0
    pairs: list[dict[str, Any]] = []
    lines_of_ids: dict[str, int] = {}
    for row in rows:
        if isinstance(row, tuple):
            line, what = row
            problems.append(f"{path}:{line}: {what}")
            bad_rows += 1
            continue
        wrong: list[str] = []
        pair = _pair(row, wrong)
        pair_id = pair.get("id")
        if pair_id is not None:
            first = lines_of_ids.setdefault(pair_id, row.line)
            if first != row.line:
                wrong.append(f"id {pair_id!r} is also on line {first}")
        if wrong:
            problems.extend(f"{path}:{row.line}: {what}" for what in wrong)
            bad_rows += 1
        else:
            pairs.append(pair)
    if not problems and not pairs:
        problems.append(f"{path}: no pairs in the file")
    if len(pairs) > MAX_PAIRS:
        problems.append(f"{path}: {len(pairs):,} pairs, over the {MAX_PAIRS:,} a dataset holds")
    if problems:
        raise BadFile(path, problems, bad_rows)
    return pairs
