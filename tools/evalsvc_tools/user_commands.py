"""The user's commands of `evalsvc`, against any deployment over HTTP (client.py):

    evalsvc push FILE --seed ID [--system-prompt P]     a JSON Lines or CSV file → a seed dataset
    evalsvc metrics (--question Q | --check C)... [--file F]   create a metrics set; its id
    evalsvc evaluate (--seed ID | --synthetic ID) ...   run an evaluation, with its progress
    evalsvc rerun ID [--max-cost-usd X] [--async]       evaluate again exactly what ID scored
    evalsvc compare BASELINE CANDIDATE ...              POST /compare, as a table; a CI gate
    evalsvc plan BASELINE [CANDIDATE] --effect X        POST /plan: the pairs a comparison needs
    evalsvc pairwise RUN RUN [RUN...] --question Q      which runs answer better: a leaderboard
    evalsvc report ID [--compare OTHER] [-o FILE]       the HTML report of a result or comparison

The URL and key come from --url/--key or EVALSVC_URL/EVALSVC_API_KEY; plain http is refused
to any host but this machine (the key would travel in clear) unless --insecure-http. Beside
this module: monitor_commands.py holds `evalsvc monitors` (E8), which follows the same rules;
pair_files.py and metrics_files.py read and check what push and metrics send;
render/ and progress.py draw the tables and the progress bar with `rich` (the `cli` extra,
imported only when a command draws); terminal.py makes text safe to show. Every text the
service gave reaches the terminal through terminal.py's filter, --json output included.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import os
import re
import secrets
import sys
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalsvc.errors import InvalidInput
from evalsvc.identifiers import CLIENT_ID_RULE, check_dataset_id, is_client_id
from evalsvc.models.common import MAX_BODY_BYTES
from evalsvc.models.datasets import MAX_TEXT_CHARS
from evalsvc.models.usage import MAX_COST_USD

from evalsvc_tools import metrics_files
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
)
from evalsvc_tools.pair_files import BadFile, read_pairs
from evalsvc_tools.progress import PlainLines, ProgressDisplay, RichBar
from evalsvc_tools.render.comparison import render_comparison, render_plan
from evalsvc_tools.render.evaluation import render_evaluation
from evalsvc_tools.render.figures import format_p_value, format_signed
from evalsvc_tools.render.pairwise import describe_estimate, render_pairwise
from evalsvc_tools.terminal import cut, rich_console, terminal_json, terminal_safe

if TYPE_CHECKING:
    from rich.console import Console

EXIT_INTERRUPTED = 130
POLL_VARIABLE = "EVALSVC_POLL_SECONDS"
DEFAULT_POLL_SECONDS = 1.0
# Statuses worth asking again about while following an evaluation, and how many times in a row.
TRANSIENT_STATUSES = frozenset({429, 500, 502, 503, 504})
MAX_POLL_FAILURES = 5

Command = Callable[[argparse.Namespace], int]


# The shortest pause between two reads of a running evaluation, whatever Retry-After says,
# and the first: a small evaluation is often done by then. Each pause after it doubles, up to
# EVALSVC_POLL_SECONDS.
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
    client = Client.from_settings(args.url, args.key, insecure_http=args.insecure_http)
    if client.warning:
        print(f"evalsvc: {terminal_safe(client.warning)}", file=sys.stderr)
    return client


def _problems(lines: Iterable[str]) -> None:
    for line in lines:
        print(terminal_safe(line), file=sys.stderr)


# ---- push ---------------------------------------------------------------------------------------


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
        _problems(exc.problems)
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


# ---- metrics -----------------------------------------------------------------------------------


def _where_rejected(said: str, definitions: list[metrics_files.Definition]) -> str:
    """The service names a definition it refuses by its index (`metrics[2]: ...`): name it by
    where it came from instead (a file's line, or the flag)."""
    match = re.match(r"metrics\[(\d+)\]:?\s*(.*)", said, re.DOTALL)
    if match is None or int(match.group(1)) >= len(definitions):
        return said
    return f"{definitions[int(match.group(1))].where}: {match.group(2)}"


@user_command
def metrics(args: argparse.Namespace) -> int:
    """Create a metrics set (POST /specify_questions) from --file, then --question/--check in
    the order given; the id alone on stdout, the metrics by index on stderr."""
    definitions: list[metrics_files.Definition] = []
    problems: list[str] = []
    if args.file is not None:
        definitions, problems = metrics_files.from_file(args.file)
    definitions += metrics_files.from_flags(args.definitions or [])
    try:
        metrics_files.check(definitions, problems)
    except metrics_files.BadDefinitions as exc:
        _problems(exc.problems)
        raise
    client = _client(args)
    try:
        answer = client.request(
            "POST", "/specify_questions", {"metrics": [d.text for d in definitions]}
        ).json()
    except HttpError as exc:
        if exc.status != 400:
            raise
        raise ClientError(f"HTTP 400: {_where_rejected(exc.said, definitions)}") from None
    metrics_id = answer.get("metrics_id") if isinstance(answer, dict) else None
    if not isinstance(metrics_id, str) or not is_client_id(metrics_id):
        raise ClientError("POST /specify_questions answered without a metrics_id")
    if args.json:
        print(terminal_json(answer))
        return 0
    created = answer.get("definitions")
    shown = created if isinstance(created, list) else [d.text for d in definitions]
    print(f"created metrics set {metrics_id} with {len(shown)} metrics:", file=sys.stderr)
    for index, definition in enumerate(shown):
        print(f"  {index}  {cut(str(definition), 100)}", file=sys.stderr)
    print(metrics_id)
    return 0


# ---- evaluate ----------------------------------------------------------------------------------


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


def retry_pause(retry_after: float | None, backoff: float) -> float:
    """How long to wait before asking again after a failure the service said may pass: its
    Retry-After, else `backoff`, at most MAX_RETRY_SECONDS."""
    return min(retry_after if retry_after is not None else backoff, MAX_RETRY_SECONDS)


@dataclass(frozen=True, slots=True)
class Queued:
    """A kind of work the service may queue, as the commands follow it: GET /{route}/{id}
    (with `query`) until it is no longer running; `progress` reads (done, total) from each
    answer, and the progress display names the work `noun` and counts it in `unit`."""

    noun: str
    route: str
    progress: Callable[[dict[str, Any]], tuple[int, int]]
    doing: str
    unit: str
    query: Mapping[str, str] | None = None

    def path(self, job_id: str) -> str:
        return f"/{self.route}/{segment(job_id)}"

    def display(self, job_id: str) -> ProgressDisplay:
        if sys.stderr.isatty():
            return RichBar(job_id, self.noun, self.doing, self.unit)
        return PlainLines(job_id, self.noun, self.unit)


def _pairs_progress(body: dict[str, Any]) -> tuple[int, int]:
    return _count(body, "pairs_done"), _count(body, "pairs_total")


def _nested_progress(body: dict[str, Any]) -> tuple[int, int]:
    progress = body.get("progress")
    if not isinstance(progress, dict):
        return 0, 0
    return _count(progress, "done"), _count(progress, "total")


def _judge_calls_progress(body: dict[str, Any]) -> tuple[int, int]:
    if "judge_calls_total" not in body:  # a service that does not count them
        return _pairs_progress(body)
    return _count(body, "judge_calls_done"), _count(body, "judge_calls_total")


EVALUATION = Queued("evaluation", "evaluation", _pairs_progress, "scoring", "pairs")
# With judge_samples k > 1 a pair takes k calls a question: the progress counts the calls, so
# that the work shows as large as it is.
SAMPLED_EVALUATION = Queued(
    "evaluation", "evaluation", _judge_calls_progress, "judging", "judge calls"
)
# The service counts pairs whose comparisons are all judged. Verdicts are paged: while the
# work runs one is asked for, not a page of them each time.
PAIRWISE = Queued(
    "pairwise judging", "pairwise", _nested_progress, "judging", "pairs", query={"limit": "1"}
)


def follow(
    client: Client,
    results_id: str,
    display: ProgressDisplay,
    interval: float,
    on_answer: Callable[[dict[str, Any]], None] | None = None,
    *,
    kind: Queued = EVALUATION,
) -> dict[str, Any]:
    """GET /evaluation/{id} (or another `kind` of queued work) until it is no longer running;
    its last answer (each answer is given to `on_answer` first). The first read is at once,
    the next MIN_POLL_SECONDS later, each pause after it twice the last, up to `interval`; a
    Retry-After is honoured instead. Throttling, a gateway's 5xx or a dropped connection are
    asked again (honouring Retry-After), up to MAX_POLL_FAILURES times in a row."""
    failures = 0
    pause = min(MIN_POLL_SECONDS, interval)
    path = kind.path(results_id)
    while True:
        try:
            response = client.request("GET", path, query=kind.query)
        except (HttpError, ConnectionProblem) as exc:
            transient = not isinstance(exc, HttpError) or exc.status in TRANSIENT_STATUSES
            failures += 1
            if not transient or failures > MAX_POLL_FAILURES:
                raise
            said = exc.retry_after if isinstance(exc, HttpError) else None
            time.sleep(retry_pause(said, interval * 2**failures))
            continue
        failures = 0
        body = response.json()
        if not isinstance(body, dict):
            raise ClientError(f"GET /{kind.route}/{results_id} did not answer with an object")
        if on_answer is not None:
            on_answer(body)
        display.update(*kind.progress(body))
        if body.get("status", "complete") != "running":
            return body
        said = response.retry_after
        time.sleep(max(MIN_POLL_SECONDS, retry_pause(said, 0.0)) if said is not None else pause)
        pause = min(2 * pause, interval)


def follow_shown(
    client: Client,
    kind: Queued,
    job_id: str,
    first: dict[str, Any],
    interval: float,
    on_answer: Callable[[dict[str, Any]], None] | None = None,
) -> dict[str, Any]:
    """`follow` queued work with its progress on stderr, from the answer that queued it
    (`first`, shown when it says how far the work is) to its last answer."""
    display = kind.display(job_id)
    try:
        done, total = kind.progress(first)
        if total:
            display.update(done, total)
        return follow(client, job_id, display, interval, on_answer, kind=kind)
    finally:
        display.close()


def _results_id(body: Any, status: int, path: str = "/evaluate") -> str:
    if isinstance(body, dict):
        found = body.get("eval_results_id") or body.get("results_id")
        if isinstance(found, str) and is_client_id(found):  # a result id, nothing else
            return found
    raise ClientError(f"POST {path} answered HTTP {status} without an eval_results_id")


def _location_id(location: str | None, route: str = "evaluation") -> str | None:
    """The id of the work a `Location` (…/{route}/{id}) names, when it is one."""
    match = re.search(rf"{route}/([^/?#]+)$", location or "")
    return match.group(1) if match and is_client_id(match.group(1)) else None


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
    if args.cluster_by is not None:
        body["cluster_by"] = args.cluster_by
    if args.judge_samples is not None:
        body["judge_samples"] = args.judge_samples
    return body


class MetricsNamer:
    """Says once, on stderr, which metrics set an evaluation scores with, from the first
    answer that names it: a warning when the command did not choose it (--metrics absent),
    since then the service took the tenant's latest set, whichever that is now."""

    def __init__(self, results_id: str, chosen: str | None) -> None:
        self.results_id = results_id
        self.chosen = chosen
        self.said = False

    def __call__(self, body: dict[str, Any]) -> None:
        metrics_id = body.get("metrics_id")
        if self.said or not isinstance(metrics_id, str) or not metrics_id:
            return
        self.said = True
        definitions = body.get("metrics_definitions")
        count = len(definitions) if isinstance(definitions, list) else 0
        named = f"metrics set {cut(metrics_id, 128)} ({count} metric{'s' if count != 1 else ''})"
        dataset = cut(str(body.get("dataset_id")), 128)
        if self.chosen is None:
            print(
                f"evalsvc: warning: no --metrics given, so evaluation {self.results_id} of "
                f"dataset {dataset} uses the tenant's latest {named}; pass --metrics ID to "
                "choose the set (evalsvc metrics creates one)",
                file=sys.stderr,
            )
        else:
            print(
                f"evaluation {self.results_id} of dataset {dataset} uses {named}",
                file=sys.stderr,
            )


def _show_ended(
    args: argparse.Namespace,
    body: Any,
    what: str,
    path: str,
    render: Callable[[dict[str, Any], Any], None],
) -> int:
    """Print queued work that has ended (`what`, read at `path`): its body as JSON with --json,
    else its tables; a failed one is an error naming why."""
    if not isinstance(body, dict):
        raise ClientError(f"GET {path} did not answer with an object")
    if args.json:
        print(terminal_json(body))
    if body.get("status") == "failed":
        raise ClientError(f"{what} failed: {body.get('failure') or 'no reason given'}")
    if not args.json:
        render(body, rich_console())
    return 0


def _start_evaluation(client: Client, path: str, body: dict[str, Any]) -> tuple[Any, int]:
    """POST `body` to `path`, an evaluation queued at once when the service honours
    respond-async (so that its progress shows from the start): the answer and its status."""
    try:
        answer = client.request("POST", path, body, headers={"Prefer": "respond-async"})
        return answer.json(), answer.status
    except HttpError as exc:
        # Were respond-async not honoured (a proxy dropping Prefer), a plain request that
        # outlives its wait answers 503 with the result to follow in Location.
        queued = _location_id(exc.location) if exc.status == 503 else None
        if queued is None:
            raise
        return {"eval_results_id": queued, "status": "running"}, exc.status


def _evaluation_result(
    client: Client,
    results_id: str,
    first: dict[str, Any],
    status: int,
    samples: int,
    interval: float,
    on_answer: Callable[[dict[str, Any]], None] | None = None,
) -> Any:
    """The result of the evaluation `first` (with `status`) answered for: followed with its
    progress while it runs (in judge calls with `samples` > 1, asking at most every `interval`
    seconds), else read as a result, the shape --json prints whichever way the run went.
    Ctrl-C says the evaluation goes on."""
    try:
        if status in (202, 503) or first.get("status") == "running":
            kind = SAMPLED_EVALUATION if samples > 1 else EVALUATION
            return follow_shown(client, kind, results_id, first, interval, on_answer)
        # Done inside the request (a v1 body, or a finished job's status).
        result = client.request("GET", f"/evaluation/{segment(results_id)}").json()
        if isinstance(result, dict) and on_answer is not None:
            on_answer(result)
        return result
    except KeyboardInterrupt:
        raise ClientError(
            f"interrupted; evaluation {results_id} goes on in the service "
            f"(GET /evaluation/{results_id}, or evalsvc report {results_id})",
            EXIT_INTERRUPTED,
        ) from None


@user_command
def evaluate(args: argparse.Namespace) -> int:
    client = _client(args)
    interval = _poll_seconds()
    if not args.json:
        rich_console()  # say now, not after the run, when rich is missing
    try:
        body, status = _start_evaluation(client, "/evaluate", _evaluate_body(args))
    except HttpError as exc:
        if exc.status == 404 and args.metrics is None and "no metrics set" in exc.said:
            raise ClientError(
                f"{exc.message}; from the command line: evalsvc metrics --check non_empty "
                "--question 'Is the answer polite?'"
            ) from None
        raise
    results_id = _results_id(body, status)
    name_metrics = MetricsNamer(results_id, args.metrics)
    samples = args.judge_samples or 1
    result = _evaluation_result(client, results_id, body, status, samples, interval, name_metrics)
    return _show_ended(
        args, result, f"evaluation {results_id}", f"/evaluation/{results_id}", render_evaluation
    )


# ---- rerun ---------------------------------------------------------------------------------------


def _pairs_digest(result: Any) -> str | None:
    inputs = result.get("inputs") if isinstance(result, dict) else None
    digest = inputs.get("pairs_digest") if isinstance(inputs, dict) else None
    return digest if isinstance(digest, str) else None


def _check_same_pairs(args: argparse.Namespace, original: dict[str, Any], result: Any) -> None:
    """Say whether the rerun scored the pairs the original did (equal pairs_digest), on
    stdout with the result (stderr with --json); ClientError when it did not."""
    before, after = _pairs_digest(original), _pairs_digest(result)
    out = sys.stderr if args.json else sys.stdout
    if before is None or after is None:
        which = "the original's" if before is None else "the rerun's"
        print(
            f"evalsvc: {which} pairs_digest is not recorded: whether the rerun scored the same "
            "pairs is not known",
            file=sys.stderr,
        )
        return
    if before != after:
        raise ClientError(
            f"the rerun's pairs_digest {terminal_safe(after)} differs from the original's "
            f"{terminal_safe(before)}: it did not score the pairs evaluation {args.id} scored"
        )
    print(
        f"pairs_digest {terminal_safe(after)} equals evaluation {args.id}'s: the same pairs "
        "were scored again",
        file=out,
    )


@user_command
def rerun(args: argparse.Namespace) -> int:
    """POST /evaluation/{id}/rerun: exactly the pairs evaluation ID scored, evaluated again
    with its definitions and judge settings; followed as evaluate follows, then shown with
    what produced it and whether its pairs_digest equals the original's (read first with GET
    /evaluation/{id}). With --async it is queued and its id printed, not followed."""
    if not is_client_id(args.id):
        raise ClientError(
            f"{args.id[:140]!r} is not an evaluation result id: {CLIENT_ID_RULE}; nothing was sent",
            EXIT_USAGE,
        )
    if args.max_cost_usd is not None and not 0 < args.max_cost_usd <= MAX_COST_USD:
        raise ClientError(
            f"--max-cost-usd is {args.max_cost_usd:g}: it must be more than 0 and at most "
            f"{MAX_COST_USD:,.0f}; nothing was sent",
            EXIT_USAGE,
        )
    client = _client(args)
    interval = _poll_seconds()
    if not args.json:
        rich_console()  # say now, not after the run, when rich is missing
    path = f"/evaluation/{segment(args.id)}"
    original = read_retrying(client, "GET", path).json()
    if not isinstance(original, dict):
        raise ClientError(f"GET {path} did not answer with an object")
    body: dict[str, Any] = {}
    if args.max_cost_usd is not None:
        body["max_cost_usd"] = args.max_cost_usd
    first, status = _start_evaluation(client, f"{path}/rerun", body)
    results_id = _results_id(first, status, f"/evaluation/{args.id}/rerun")
    if args.asynchronous:
        print(terminal_json(first) if args.json else results_id)
        print(
            f"evaluation {results_id} evaluates again the pairs evaluation {args.id} scored: "
            f"follow it with GET /evaluation/{results_id}, or evalsvc report {results_id}",
            file=sys.stderr,
        )
        return 0
    print(
        f"evaluation {results_id} evaluates again the {_count(original, 'pair_count'):,} pairs "
        f"evaluation {args.id} scored, of dataset {cut(str(original.get('dataset_id')), 128)}",
        file=sys.stderr,
    )
    samples = _count(original, "judge_samples") or 1
    result = _evaluation_result(client, results_id, first, status, samples, interval)
    _show_ended(
        args, result, f"evaluation {results_id}", f"/evaluation/{results_id}", render_evaluation
    )
    _check_same_pairs(args, original, result)
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
            backoff = FIRST_RETRY_SECONDS * 2 ** (attempt - 1)
            pause = max(MIN_POLL_SECONDS, retry_pause(exc.retry_after, backoff))
            print(
                f"evalsvc: {terminal_safe(exc.message)}; asking again in {pause:g} s "
                f"(retry {attempt} of {READ_ATTEMPTS - 1})",
                file=sys.stderr,
            )
            time.sleep(pause)
    raise AssertionError("unreachable")  # pragma: no cover


def regressed_metrics(comparison: dict[str, Any]) -> list[dict[str, Any]]:
    metrics = comparison.get("metrics")
    return [
        m
        for m in (metrics if isinstance(metrics, list) else [])
        if isinstance(m, dict) and m.get("verdict") == "regressed"
    ]


def _post_and_show(
    args: argparse.Namespace,
    path: str,
    body: dict[str, Any],
    render: Callable[[dict[str, Any], Console], None],
) -> dict[str, Any]:
    """POST `body` to `path` (asked again while the service says to), then print the answer:
    its JSON with --json, else `render`ed; the answer."""
    client = _client(args)
    if not args.json:
        rich_console()  # rich is there, before anything is asked
    answer = read_retrying(client, "POST", path, body).json()
    if not isinstance(answer, dict):
        raise ClientError(f"POST {path} did not answer with an object")
    if args.json:
        print(terminal_json(answer))
    else:
        render(answer, rich_console())
    return answer


@user_command
def compare(args: argparse.Namespace) -> int:
    body: dict[str, Any] = {"baseline_id": args.baseline, "candidate_id": args.candidate}
    if args.alpha is not None:
        body["alpha"] = args.alpha
    if args.limit is not None:
        body["limit"] = args.limit
    if args.cluster_by is not None:
        body["cluster_by"] = args.cluster_by
    comparison = _post_and_show(args, "/compare", body, render_comparison)
    regressed = regressed_metrics(comparison)
    if args.fail_on_regression and regressed:
        for metric in regressed:
            print(
                f"evalsvc: regressed: {cut(str(metric.get('metric')), 80)}: mean diff "
                f"{format_signed(metric.get('mean_diff'))} "
                f"[{format_signed(metric.get('ci_low'))}, {format_signed(metric.get('ci_high'))}], "
                f"p adjusted {format_p_value(metric.get('p_adjusted'))}",
                file=sys.stderr,
            )
        raise ClientError(
            f"the candidate {args.candidate} regressed on {len(regressed)} of "
            f"{len(comparison.get('metrics') or [])} metrics against {args.baseline}"
        )
    return 0


# ---- plan --------------------------------------------------------------------------------------


@user_command
def plan(args: argparse.Namespace) -> int:
    body: dict[str, Any] = {"baseline_id": args.baseline, "effect": args.effect}
    if args.candidate is not None:
        body["candidate_id"] = args.candidate
    if args.alpha is not None:
        body["alpha"] = args.alpha
    if args.power is not None:
        body["power"] = args.power
    _post_and_show(args, "/plan", body, render_plan)
    return 0


# ---- pairwise ----------------------------------------------------------------------------------

# E5's bounds on POST /pairwise, checked before anything is sent (max_pairs: --max-pairs' type).
MIN_RUNS = 2
MAX_RUNS = 8
MAX_QUESTION_CHARS = 2_000
MAX_ALPHA = 0.5


def _pairwise_body(args: argparse.Namespace) -> dict[str, Any]:
    """The body of POST /pairwise (and of /pairwise/estimate) from the arguments; every
    problem with them is said, and nothing sent, when there is any."""
    runs: list[str] = args.runs
    problems: list[str] = []
    if not MIN_RUNS <= len(runs) <= MAX_RUNS:
        problems.append(
            f"pairwise judges {MIN_RUNS} to {MAX_RUNS} runs (evaluation result ids), "
            f"not {len(runs)}"
        )
    problems += [
        f"run {run[:140]!r} is not an evaluation result id: {CLIENT_ID_RULE}"
        for run in runs
        if not is_client_id(run)
    ]
    repeated = sorted({run for run in runs if runs.count(run) > 1}, key=runs.index)
    if repeated:
        problems.append(
            f"each run is judged once, but {', '.join(repr(r[:140]) for r in repeated)} "
            f"{'is' if len(repeated) == 1 else 'are'} given more than once"
        )
    question: str = args.question
    if not question.strip():
        problems.append(
            "--question is empty: give the criterion, e.g. 'Which answer is more helpful?'"
        )
    elif len(question) > MAX_QUESTION_CHARS:
        over = f"over the limit of {MAX_QUESTION_CHARS:,}"
        problems.append(f"--question has {len(question):,} characters, {over}")
    if args.alpha is not None and not 0 < args.alpha < MAX_ALPHA:
        problems.append(f"--alpha is {args.alpha:g}: it must be more than 0 and less than 0.5")
    if args.max_cost_usd is not None and not 0 < args.max_cost_usd <= MAX_COST_USD:
        problems.append(
            f"--max-cost-usd is {args.max_cost_usd:g}: it must be more than 0 and at most "
            f"{MAX_COST_USD:,.0f}"
        )
    if len(problems) == 1:
        raise ClientError(f"{problems[0]}; nothing was sent", EXIT_USAGE)
    if problems:
        _problems(problems)
        raise ClientError(
            f"{len(problems)} problems with the arguments (listed above); nothing was sent",
            EXIT_USAGE,
        )
    body: dict[str, Any] = {"result_ids": runs, "question": question}
    if args.one_order:
        body["both_orders"] = False
    if args.max_pairs is not None:
        body["max_pairs"] = args.max_pairs
    if args.alpha is not None:
        body["alpha"] = args.alpha
    if args.max_cost_usd is not None:
        body["max_cost_usd"] = args.max_cost_usd
    return body


def _pairwise_id(body: dict[str, Any], location: str | None, status: int) -> str:
    found = body.get("pairwise_id")
    if isinstance(found, str) and is_client_id(found):
        return found
    named = _location_id(location, PAIRWISE.route)
    if named is None:
        raise ClientError(f"POST /pairwise answered HTTP {status} without a pairwise_id")
    return named


@user_command
def pairwise(args: argparse.Namespace) -> int:
    """POST /pairwise (or /pairwise/estimate): the runs' outputs judged two by two against
    the question, followed like an evaluation when queued; the leaderboard, the matchups and
    the judge's position bias as tables, or the final body (--json)."""
    body = _pairwise_body(args)
    client = _client(args)
    if args.estimate:
        # Stores nothing, so asked again while the service says it may answer later.
        estimate = read_retrying(client, "POST", "/pairwise/estimate", body).json()
        if not isinstance(estimate, dict):
            raise ClientError("POST /pairwise/estimate did not answer with an object")
        print(terminal_json(estimate) if args.json else describe_estimate(estimate))
        return 0
    interval = _poll_seconds()
    if not args.json:
        rich_console()  # say now, not after the run, when rich is missing
    # Queued at once when the service honours respond-async, so the progress shows from the
    # start; else it answers 200 when the work fits the request, 202 when it does not.
    answer = client.request("POST", "/pairwise", body, headers={"Prefer": "respond-async"})
    first = answer.json()
    if not isinstance(first, dict):
        raise ClientError(f"POST /pairwise answered HTTP {answer.status} without an object")
    pairwise_id = _pairwise_id(first, answer.header("Location"), answer.status)
    path = PAIRWISE.path(pairwise_id)
    try:
        if answer.status == 202 or first.get("status") == "running":
            final = follow_shown(client, PAIRWISE, pairwise_id, first, interval)
            if args.json:  # followed with one verdict a page: the body with its first page
                final = read_retrying(client, "GET", path).json()
        elif "leaderboard" in first:  # finished inside the request: the whole body
            final = first
        else:  # ended already, answered with its id and status only
            final = read_retrying(client, "GET", path).json()
    except KeyboardInterrupt:
        raise ClientError(
            f"interrupted; pairwise judging {pairwise_id} goes on in the service "
            f"(GET /pairwise/{pairwise_id})",
            EXIT_INTERRUPTED,
        ) from None
    return _show_ended(
        args, final, f"pairwise judging {pairwise_id}", f"/pairwise/{pairwise_id}", render_pairwise
    )


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


REPORT_ON_TERMINAL = (
    "-o - would write the HTML report to this terminal, and the page holds the datasets' and "
    "judges' text as it is, control characters included, which a terminal obeys (clearing the "
    "screen, setting its title, making links): save it (-o FILE), pipe it (| less), or pass "
    "--force to write it here with those characters replaced"
)


@user_command
def report(args: argparse.Namespace) -> int:
    on_terminal = args.output == "-" and sys.stdout.isatty()
    if on_terminal and not args.force:
        raise ClientError(REPORT_ON_TERMINAL, EXIT_USAGE)
    if args.cluster_by is not None and args.compare is None:
        raise ClientError("--cluster-by clusters a comparison: give --compare OTHER", EXIT_USAGE)
    client = _client(args)
    if args.compare is None:
        path = f"/evaluation/{segment(args.id)}/report"
        query = None
        default = f"report-{_file_part(args.id)}.html"
    else:
        path = "/compare/report"
        query = {"baseline_id": args.id, "candidate_id": args.compare}
        if args.cluster_by is not None:
            query["cluster_by"] = args.cluster_by
        default = f"compare-{_file_part(args.id)}-{_file_part(args.compare)}.html"
    answer = read_retrying(client, "GET", path, query=query, headers={"Accept": "text/html"})
    kind = (answer.header("Content-Type") or "").split(";")[0].strip().lower()
    if kind != "text/html":
        raise ClientError(f"GET {path} answered {kind or 'no Content-Type'}, not an HTML page")
    if args.output == "-":
        # To a pipe or a file the page as it is; to a terminal (--force) shown, never obeyed.
        page = answer.body
        if on_terminal:
            page = terminal_safe(page.decode("utf-8", "replace")).encode("utf-8")
        sys.stdout.buffer.write(page)
        sys.stdout.flush()
        return 0
    target = Path(args.output or default)
    try:
        _write_atomically(target, answer.body)
    except OSError as exc:
        raise ClientError(f"{target}: cannot be written ({exc.strerror or exc})") from None
    print(target)
    return 0
