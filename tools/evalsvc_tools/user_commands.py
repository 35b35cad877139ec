"""The user's commands of `evalsvc`, against any deployment over HTTP (client.py):

    evalsvc push FILE --seed ID [--system-prompt P]     a JSON Lines or CSV file → a seed dataset
    evalsvc evaluate (--seed ID | --synthetic ID) ...   run an evaluation, with its progress
    evalsvc compare BASELINE CANDIDATE ...              POST /compare, as a table; a CI gate
    evalsvc report ID [--compare OTHER] [-o FILE]       the HTML report of a result or comparison

The URL and key come from --url/--key or EVALSVC_URL/EVALSVC_API_KEY. `rich` (the `cli` extra)
draws the tables and the progress bar; it is imported only here, when a command needs it.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import functools
import io
import json
import os
import re
import secrets
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from evalsvc.api.middleware import MAX_BODY_BYTES
from evalsvc.errors import InvalidInput
from evalsvc.identifiers import CLIENT_ID_RULE, check_dataset_id, is_client_id
from evalsvc.models.datasets import MAX_LABEL_CHARS, MAX_LABELS, MAX_PAIRS, MAX_TEXT_CHARS
from evalsvc.scoring import bounded_json

from evalsvc_tools.client import (
    EXIT_FAILED,
    EXIT_USAGE,
    Client,
    ClientError,
    ConnectionProblem,
    HttpError,
    Response,
    encode_json,
    segment,
    terminal_safe,
)

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress as RichProgress

EXIT_INTERRUPTED = 130
POLL_VARIABLE = "EVALSVC_POLL_SECONDS"
DEFAULT_POLL_SECONDS = 1.0
# Statuses worth asking again about while following an evaluation, and how many times in a row.
TRANSIENT_STATUSES = frozenset({429, 500, 502, 503, 504})
MAX_POLL_FAILURES = 5
# How much of a metric's definition a table shows, and how many regressions are listed.
METRIC_WIDTH = 40
LOWEST_SHOWN = 3
REGRESSIONS_SHOWN = 10
REASON_WIDTH = 60
JSON_LINES_SUFFIXES = (".jsonl", ".ndjson", ".json")
# CSV: the separator of labels in one cell, when the cell is not a JSON list.
LABEL_SEPARATOR = ";"
# A figure the service gave as null (too few pairs for it).
MISSING = "-"

Command = Callable[[argparse.Namespace], int]


# The shortest pause between two reads of a running evaluation, whatever Retry-After says.
MIN_POLL_SECONDS = 0.2
# A comparison or report (which change nothing) is asked this many times in all while the
# service says to retry: a 503 (busy: out of its time, or storage), a 429 with Retry-After, a
# gateway's 502 or 504. Each pause is Retry-After (at most MAX_RETRY_SECONDS), else doubles
# from FIRST_RETRY_SECONDS.
READ_ATTEMPTS = 4
FIRST_RETRY_SECONDS = 2.0
MAX_RETRY_SECONDS = 60.0


def user_command(run: Command) -> Command:
    """A user command: Ctrl-C is exit 130 with a line saying so, and a closed stdout (`| head`)
    ends it quietly."""

    @functools.wraps(run)
    def wrapped(args: argparse.Namespace) -> int:
        try:
            return run(args)
        except KeyboardInterrupt:
            raise ClientError("interrupted", EXIT_INTERRUPTED) from None
        except BrokenPipeError:
            # Nothing more can be written; keep the interpreter from complaining at exit.
            with contextlib.suppress(OSError, ValueError):
                os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return EXIT_FAILED

    return wrapped


def _client(args: argparse.Namespace) -> Client:
    return Client.from_settings(args.url, args.key)


def _rich_console(*, stderr: bool = False) -> Console:
    try:
        from rich.console import Console
    except ImportError:
        raise ClientError(
            "this command draws with rich, which is not installed: pip install 'evalsvc[cli]'",
            EXIT_USAGE,
        ) from None
    stream = sys.stderr if stderr else sys.stdout
    # Off a terminal (a file, a CI log): no escape codes, and a width readable in a log (120
    # unless COLUMNS says).
    width = None if stream.isatty() or os.environ.get("COLUMNS") else 120
    return Console(file=stream, width=width, highlight=False)


def _cut(text: str, width: int) -> str:
    text = terminal_safe(" ".join(text.split()))
    return text if len(text) <= width else text[: width - 1] + "…"


def _num(value: Any, digits: int = 2) -> str:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return MISSING
    return f"{value:.{digits}f}"


def _signed(value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return MISSING
    return f"{value:+.2f}"


def _p(value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return MISSING
    return "<0.001" if value < 0.001 else f"{value:.3f}"


# ---- push: reading and checking a file of pairs ------------------------------------------------


class BadFile(ClientError):
    """A file that cannot be pushed: every problem found, each `file:line: what`."""

    def __init__(self, path: Path, problems: list[str], bad_rows: int) -> None:
        what = f"{bad_rows} bad row{'s' if bad_rows != 1 else ''}" if bad_rows else "not valid"
        super().__init__(f"{path}: {what} (listed above); nothing was sent", EXIT_USAGE)
        self.problems = problems
        self.bad_rows = bad_rows


@dataclass(slots=True)
class Row:
    """One record of the file as read, before it is checked; `labels_text` is a CSV cell."""

    line: int
    record: Any
    labels_text: str | None = None


# What is wrong with the record that starts on a line.
Problem = tuple[int, str]


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


CSV_COLUMNS = "the columns: input, output, and optionally id and labels"


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
            if record.get("id") == "":
                del record["id"]
            yield Row(line, record, labels_text=labels)
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


def _check_text(name: str, value: Any, wrong: list[str]) -> None:
    if not isinstance(value, str):
        wrong.append(f"{name} is missing" if value is None else f"{name} must be a string")
    elif len(value) > MAX_TEXT_CHARS:
        wrong.append(f"{name} has {len(value):,} characters, over the limit of {MAX_TEXT_CHARS:,}")


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
                f"label {_cut(label, 40)!r} has {len(label)} characters, over the limit of "
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
            wrong.append(f"id {_cut(pair_id, 40)!r} is not valid: use {CLIENT_ID_RULE}")
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
    return pair


def read_pairs(path: Path) -> list[dict[str, Any]]:
    """Every pair of a JSON Lines (.jsonl, .ndjson, .json; or a .json array) or CSV file,
    checked against the service's limits. Raises BadFile listing every bad row."""
    suffix = path.suffix.lower()
    if suffix not in (*JSON_LINES_SUFFIXES, ".csv"):
        raise ClientError(
            f"{path}: cannot tell the format from the extension {path.suffix or '(none)'!r}: "
            "name the file .jsonl (one JSON object a line) or .csv (a header row: input, "
            "output, id, labels)",
            EXIT_USAGE,
        )
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise ClientError(f"{path}: no such file", EXIT_USAGE) from None
    except IsADirectoryError:
        raise ClientError(f"{path}: is a directory, not a file", EXIT_USAGE) from None
    except OSError as exc:
        raise ClientError(f"{path}: cannot be read ({exc.strerror})", EXIT_USAGE) from None
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


