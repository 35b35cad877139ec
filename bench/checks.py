"""Worst time of each check on hostile content, and what the safe engines cost.

1. Every definition of tests/pathological.py against every pathological output (each within
   the 100,000-character limit): the worst time per definition and the output that caused it.
2. RE2 releases the GIL: a Python thread counting while a slow RE2 search runs, against the
   same thread counting alone for as long.
3. The reference metrics (scoring/reference.py) on two texts of 100,000 characters each: time
   and peak memory (tracemalloc) of each, on the inputs that cost them most, and what a plain
   dynamic-programming subsequence would take instead of the bit-parallel one.
4. The cold import of jsonschema (what the first schema metric of a process pays) and of
   sacrebleu (the first chrF), and the installed size of the packages they add to the layer.
5. The tool-call checks (scoring/trajectory.py) on a pair at the field limits: 100 calls made
   and 100 expected, each with arguments of about MAX_ARGUMENTS_BYTES, in the shapes that cost
   canonical_json most (the most values, integral floats to rewrite, keys to sort, deep
   nesting) and orders that make every check read every call: time and peak memory of the
   keys alone, of a check with no key cached, of each check with the keys cached (its own
   work), and of the five on one pair as an evaluation scores them.

    .venv/bin/python bench/checks.py [--repeat 3] [--only reference|trajectory]
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import random
import statistics
import subprocess
import sys
import threading
import time
import tracemalloc
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # for tests.pathological

from evalsvc.core.observability import logger  # noqa: E402
from evalsvc.models.conversations import (  # noqa: E402
    MAX_ARGUMENTS_BYTES,
    MAX_TOOL_CALLS,
    ToolCall,
    arguments_bytes,
)
from evalsvc.models.datasets import MAX_TEXT_CHARS, Pair  # noqa: E402
from evalsvc.scoring import trajectory  # noqa: E402
from evalsvc.scoring.checks import TRAJECTORY_CHECKS, parse, parse_for_pairs  # noqa: E402
from evalsvc.scoring.patterns import compile_pattern  # noqa: E402
from evalsvc.scoring.reference import (  # noqa: E402
    FREQUENT,
    chrf,
    exact_match,
    lcs_length,
    rouge_l,
    token_f1,
    tokens,
)

from tests.pathological import DEFINITIONS, outputs  # noqa: E402

ENGINE_PACKAGES = {
    "RE2": ["re2", "google_re2"],
    "jsonschema": [
        "jsonschema",
        "jsonschema_specifications",
        "referencing",
        "rpds",
        "rpds_py",
        "attrs",
        "attr",
    ],
    # What chrF imports, and what sacrebleu requires but chrF never imports.
    "sacrebleu": ["sacrebleu", "portalocker", "colorama", "tabulate", "lxml"],
    "sacrebleu's numpy and regex": ["numpy", "numpy.libs", "regex"],
}


def worst_times(repeat: int) -> None:
    texts = outputs()
    print(f"## Worst time per check ({len(texts)} pathological outputs, best of {repeat})\n")
    print("| definition | worst ms | on | score |")
    print("|---|---|---|---|")
    overall = 0.0
    for definition in DEFINITIONS:
        scorer = parse(definition)
        worst, worst_name, worst_score = 0.0, "", 0.0
        for name, text in texts.items():
            best = float("inf")
            for _ in range(repeat):
                started = time.perf_counter()
                result = scorer("What is the answer?", text)
                best = min(best, time.perf_counter() - started)
            if best > worst:
                worst, worst_name, worst_score = best, name, result.value
        overall = max(overall, worst)
        shown = definition if len(definition) <= 60 else definition[:57] + "..."
        shown = shown.replace("|", "\\|")
        print(f"| `{shown}` | {worst * 1000:.1f} | {worst_name} | {worst_score:g} |")
    print(f"\nworst of all: {overall * 1000:.1f} ms\n")


def _count_while(work: Callable[[], object]) -> int:
    """How far a Python thread counts while `work` runs in this one."""
    counts: list[int] = []
    stop = threading.Event()

    def count() -> None:
        n = 0
        while not stop.is_set():
            n += 1
        counts.append(n)

    spinner = threading.Thread(target=count)
    spinner.start()
    work()
    stop.set()
    spinner.join()
    return counts[0]


def gil_released(repeat: int = 5) -> None:
    """A thread counting during a slow RE2 search, against the same thread while this one
    sleeps for as long (the GIL free): the share of its speed it keeps."""
    pattern = compile_pattern("a[ab]{990}x")
    text = outputs()["random a and b"]
    shares, seconds = [], []
    for _ in range(repeat):
        started = time.perf_counter()
        during = _count_while(lambda: pattern.search(text))
        took = time.perf_counter() - started
        alone = _count_while(functools.partial(time.sleep, took))
        shares.append(during / alone)
        seconds.append(took)
    shares.sort()
    print("## RE2 and the GIL\n")
    print(
        f"a thread counting during an RE2 search of {statistics.median(seconds) * 1000:.0f} ms "
        f"kept {shares[len(shares) // 2]:.0%} of its speed (median of {repeat}; "
        f"{shares[0]:.0%}-{shares[-1]:.0%})\n"
    )


# ---- the reference metrics ---------------------------------------------------------------------

REFERENCE_METRICS = {
    "exact_match": exact_match,
    "token_f1": token_f1,
    "rouge_l": rouge_l,
    "chrf": chrf,
}


def _distinct_characters(count: int) -> list[str]:
    """`count` different letters, each a word of its own after normalising: CJK ideographs
    (no case, no punctuation), from the BMP then from plane 2."""
    bmp = [chr(code) for code in range(0x4E00, 0xA000)]
    return (bmp + [chr(code) for code in range(0x20000, 0x20000 + count)])[:count]


def _words_text(words: Sequence[str]) -> str:
    return " ".join(words)[:MAX_TEXT_CHARS]


def reference_inputs() -> dict[str, tuple[str, str]]:
    """Pairs of texts at the field limit, each the worst of something."""
    rng = random.Random(7)
    n = MAX_TEXT_CHARS // 2  # one-character words and a space: the most words a text holds
    distinct = _distinct_characters(n)
    rotated = distinct[1:] + distinct[:1]
    few = [rng.choice("bc") for _ in range(n)], [rng.choice("bc") for _ in range(n)]
    # Each word one time too few for a kept mask: every step of ROUGE-L rebuilds one, from the
    # most positions a rebuilt mask has (its slowest input).
    times = FREQUENT - 1
    repeated = distinct[: n // times] * times
    rng.shuffle(repeated)
    other = repeated[:]
    rng.shuffle(other)
    # 4-byte characters from an alphabet of 42,720 and no spaces: nearly every character n-gram
    # differs, chrF's most (its counters hold each distinct one).
    plane2 = [chr(code) for code in range(0x20000, 0x2A6E0)]

    def four_byte() -> str:
        return "".join(rng.choice(plane2) for _ in range(MAX_TEXT_CHARS))

    return {
        "(a) 50,000 distinct words, one moved": (_words_text(distinct), _words_text(rotated)),
        "(b) 50,000 words of 2 kinds, at random": (_words_text(few[0]), _words_text(few[1])),
        f"(b') {n // times:,} words {times} times each, at random": (
            _words_text(repeated),
            _words_text(other),
        ),
        "(c) 100,000 4-byte characters at random, no space": (four_byte(), four_byte()),
    }


def _timed(work: Callable[[], object], repeat: int) -> tuple[float, float]:
    """(best seconds of `repeat` runs, peak bytes traced in one more run)."""
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        work()
        best = min(best, time.perf_counter() - started)
    tracemalloc.start()
    try:
        work()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return best, peak


def reference_worst(repeat: int) -> None:
    chrf("warm", "up")  # sacrebleu's import is the cold start's, measured below
    print(f"## Reference metrics at the field limit (best of {repeat}; peak by tracemalloc)\n")
    print("| input | metric | ms | peak MiB | score |")
    print("|---|---|---|---|---|")
    for name, (output, expected) in reference_inputs().items():
        assert len(output) <= MAX_TEXT_CHARS and len(expected) <= MAX_TEXT_CHARS
        words = f"{len(tokens(output)):,} and {len(tokens(expected)):,} words"
        for metric_name, metric in REFERENCE_METRICS.items():
            seconds, peak = _timed(functools.partial(metric, output, expected), repeat)
            score = metric(output, expected).value
            print(
                f"| {name} ({words}) | {metric_name} | {seconds * 1000:.0f} | "
                f"{peak / 2**20:.1f} | {score:g} |"
            )
    print()


def _dp_lcs(first: Sequence[str], second: Sequence[str]) -> int:
    """The plain O(n m) table, one row at a time (linear memory, quadratic time)."""
    previous = [0] * (len(second) + 1)
    for x in first:
        row = [0]
        for j, y in enumerate(second):
            row.append(previous[j] + 1 if x == y else max(previous[j + 1], row[j]))
        previous = row
    return previous[-1]


def lcs_against_the_table(words: int = 2_000, limit: int = MAX_TEXT_CHARS // 2) -> None:
    rng = random.Random(11)
    first = [rng.choice("bc") for _ in range(words)]
    second = [rng.choice("bc") for _ in range(words)]
    started = time.perf_counter()
    table = _dp_lcs(first, second)
    dp_seconds = time.perf_counter() - started
    started = time.perf_counter()
    assert lcs_length(first, second) == table
    bit_seconds = time.perf_counter() - started
    scale = (limit / words) ** 2
    print("## Longest common subsequence: bit-parallel against the plain table\n")
    print(
        f"- {words:,} x {words:,} words of 2 kinds: table {dp_seconds * 1000:.0f} ms, "
        f"bit-parallel {bit_seconds * 1000:.1f} ms"
    )
    print(
        f"- {limit:,} x {limit:,} words: the table would take about {dp_seconds * scale:,.0f} s "
        f"({scale:,.0f} x the cells; not run), and {limit * limit / 2**30 * 8:,.0f} GiB if "
        "it were kept whole; the bit-parallel run is in the table above, input (b)\n"
    )


# ---- the tool-call checks ----------------------------------------------------------------------


def _filled(make: Callable[[int], dict[str, Any]]) -> dict[str, Any]:
    """make(n) for the largest n whose arguments fit MAX_ARGUMENTS_BYTES (compact JSON)."""
    low, high = 0, MAX_ARGUMENTS_BYTES
    while low < high:
        middle = (low + high + 1) // 2
        if arguments_bytes(make(middle)) <= MAX_ARGUMENTS_BYTES:
            low = middle
        else:
            high = middle - 1
    return make(low)


def _nested(depth: int, leaf: Any) -> Any:
    value = leaf
    for _ in range(depth):
        value = [value]
    return value


def trajectory_inputs() -> dict[str, tuple[list[ToolCall], list[ToolCall]]]:
    """Made and expected calls at the field limits (MAX_TOOL_CALLS a side, each call's arguments
    within MAX_ARGUMENTS_BYTES of it), each the worst of something. In each the calls made are
    the expected ones in reverse order with their values spelt otherwise (1.0 for 1, keys in
    the other order), so no check stops early: strict differs at call 1, the multisets are
    equal and every expected call is made; "all differ" makes every call of one side extra."""
    n = MAX_TOOL_CALLS
    # The most values in 16 KB: 1-digit integers, each a JSON value _canonical visits.
    digits = [_filled(lambda k, i=i: {"i": i, "v": [i % 10] * k}) for i in range(n)]
    # Integral floats, each rewritten to the integer it equals; 1.0 takes 2 bytes more than 1,
    # so fewer of them fit.
    floats = [_filled(lambda k, i=i: {"i": i, "v": [float(i % 10)] * k}) for i in range(n)]
    as_integers = [{"i": args["i"], "v": [int(v) for v in args["v"]]} for args in floats]
    # The most keys to sort: 1,000-odd short keys, written in reverse order on one side.
    keys = [
        _filled(lambda k, i=i: {"i": i, **{f"{j:04x}": j % 10 for j in range(k)}}) for i in range(n)
    ]
    reversed_keys = [dict(reversed(args.items())) for args in keys]
    # Nesting: as deep as canonical_json goes (the interpreter's recursion, about 1,000 levels
    # less the callers'), each level holding an integer; and as deep as 16 KB of brackets goes.
    deep = [_filled(lambda k, i=i: {"i": i, "v": _nested(400, [0] * k)}) for i in range(n)]
    deepest = [{"i": i, "v": _nested(MAX_ARGUMENTS_BYTES // 2 - 20, 0)} for i in range(n)]

    def calls(arguments: list[dict[str, Any]], name: str = "tool") -> list[ToolCall]:
        return [ToolCall(name, args) for args in arguments]

    return {
        "(a) 100 x 8,000 one-digit integers": (calls(digits[::-1]), calls(digits)),
        "(b) 100 x 4,000 integral floats against integers": (
            calls(floats[::-1]),
            calls(as_integers),
        ),
        "(c) 100 x 1,600 keys, in reverse order": (calls(reversed_keys[::-1]), calls(keys)),
        "(d) 100 x 8,000 integers 400 levels deep": (calls(deep[::-1]), calls(deep)),
        "(e) all differ: (a) under other names": (calls(digits, "other"), calls(digits)),
        "(f) 100 x 8,000 levels of brackets (past the recursion limit)": (
            calls(deepest[::-1]),
            calls(deepest),
        ),
    }


def _keys_alone(made: list[ToolCall], expected: list[ToolCall]) -> None:
    for call in (*made, *expected):
        with contextlib.suppress(RecursionError):
            _ = call.key


def _cold(metric: trajectory.Metric, made: list[ToolCall], expected: list[ToolCall]) -> None:
    """One check with no key cached, as the first trajectory check of a pair runs."""
    trajectory._cached_keys.cache_clear()
    metric(made, expected)


def _warm(metric: trajectory.Metric, made: list[ToolCall], expected: list[ToolCall]) -> None:
    """One check with the keys cached, as every trajectory check of a pair after its first
    runs: the check's own work (Counters, comparisons, the reason)."""
    metric(made, expected)


