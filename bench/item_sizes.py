"""The largest item of each kind the service stores when every field is at its limit in 4-byte
UTF-8: runs tests/integration/test_item_sizes.py (which writes a dataset, a metrics set, an
inline and a queued evaluation, a vote and a queued augmentation at the limits, then measures
every item as DynamoDB sizes it) and prints what it measured, against the 400 KB item limit.

    .venv/bin/python bench/item_sizes.py
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LIMIT = 400 * 1024


def main() -> None:
    with tempfile.TemporaryDirectory() as scratch:
        report = Path(scratch) / "sizes.json"
        test = "tests/integration/test_item_sizes.py::"
        test += "test_every_item_is_under_the_limit_with_every_field_at_its_limit"
        subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", test],
            cwd=ROOT,
            env={**os.environ, "ITEM_SIZES_REPORT": str(report)},
            check=True,
            capture_output=True,
        )
        rows = json.loads(report.read_text())
    print("largest item of each kind, every field at its limit in 4-byte UTF-8")
    print("| table | item (sort key prefix) | bytes | of the 400 KB limit |")
    print("|---|---|---|---|")
    for table, kind, size in rows:
        print(f"| {table} | {kind} | {size:,} | {size / LIMIT:.0%} |")


if __name__ == "__main__":
    main()