@user_command
def push(args: argparse.Namespace) -> int:
    """Write FILE as seed dataset ID in one request: the service replaces the dataset
    atomically, so a failed push leaves what was there."""
    try:
        dataset_id = check_dataset_id(args.seed)
    except InvalidInput as exc:  # "dataset id ... is not valid ..." or "... is reserved ..."
        raise ClientError(f"seed {exc.message}", EXIT_USAGE) from None
    prompt = args.system_prompt
    if prompt is not None and len(prompt) > MAX_TEXT_CHARS:
        raise ClientError(
            f"--system-prompt has {len(prompt):,} characters, over the limit of {MAX_TEXT_CHARS:,}",
            EXIT_USAGE,
        )
    client = _client(args)  # settings first: a missing URL is said before a long file is read
    try:
        pairs = read_pairs(args.file)
    except BadFile as exc:
        for problem in exc.problems:
            print(problem, file=sys.stderr)
        raise
    body: dict[str, Any] = {"data": pairs}
    if prompt is not None:
        body["system_prompt"] = prompt
    data = encode_json(body)
    if len(data) > MAX_BODY_BYTES:
        raise ClientError(
            f"{args.file}: {len(pairs):,} pairs make a request of {len(data):,} bytes, over the "
            f"{MAX_BODY_BYTES:,} one request to the service may carry. A seed dataset is written "
            "whole, in one request, so that a failed write leaves nothing half-written: push it "
            "as several datasets (a smaller file each), or shorten its texts. Nothing was sent.",
            EXIT_USAGE,
        )
    answer = client.request("POST", f"/data/seed/{segment(dataset_id)}", data=data).json()
    written = answer.get("id", dataset_id) if isinstance(answer, dict) else dataset_id
    written = terminal_safe(str(written))
    print(f"wrote {len(pairs):,} pairs to seed dataset {written} (it holds exactly these now)")
    return 0