def _all_five(scorers: list[Callable[[Pair], object]], pair: Pair) -> None:
    """The five checks of one pair through parse_for_pairs, as an evaluation scores them."""
    trajectory._cached_keys.cache_clear()
    for scorer in scorers:
        scorer(pair)


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.0f}" if seconds >= 0.01 else f"{seconds * 1000:.2f}"


def trajectory_worst(repeat: int) -> None:
    print(
        f"## Tool-call checks at the field limits ({MAX_TOOL_CALLS} calls a side; best of "
        f"{repeat}; peak by tracemalloc)\n"
    )
    print("| calls | arguments a side | check | ms | peak MiB | score |")
    print("|---|---|---|---|---|---|")
    scorers = [parse_for_pairs(f"check:{check}") for check in TRAJECTORY_CHECKS]
    inputs = trajectory_inputs()
    level = logger.log_level
    logger.setLevel("ERROR")  # (f) logs that each check raised, every run
    for name, (made, expected) in inputs.items():
        try:
            size = sum(arguments_bytes(call.arguments) for call in made)
            shown = f"{size / 2**20:.2f} MiB"
        except RecursionError:
            shown = "(too deep to write)"
        strict = trajectory.BY_NAME["trajectory:strict"]
        rows: list[tuple[str, Callable[[], object], str]] = [
            ("the keys alone", functools.partial(_keys_alone, made, expected), ""),
            ("strict, no key cached", functools.partial(_cold, strict, made, expected), ""),
        ]
        for check, metric in trajectory.BY_NAME.items():
            score = metric(made, expected).value
            work = functools.partial(_warm, metric, made, expected)
            rows.append((f"{check}, keys cached", work, f"{score:g}"))
        pair = Pair("p", "q", "o", tool_calls=made, expected_tool_calls=expected)
        rows.append(("the five on one pair", functools.partial(_all_five, scorers, pair), ""))
        for what, work, score_shown in rows:
            seconds, peak = _timed(work, repeat)
            print(
                f"| {name} | {shown} | {what} | {_ms(seconds)} | {peak / 2**20:.1f} | "
                f"{score_shown} |"
            )
    made, expected = list(inputs.values())[-1]
    print(f"\n- {list(inputs)[-1]}: {trajectory.strict(made, expected).reason}\n")
    logger.setLevel(level)


