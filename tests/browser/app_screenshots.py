"""The review app's screenshots (the README shows the review page first), drawn from the real
app against the local server with a fake judge and a small help-desk dataset:

    make screenshots    # .venv/bin/python -m tests.browser.app_screenshots docs/screenshots

Writes review-app-review.png (a pair after its vote: the judge's score and reason revealed, the
agreement so far), review-app-evaluation.png and review-app-compare.png. Exit status 1 when a
page tried to leave the origin, logged an error, or axe-core found a serious or critical
violation on it (the PNGs are written either way)."""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from tests.browser import axe
from tests.browser.app_data import served
from tests.browser.chromium import Browser, Loaded, require_chromium
from tests.e2e.conftest import DEV_KEY

QUESTION = "Does the answer solve the customer's problem?"
INPUTS = [
    "My router keeps dropping the Wi-Fi every evening. What can I do?",
    "How do I change the email address on my account?",
    "I was charged twice for the same order.",
    "Can I return an item after 30 days?",
    "The app crashes when I open the camera.",
    "Where do I find my invoice?",
    "How do I reset my password without my old phone?",
    "Is there a student discount?",
]
BASELINE = [
    "Restart the router, then move it away from the microwave; if it still drops, update its "
    "firmware from Settings > System. Please tell us if that does not help.",
    "Go to Settings > Account > Email, enter the new address and confirm it from your inbox.",
    "Sorry about that! Please send us the order number and we will refund the second charge.",
    "Returns are accepted for 30 days. After that we can offer store credit, please ask.",
    "Please update the app; version 4.2 fixes a camera crash on some phones.",
    "Invoices are under Orders > the order > Download invoice.",
    "Use 'Forgot password' and choose email verification instead of SMS.",
    "Yes: 15 % off with a verified student email, please see the Students page.",
]
CANDIDATE = [
    "Turn it off and on again.",
    BASELINE[1],
    "We will look into it.",
    BASELINE[3],
    "Reinstall the app.",
    BASELINE[5],
    "Try again later.",
    "No.",
]


def judge(request: dict[str, object]) -> tuple[int, str]:
    """A fake judge that prefers complete, specific answers: the score grows with the length."""
    messages = request["messages"]
    assert isinstance(messages, list)
    user = str(messages[-1]["content"])
    found = re.search(r"<output>\n(.*?)\n</output>", user, re.DOTALL)
    output = found.group(1) if found else ""
    score = 5 if len(output) > 80 else 4 if len(output) > 50 else 2 if len(output) > 20 else 1
    reasons = {
        5: "Gives concrete steps the customer can follow and offers further help.",
        4: "Answers the question directly, though it could say what to do next.",
        2: "Too vague to act on: it names no step the customer could take.",
        1: "Does not address the customer's problem.",
    }
    return 200, json.dumps({"reason": reasons[score], "score": score})


def settle(page: Loaded, text: str) -> None:
    page.run(lambda p: p.get_by_text(text).first.wait_for(timeout=20_000))
    page.settle()


def check(page: Loaded, where: str, problems: list[str]) -> None:
    problems.extend(f"{where}: {line}" for line in page.problems())
    problems.extend(f"{where}: axe {line}" for line in axe.blocking(page))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.browser.app_screenshots")
    parser.add_argument("directory", type=Path, help="where the PNGs go (docs/screenshots)")
    parser.add_argument("--width", type=int, default=1100)
    parser.add_argument("--height", type=int, default=900)
    args = parser.parse_args(argv)
    args.directory.mkdir(parents=True, exist_ok=True)
    problems: list[str] = []
    with tempfile.TemporaryDirectory() as data, served(Path(data), judge) as run:
        metrics_id = run.api(
            "POST", "/specify_questions", {"metrics": [QUESTION, "check:max_words:40"]}
        )["metrics_id"]
        ids = []
        for name, outputs in (("help-desk-v1", BASELINE), ("help-desk-v2", CANDIDATE)):
            pairs = [
                {"id": f"t{k + 1:03d}", "input": i, "output": o}
                for k, (i, o) in enumerate(zip(INPUTS, outputs, strict=True))
            ]
            ids.append(run.api.evaluate(name, pairs, metrics_id))
            time.sleep(0.01)  # distinct creation times: the list is newest first
        with Browser(require_chromium()) as browser:
            page = browser.open(run.app_url, width=args.width, height=args.height)
            settle(page, "API key")
            page.run(lambda p: p.get_by_label("API key").fill(DEV_KEY))
            page.run(lambda p: p.keyboard.press("Enter"))
            settle(page, ids[0])

            page.evaluate(f"location.hash = '#/evaluation/{ids[0]}'")
            settle(page, "human agreement")
            check(page, "evaluation", problems)
            page.screenshot(args.directory / "review-app-evaluation.png", full_page=False)

            page.evaluate(f"location.hash = '#/review/{ids[0]}/0'")
            page.run(
                lambda p: p.wait_for_function(
                    "() => document.querySelector('[aria-label=Output] pre')", timeout=20_000
                )
            )
            for key in ("+", "n", "+", "n", "-"):
                page.run(lambda p, key=key: p.keyboard.press(key))
                time.sleep(0.3)
            settle(page, "Votes")
            page.evaluate("document.activeElement?.blur()")
            check(page, "review", problems)
            page.screenshot(args.directory / "review-app-review.png", full_page=False)

            page.evaluate(f"location.hash = '#/compare?baseline={ids[0]}&candidate={ids[1]}'")
            settle(page, "Regressions")
            check(page, "compare", problems)
            page.screenshot(args.directory / "review-app-compare.png", full_page=False)
            page.close()
    for line in problems:
        print(line, file=sys.stderr)
    for name in ("review", "evaluation", "compare"):
        print(args.directory / f"review-app-{name}.png")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