# ---- evaluate ----------------------------------------------------------------------------------


class ProgressDisplay(Protocol):
    def update(self, done: int, total: int) -> None: ...

    def close(self) -> None: ...


class RichBar:
    """A progress bar on the terminal (stderr)."""

    def __init__(self, results_id: str) -> None:
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TaskProgressColumn,
            TextColumn,
            TimeElapsedColumn,
        )

        console = _rich_console(stderr=True)
        console.print(f"evaluation {results_id}", highlight=False)
        self.progress: RichProgress = Progress(
            TextColumn("scoring"),
            BarColumn(bar_width=32),
            MofNCompleteColumn(),
            TextColumn("pairs"),
            TaskProgressColumn(),
            TimeElapsedColumn(),
            console=console,
        )
        self.task = self.progress.add_task("scoring", total=None)
        self.progress.start()

    def update(self, done: int, total: int) -> None:
        self.progress.update(self.task, completed=done, total=total or None)
        self.progress.refresh()

    def close(self) -> None:
        self.progress.stop()


class PlainLines:
    """Off a terminal: a line at each tenth of the way, no escape codes."""

    def __init__(self, results_id: str) -> None:
        self.results_id = results_id
        self.shown = -1

    def update(self, done: int, total: int) -> None:
        tenth = 10 * done // total if total else 0
        if tenth > self.shown:
            self.shown = tenth
            percent = 100 * done // total if total else 0
            print(
                f"evaluation {self.results_id}: {done}/{total} pairs ({percent}%)",
                file=sys.stderr,
                flush=True,
            )

    def close(self) -> None:
        pass


def _poll_seconds() -> float:
    value = os.environ.get(POLL_VARIABLE, "").strip()
    try:
        seconds = float(value) if value else DEFAULT_POLL_SECONDS
    except ValueError:
        seconds = -1.0
    if not 0 < seconds <= 600:
        raise ClientError(f"{POLL_VARIABLE} must be a number of seconds from 0 to 600", EXIT_USAGE)
    return seconds


def _count(body: dict[str, Any], name: str) -> int:
    value = body.get(name)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def follow(
    client: Client, results_id: str, display: ProgressDisplay, interval: float
) -> dict[str, Any]:
    """GET /evaluation/{id} until it is no longer running; its last answer. Throttling, a
    gateway's 5xx or a dropped connection are asked again (honouring Retry-After), up to
    MAX_POLL_FAILURES times in a row."""
    failures = 0
    while True:
        try:
            response = client.request("GET", f"/evaluation/{segment(results_id)}")
        except (HttpError, ConnectionProblem) as exc:
            transient = not isinstance(exc, HttpError) or exc.status in TRANSIENT_STATUSES
            failures += 1
            if not transient or failures > MAX_POLL_FAILURES:
                raise
            pause = exc.retry_after if isinstance(exc, HttpError) else None
            time.sleep(min(pause if pause is not None else interval * 2**failures, 60.0))
            continue
        failures = 0
        body = response.json()
        if not isinstance(body, dict):
            raise ClientError(f"GET /evaluation/{results_id} did not answer with an object")
        display.update(_count(body, "pairs_done"), _count(body, "pairs_total"))
        if body.get("status", "complete") != "running":
            return body
        pause = response.retry_after
        time.sleep(max(MIN_POLL_SECONDS, min(pause, 60.0)) if pause is not None else interval)


def _results_id(body: Any, status: int) -> str:
    if isinstance(body, dict):
        found = body.get("eval_results_id") or body.get("results_id")
        if isinstance(found, str) and is_client_id(found):  # a result id, nothing else
            return found
    raise ClientError(f"POST /evaluate answered HTTP {status} without an eval_results_id")


def _location_id(location: str | None) -> str | None:
    match = re.search(r"evaluation/([^/?#]+)$", location or "")
    return match.group(1) if match and is_client_id(match.group(1)) else None