def import_cost() -> None:
    code = (
        "import time; t = time.perf_counter(); "
        "from evalsvc.scoring import checks; checks.parse('check:json_schema:{}'); "
        "print(time.perf_counter() - t)"
    )
    base = (
        "import time; t = time.perf_counter(); "
        "from evalsvc.scoring import checks; checks.parse('check:json_valid'); "
        "print(time.perf_counter() - t)"
    )

    def fresh(snippet: str) -> float:
        runs = [
            float(subprocess.check_output([sys.executable, "-c", snippet], text=True))
            for _ in range(9)
        ]
        return min(runs) * 1000

    with_schema, without = fresh(code), fresh(base)
    print("## Cold import (fresh interpreter, min of 9)\n")
    print(f"- checks without a schema metric: {without:.0f} ms")
    print(
        f"- the first schema metric (jsonschema imported, a validator compiled): "
        f"{with_schema:.0f} ms, +{with_schema - without:.0f} ms"
    )
    reference_cost()


def reference_cost() -> None:
    """What the first chrF of a process pays: sacrebleu's import, and the packages it brings."""
    timed = (
        "import time; t = time.perf_counter(); "
        "from evalsvc.scoring import reference; reference.{metric}('a', 'b'); "
        "print(time.perf_counter() - t)"
    )
    brought = (
        "import sys; from evalsvc.scoring import reference; "
        "before = {name.split('.')[0] for name in sys.modules}; reference.chrf('a', 'b'); "
        "print(' '.join(sorted({name.split('.')[0] for name in sys.modules} - before)))"
    )

    def fresh(snippet: str) -> float:
        runs = [
            float(subprocess.check_output([sys.executable, "-c", snippet], text=True))
            for _ in range(9)
        ]
        return min(runs) * 1000

    without, with_chrf = fresh(timed.format(metric="token_f1")), fresh(timed.format(metric="chrf"))
    modules = subprocess.check_output([sys.executable, "-c", brought], text=True).split()
    print(f"- reference metrics, the first token_f1: {without:.0f} ms")
    print(
        f"- the first chrF (sacrebleu imported): {with_chrf:.0f} ms, "
        f"+{with_chrf - without:.0f} ms; it imports {', '.join(modules)}\n"
    )


