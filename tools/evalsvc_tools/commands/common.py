"""What the user's commands share (the commands talk to any deployment over HTTP, client.py):
how a command ends on Ctrl-C or a closed stdout, the client from --url/--key, how problems
with the arguments are said, the flags and argument types their parsers share, and the pace
of following queued work (EVALSVC_POLL_SECONDS)."""

from __future__ import annotations

import argparse
import contextlib
import functools
import math
import os
import sys
from collections.abc import Callable, Iterable
from typing import Any, TypeAlias, get_args

from evalsvc.models.datasets import MAX_PAIRS
from evalsvc.models.evaluations import ClusterBy

from evalsvc_tools.client import EXIT_FAILED, EXIT_USAGE, Client, ClientError
from evalsvc_tools.terminal import terminal_safe

EXIT_INTERRUPTED = 130
POLL_VARIABLE = "EVALSVC_POLL_SECONDS"
DEFAULT_POLL_SECONDS = 1.0

Command = Callable[[argparse.Namespace], int]
# What `add_subparsers` returns: each module of commands adds its own parsers to it.
Subcommands: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"


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


def client_for(args: argparse.Namespace) -> Client:
    """The client of --url/--key (or the environment); its warning, if any, said on stderr."""
    client = Client.from_settings(args.url, args.key, insecure_http=args.insecure_http)
    if client.warning:
        print(f"evalsvc: {terminal_safe(client.warning)}", file=sys.stderr)
    return client


def say_problems(lines: Iterable[str]) -> None:
    for line in lines:
        print(terminal_safe(line), file=sys.stderr)


def refuse(problems: list[str]) -> None:
    """Nothing is sent when the arguments have problems: one is the error itself, several are
    listed on stderr first."""
    if len(problems) == 1:
        raise ClientError(f"{problems[0]}; nothing was sent", EXIT_USAGE)
    if problems:
        say_problems(problems)
        raise ClientError(
            f"{len(problems)} problems with the arguments (listed above); nothing was sent",
            EXIT_USAGE,
        )


def poll_seconds() -> float:
    value = os.environ.get(POLL_VARIABLE, "").strip()
    try:
        seconds = float(value) if value else DEFAULT_POLL_SECONDS
    except ValueError:
        seconds = -1.0
    if not 0 < seconds <= 600:
        raise ClientError(f"{POLL_VARIABLE} must be a number of seconds from 0 to 600", EXIT_USAGE)
    return seconds


def count(body: dict[str, Any], name: str) -> int:
    value = body.get(name)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


# ---- the parsers' shared flags and types -------------------------------------------------------

# POST /compare's cluster_by.
CLUSTER_BY = get_args(ClusterBy)


def add_service_flags(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("service")
    group.add_argument(
        "--url",
        help="the API's base URL, ending in /v1 (default: $EVALSVC_URL): https, or plain http "
        "to this machine only",
    )
    group.add_argument(
        "--key",
        help="an API key (default: $EVALSVC_API_KEY, which keeps it out of the process list)",
    )
    group.add_argument(
        "--insecure-http",
        action="store_true",
        help="send the key over plain http to a host other than this machine (refused "
        "otherwise: anyone on the way could read the key); use https instead",
    )


def finite_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text!r} is not a finite number")
    return value


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if not 1 <= value <= MAX_PAIRS:
        raise argparse.ArgumentTypeError(f"{text!r} is not from 1 to {MAX_PAIRS}")
    return value