def _lowest(pairs: Any) -> str:
    if not isinstance(pairs, list) or not pairs:
        return MISSING
    shown = [
        f"{terminal_safe(str(p.get('pair_id')))} {_num(p.get('score'), 1)}"
        for p in pairs[:LOWEST_SHOWN]
        if p
    ]
    more = len(pairs) - LOWEST_SHOWN
    return ", ".join(shown) + (f" (+{more})" if more > 0 else "")


def _at(values: Any, index: int) -> Any:
    return values[index] if isinstance(values, list) and index < len(values) else None


def render_evaluation(result: dict[str, Any], console: Console) -> None:
    """The per-metric table of a complete evaluation result (GET /evaluation/{id})."""
    from rich.markup import escape
    from rich.table import Table

    pairs = result.get("pair_count", result.get("pairs_total"))
    console.print(
        escape(
            f"evaluation {result.get('results_id')}: {pairs} pairs of dataset "
            f"{result.get('dataset_id')}\nmetrics {result.get('metrics_id')}, created "
            f"{result.get('created_at')}"
        )
    )
    usage = result.get("usage")
    if isinstance(usage, dict) and (usage.get("llm_calls") or usage.get("cache_hits")):
        cost = usage.get("cost_usd")
        money = f"${cost:.6f}" if isinstance(cost, int | float) else "cost unknown (no price)"
        console.print(
            escape(
                f"LLM: {usage.get('llm_calls')} calls, {usage.get('cache_hits')} cache hits, "
                f"{usage.get('input_tokens')} input and {usage.get('output_tokens')} output "
                f"tokens, {money} ({usage.get('model')})"
            )
        )
    intervals = result.get("score_confidence_intervals")
    first = _at(intervals, 0)
    confidence = first.get("ci_confidence") if isinstance(first, dict) else None
    level = f"{100 * confidence:g}%" if isinstance(confidence, int | float) else "95%"
    table = Table(show_lines=False)
    table.add_column("#", justify="right")
    table.add_column("metric", max_width=METRIC_WIDTH, overflow="ellipsis", no_wrap=True)
    table.add_column("mean", justify="right")
    table.add_column(f"{level} interval", justify="right")
    table.add_column("median", justify="right")
    table.add_column("n", justify="right")
    table.add_column("lowest pairs (score)")
    definitions = result.get("metrics_definitions")
    for index, definition in enumerate(definitions if isinstance(definitions, list) else []):
        interval = _at(intervals, index)
        low = interval.get("ci_low") if isinstance(interval, dict) else None
        high = interval.get("ci_high") if isinstance(interval, dict) else None
        table.add_row(
            str(index),
            escape(_cut(str(definition), METRIC_WIDTH)),
            _num(_at(result.get("score_means"), index)),
            f"[{_num(low)}, {_num(high)}]",
            _num(_at(result.get("score_medians"), index)),
            str(pairs),
            escape(_lowest(_at(result.get("min_scoring_pairs"), index))),
        )
    console.print(table)


def _evaluate_body(args: argparse.Namespace) -> dict[str, Any]:
    body: dict[str, Any] = (
        {"seed_data_id": args.seed}
        if args.seed is not None
        else {"synthetic_data_id": args.synthetic}
    )
    if args.metrics:
        body["metrics_id"] = args.metrics
    query: dict[str, Any] = {}
    if args.label:
        query["pair_labels"] = args.label
    if args.latest_n is not None:
        query["latest_n_pairs"] = args.latest_n
    if query:
        body["pair_query"] = query
    return body


