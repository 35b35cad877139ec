"""Worst time of each check on hostile content, and what the safe engines cost.

1. Every definition of tests/pathological.py against every pathological output (each within
   the 100,000-character limit): the worst time per definition and the output that caused it.
2. RE2 releases the GIL: a Python thread counting while a slow RE2 search runs, against the
   same thread counting alone for as long.
3. The cold import of jsonschema (what the first schema metric of a process pays), and the
   installed size of the packages the two engines add to the layer.

    .venv/bin/python bench/checks.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # for tests.pathological

from evalsvc.scoring.checks import parse  # noqa: E402
from evalsvc.scoring.patterns import compile_pattern  # noqa: E402

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
        alone = _count_while(lambda took=took: time.sleep(took))
        shares.append(during / alone)
        seconds.append(took)
    shares.sort()
    print("## RE2 and the GIL\n")
    print(
        f"a thread counting during an RE2 search of {statistics.median(seconds) * 1000:.0f} ms "
        f"kept {shares[len(shares) // 2]:.0%} of its speed (median of {repeat}; "
        f"{shares[0]:.0%}-{shares[-1]:.0%})\n"
    )


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
        f"{with_schema:.0f} ms, +{with_schema - without:.0f} ms\n"
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
    options = parser.parse_args()
    worst_times(options.repeat)
    gil_released()
    import_cost()
    installed_size()


if __name__ == "__main__":
    main()
