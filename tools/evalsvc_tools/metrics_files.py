"""The definitions `evalsvc metrics` sends to POST /specify_questions: from its flags
(`--question TEXT`, `--check NAME[:ARG]`, in the order given) and from a file (`--file`), a text
file of one definition a line or a JSON file (a list of strings, or the request's own body
`{"metrics": [...]}`), each checked against the service's limits before anything is sent,
every problem reported where it is (`file:line: what`)."""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evalsvc.models.metric_sets import MAX_DEFINITION_CHARS, MAX_DEFINITIONS
from evalsvc.scoring import bounded_json

from evalsvc_tools.client import EXIT_USAGE, ClientError
from evalsvc_tools.pair_files import read_bytes

CHECK_PREFIX = "check:"
# A line of a text file starting with this is a comment.
COMMENT = "#"
TEXT_SUFFIXES = (".txt", ".text", "")


class BadDefinitions(ClientError):
    """Definitions that cannot be sent: every problem found, each where it is."""

    def __init__(self, problems: list[str]) -> None:
        count = len(problems)
        super().__init__(
            f"{count} problem{'s' if count != 1 else ''} with the metrics (listed above); "
            "nothing was sent",
            EXIT_USAGE,
        )
        self.problems = problems


@dataclass(slots=True, frozen=True)
class Definition:
    """One metric definition and where it came from (`file:line`, `--check 2`), to name it
    in a problem."""

    text: str
    where: str


class AddDefinition(argparse.Action):
    """`--question` and `--check` append to one list, so that the order given on the command
    line is the order of the metrics (a vote names a metric by its index)."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: str | Sequence[Any] | None,
        option_string: str | None = None,
    ) -> None:
        given: list[tuple[str, str]] = list(getattr(namespace, self.dest, None) or [])
        given.append((option_string or self.option_strings[0], str(values)))
        setattr(namespace, self.dest, given)


def from_flags(given: list[tuple[str, str]]) -> list[Definition]:
    """The `--question`/`--check` values in order; a check gets its `check:` prefix."""
    found: list[Definition] = []
    counts: dict[str, int] = {}
    for flag, value in given:
        counts[flag] = counts.get(flag, 0) + 1
        where = f"{flag} {counts[flag]}"
        text = value.strip()
        if flag == "--check" and text and not text.startswith(CHECK_PREFIX):
            text = CHECK_PREFIX + text
        found.append(Definition(text, where))
    return found


def _text_definitions(path: Path, text: str) -> list[Definition]:
    found: list[Definition] = []
    for number, line in enumerate(text.split("\n"), start=1):
        stripped = line.strip()
        if stripped and not stripped.startswith(COMMENT):
            found.append(Definition(stripped, f"{path}:{number}"))
    return found


def _json_definitions(path: Path, text: str) -> tuple[list[Definition], list[str]]:
    try:
        value: Any = bounded_json.loads(text)
    except bounded_json.NotJson as exc:
        cause = exc.__cause__
        if isinstance(cause, json.JSONDecodeError):
            where = f"{path}:{cause.lineno}"
            return [], [f"{where}: not valid JSON ({cause.msg}, column {cause.colno})"]
        return [], [f"{path}: not valid JSON ({exc})"]
    if isinstance(value, dict) and "metrics" in value:
        value = value["metrics"]
    if not isinstance(value, list):
        shape = '["Is the answer polite?", "check:max_words:50"]'
        return [], [
            f'{path}: expected a list of definitions ({shape}) or {{"metrics": [...]}}, '
            f"not a JSON {type(value).__name__}"
        ]
    found: list[Definition] = []
    problems: list[str] = []
    for index, item in enumerate(value):
        where = f"{path}: metrics[{index}]"
        if isinstance(item, str):
            found.append(Definition(item.strip(), where))
        else:
            problems.append(f"{where}: a definition is a string, not {json.dumps(item)[:40]}")
    return found, problems


def from_file(path: Path) -> tuple[list[Definition], list[str]]:
    """The definitions of a .json or a text file, and the problems of the file itself."""
    suffix = path.suffix.lower()
    if suffix != ".json" and suffix not in TEXT_SUFFIXES:
        raise ClientError(
            f"{path}: cannot tell the format from the extension {path.suffix!r}: name the file "
            ".txt (one definition a line, # starts a comment) or .json (a list of definitions)",
            EXIT_USAGE,
        )
    raw = read_bytes(path)
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        return [], [f"{path}:{line}: not UTF-8 text (byte {exc.start})"]
    if suffix == ".json":
        return _json_definitions(path, text)
    return _text_definitions(path, text), []


def check(definitions: list[Definition], problems: list[str]) -> list[Definition]:
    """The definitions when every one can be sent; else BadDefinitions listing each problem
    (with those already found in the file)."""
    problems = list(problems)
    for definition in definitions:
        if not definition.text or definition.text == CHECK_PREFIX:
            problems.append(
                f"{definition.where}: empty: write a question, or a check such as max_words:50"
            )
        elif len(definition.text) > MAX_DEFINITION_CHARS:
            problems.append(
                f"{definition.where}: {len(definition.text):,} characters, over the limit of "
                f"{MAX_DEFINITION_CHARS:,}"
            )
    if not definitions and not problems:
        problems.append(
            "no metrics given: pass --question TEXT or --check NAME (repeat either), or --file"
        )
    if len(definitions) > MAX_DEFINITIONS:
        problems.append(
            f"{len(definitions)} metrics, over the {MAX_DEFINITIONS} a metrics set holds"
        )
    if problems:
        raise BadDefinitions(problems)
    return definitions