@user_command
def evaluate(args: argparse.Namespace) -> int:
    client = _client(args)
    interval = _poll_seconds()
    if not args.json:
        _rich_console()  # say now, not after the run, when rich is missing
    try:
        answer = client.request(
            "POST", "/evaluate", _evaluate_body(args), headers={"Prefer": "respond-async"}
        )
        body, status = answer.json(), answer.status
    except HttpError as exc:
        # Were respond-async not honoured (a proxy dropping Prefer), a plain request that
        # outlives its wait answers 503 with the result to follow in Location.
        queued = _location_id(exc.location) if exc.status == 503 else None
        if queued is None:
            raise
        body, status = {"eval_results_id": queued, "status": "running"}, exc.status
    results_id = _results_id(body, status)
    try:
        if status in (202, 503) or body.get("status") == "running":
            display: ProgressDisplay = (
                RichBar(results_id) if sys.stderr.isatty() else PlainLines(results_id)
            )
            try:
                display.update(_count(body, "pairs_done"), _count(body, "pairs_total"))
                result = follow(client, results_id, display, interval)
            finally:
                display.close()
        else:
            # Done inside the request (a v1 body, or a finished job's status): read it as a
            # result, the shape --json prints whichever way the run went.
            result = client.request("GET", f"/evaluation/{segment(results_id)}").json()
    except KeyboardInterrupt:
        raise ClientError(
            f"interrupted; evaluation {results_id} goes on in the service "
            f"(GET /evaluation/{results_id}, or evalsvc report {results_id})",
            EXIT_INTERRUPTED,
        ) from None
    if not isinstance(result, dict):
        raise ClientError(f"GET /evaluation/{results_id} did not answer with an object")
    if args.json:
        print(json.dumps(result, indent=2, ensure_ascii=False))
    if result.get("status") == "failed":
        raise ClientError(
            f"evaluation {results_id} failed: {result.get('failure') or 'no reason given'}"
        )
    if not args.json:
        render_evaluation(result, _rich_console())
    return 0


# ---- compare -----------------------------------------------------------------------------------


def read_retrying(
    client: Client,
    method: str,
    path: str,
    body: Any = None,
    *,
    query: dict[str, str] | None = None,
    headers: dict[str, str] | None = None,
) -> Response:
    """A request that changes nothing, asked again (up to READ_ATTEMPTS in all) while the
    service answers that it may succeed later; each retry is said on stderr."""
    for attempt in range(1, READ_ATTEMPTS + 1):
        try:
            return client.request(method, path, body, query=query, headers=headers)
        except HttpError as exc:
            later = exc.status in (502, 503, 504) or (
                exc.status == 429 and exc.retry_after is not None
            )
            if not later or attempt == READ_ATTEMPTS:
                raise
            pause = exc.retry_after
            if pause is None:
                pause = FIRST_RETRY_SECONDS * 2 ** (attempt - 1)
            pause = min(max(pause, MIN_POLL_SECONDS), MAX_RETRY_SECONDS)
            print(
                f"evalsvc: {terminal_safe(exc.message)}; asking again in {pause:g} s "
                f"(retry {attempt} of {READ_ATTEMPTS - 1})",
                file=sys.stderr,
            )
            time.sleep(pause)
    raise AssertionError("unreachable")  # pragma: no cover


# How each verdict is shown, and its style.
VERDICTS = {
    "improved": ("improved", "green"),
    "regressed": ("regressed", "bold red"),
    "no_significant_difference": ("not significant", ""),
    "insufficient_data": ("too few pairs", "yellow"),
}


def render_comparison(comparison: dict[str, Any], console: Console) -> None:
    """The per-metric table of a POST /compare answer, and the pairs that regressed most."""
    from rich.markup import escape
    from rich.table import Table

    alpha = comparison.get("alpha")
    level = f"{100 * (1 - alpha):g}%" if isinstance(alpha, int | float) else "interval"
    console.print(
        escape(
            f"baseline {comparison.get('baseline_id')} → candidate "
            f"{comparison.get('candidate_id')}\n{comparison.get('pairs_matched')} pairs "
            f"matched ({comparison.get('only_in_baseline')} only in the baseline, "
            f"{comparison.get('only_in_candidate')} only in the candidate); alpha {alpha}, "
            f"correction {comparison.get('correction')}"
        )
    )
    table = Table()
    table.add_column("metric", max_width=METRIC_WIDTH, overflow="ellipsis", no_wrap=True)
    table.add_column("n", justify="right")
    table.add_column("baseline", justify="right")
    table.add_column("candidate", justify="right")
    table.add_column(f"diff ({level} interval)", justify="right")
    table.add_column("p adj.", justify="right")
    table.add_column("W/T/L", justify="right")
    table.add_column("verdict", no_wrap=True)
    metrics = comparison.get("metrics")
    for metric in metrics if isinstance(metrics, list) else []:
        verdict = str(metric.get("verdict"))
        shown, style = VERDICTS.get(verdict, (escape(_cut(verdict, 30)), ""))
        table.add_row(
            escape(_cut(str(metric.get("metric")), METRIC_WIDTH)),
            str(metric.get("n")),
            _num(metric.get("baseline_mean")),
            _num(metric.get("candidate_mean")),
            f"{_signed(metric.get('mean_diff'))} [{_signed(metric.get('ci_low'))}, "
            f"{_signed(metric.get('ci_high'))}]",
            _p(metric.get("p_adjusted")),
            f"{metric.get('wins')}/{metric.get('ties')}/{metric.get('losses')}",
            f"[{style}]{shown}[/]" if style else shown,
        )
    console.print(table)
    regressions = comparison.get("regressions")
    if not isinstance(regressions, list) or not regressions:
        console.print("no pair regressed on any metric")
        return
    console.print(f"pairs that regressed most ({len(regressions)} listed by the service):")
    for change in regressions[:REGRESSIONS_SHOWN]:
        reason = _cut(str(change.get("candidate_reason") or ""), REASON_WIDTH)
        line = (
            f"  {change.get('pair_id')}  {_cut(str(change.get('metric')), 40)}  "
            f"{_num(change.get('baseline_score'))} → {_num(change.get('candidate_score'))} "
            f"({_signed(change.get('diff'))})"
        )
        console.print(escape(line + (f"  {reason}" if reason else "")))
    if len(regressions) > REGRESSIONS_SHOWN:
        console.print(f"  … and {len(regressions) - REGRESSIONS_SHOWN} more (--json shows all)")


