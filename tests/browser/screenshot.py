"""A full-page PNG of an HTML file, taken in the browser tests' headless Chromium with the network
cut off (e.g. for the report screenshots in docs/):

    .venv/bin/python -m tests.browser.screenshot report.html docs/report.png [--width 1200]

The README's screenshots (docs/screenshots/) are the top of the pages `bench/reports.py` writes:

    .venv/bin/python bench/reports.py --pairs 10000 --embedded --write /tmp/pages
    .venv/bin/python -m tests.browser.screenshot /tmp/pages/evaluation.html \
        docs/screenshots/evaluation-report.png --width 1100 --height 1700 --top --strict
    .venv/bin/python -m tests.browser.screenshot /tmp/pages/comparison.html \
        docs/screenshots/comparison-report.png --width 1100 --height 1500 --top --strict

Run from the repository root. The page is served alone: anything it links to (images, style
sheets, fonts) is cut off, as in the tests, and listed on stderr with every other problem
(console errors, script errors, dialogs); --strict turns those into exit status 1. The PNG is
written either way. --pdf also prints the page to a PDF beside the PNG (print media)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from tests.browser.chromium import Browser, ChromiumMissing, pdf_pages, require_chromium


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.browser.screenshot",
        description="Write a full-page PNG of an HTML file (headless Chromium, no network).",
    )
    parser.add_argument("html", type=Path, help="the HTML file")
    parser.add_argument("png", type=Path, help="the PNG to write")
    parser.add_argument("--width", type=int, default=1200, help="viewport width in CSS pixels")
    parser.add_argument(
        "--height", type=int, default=800, help="viewport height (the PNG is as tall as the page)"
    )
    parser.add_argument("--scale", type=float, default=1.0, help="device pixels per CSS pixel")
    parser.add_argument(
        "--print",
        dest="media",
        action="store_const",
        const="print",
        default="screen",
        help="emulate print media",
    )
    parser.add_argument(
        "--top", action="store_true", help="only the top of the page: the viewport, not all of it"
    )
    parser.add_argument("--pdf", action="store_true", help="also write PNG-path.pdf")
    parser.add_argument("--strict", action="store_true", help="exit 1 if the page had problems")
    options = parser.parse_args(argv)

    try:
        executable = require_chromium()
    except ChromiumMissing as missing:
        print(missing, file=sys.stderr)
        return 2
    html = options.html.read_bytes()
    with Browser(executable) as browser:
        loaded = browser.load(
            html,
            width=options.width,
            height=options.height,
            scale=options.scale,
            media=options.media,
        )
        loaded.screenshot(options.png, full_page=not options.top)
        print(f"wrote {options.png}")
        if options.pdf:
            pdf = options.png.with_suffix(".pdf")
            pages = pdf_pages(loaded.pdf(pdf))
            print(f"wrote {pdf} ({pages} page{'s' if pages != 1 else ''})")
        problems = loaded.problems()
    for problem in problems:
        print(f"problem: {problem}", file=sys.stderr)
    return 1 if problems and options.strict else 0


if __name__ == "__main__":
    sys.exit(main())