def installed_size() -> None:
    """Per engine, the bytes its packages take in the dev venv and, after `make build`, in the
    arm64 layer, against the whole layer."""
    import importlib.util

    spec = importlib.util.find_spec("jsonschema")
    assert spec is not None and spec.origin is not None
    places = {"dev venv": Path(spec.origin).parents[1]}
    layer = ROOT / ".aws-sam" / "build" / "CommonLayer" / "python"
    if layer.is_dir():
        places["arm64 layer (make build)"] = layer
    print("## Installed size\n")
    for place, site in places.items():
        sizes = {}
        for engine, names in ENGINE_PACKAGES.items():
            sizes[engine] = sum(
                _size(path) for path in site.iterdir() if path.name.split("-")[0].lower() in names
            )
        whole = f", of {_size(site) / 2**20:.1f} MiB in all" if place.startswith("arm64") else ""
        shown = ", ".join(f"{engine} {size / 2**20:.2f} MiB" for engine, size in sizes.items())
        print(f"- {place}: {shown}{whole}")
    print()


def _size(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--only",
        choices=["reference", "trajectory"],
        help="only the reference metrics' sections, or only the tool-call checks'",
    )
    options = parser.parse_args()
    if options.only == "trajectory":
        trajectory_worst(options.repeat)
        return
    if options.only == "reference":
        reference_worst(options.repeat)
        lcs_against_the_table()
        print("## Cold import (fresh interpreter, min of 9)\n")
        reference_cost()
        installed_size()
        return
    worst_times(options.repeat)
    gil_released()
    reference_worst(options.repeat)
    lcs_against_the_table()
    trajectory_worst(options.repeat)
    import_cost()
    installed_size()


if __name__ == "__main__":
    main()