def regressed_metrics(comparison: dict[str, Any]) -> list[dict[str, Any]]:
    metrics = comparison.get("metrics")
    return [
        m
        for m in (metrics if isinstance(metrics, list) else [])
        if isinstance(m, dict) and m.get("verdict") == "regressed"
    ]


@user_command
def compare(args: argparse.Namespace) -> int:
    client = _client(args)
    if not args.json:
        _rich_console()
    body: dict[str, Any] = {"baseline_id": args.baseline, "candidate_id": args.candidate}
    if args.alpha is not None:
        body["alpha"] = args.alpha
    if args.limit is not None:
        body["limit"] = args.limit
    comparison = read_retrying(client, "POST", "/compare", body).json()
    if not isinstance(comparison, dict):
        raise ClientError("POST /compare did not answer with an object")
    if args.json:
        print(json.dumps(comparison, indent=2, ensure_ascii=False))
    else:
        render_comparison(comparison, _rich_console())
    regressed = regressed_metrics(comparison)
    if args.fail_on_regression and regressed:
        for metric in regressed:
            print(
                f"evalsvc: regressed: {_cut(str(metric.get('metric')), 80)}: mean diff "
                f"{_signed(metric.get('mean_diff'))} [{_signed(metric.get('ci_low'))}, "
                f"{_signed(metric.get('ci_high'))}], p adjusted {_p(metric.get('p_adjusted'))}",
                file=sys.stderr,
            )
        raise ClientError(
            f"the candidate {args.candidate} regressed on {len(regressed)} of "
            f"{len(comparison.get('metrics') or [])} metrics against {args.baseline}"
        )
    return 0


# ---- report ------------------------------------------------------------------------------------


def _file_part(value: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]", "_", value)[:100] or "_"


def _write_atomically(path: Path, content: bytes) -> None:
    """The whole file or none of it: written beside its place, then moved there."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}")
    try:
        with temporary.open("xb") as out:
            out.write(content)
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


@user_command
def report(args: argparse.Namespace) -> int:
    client = _client(args)
    if args.compare is None:
        path = f"/evaluation/{segment(args.id)}/report"
        query = None
        default = f"report-{_file_part(args.id)}.html"
    else:
        path = "/compare/report"
        query = {"baseline_id": args.id, "candidate_id": args.compare}
        default = f"compare-{_file_part(args.id)}-{_file_part(args.compare)}.html"
    answer = read_retrying(client, "GET", path, query=query, headers={"Accept": "text/html"})
    kind = (answer.header("Content-Type") or "").split(";")[0].strip().lower()
    if kind != "text/html":
        raise ClientError(f"GET {path} answered {kind or 'no Content-Type'}, not an HTML page")
    if args.output == "-":
        sys.stdout.buffer.write(answer.body)
        sys.stdout.flush()
        return 0
    target = Path(args.output or default)
    try:
        _write_atomically(target, answer.body)
    except OSError as exc:
        raise ClientError(f"{target}: cannot be written ({exc.strerror or exc})") from None
    print(target)
    return 0
