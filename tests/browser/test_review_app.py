"""The review app (E9) in Debian's Chromium, against the local server (`evalsvc serve`) with a
fake judge: sign in, the evaluations, one evaluation, blind keyboard review, compare, sign out,
hostile text, failures; axe-core on every page; no request leaving the origin."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import requests
from evalsvc.core.controls import neutralised
from playwright.async_api import Page, Route

from tests.browser import axe
from tests.browser.app_data import Api, judge_note, judge_score, note_judge, served
from tests.browser.chromium import Browser, Loaded
from tests.e2e.conftest import DEV_KEY
from tests.trajectory_cases import CASES

HOSTILE = [
    "<script>window.__ran = 'script'</script>",
    "<img src=x onerror=\"window.__ran = 'img'\">",
    "<svg onload=\"window.__ran = 'svg'\"><circle r=9 /></svg>",
]
QUESTION = "Is the answer helpful? <b onmouseover=\"window.__ran = 'metric'\">bold</b>"
CHECK = "check:contains:please"
PAIRS = 14


# E10: pairs with a reference and contexts, hostile too; one long context (collapsed).
REFERENCE = "It opened in 1932.</details></pre><script>window.__ran = 'reference'</script>"
LONG_CONTEXT = (
    "The bridge took eight years to build. " * 20
    + "</pre></details><img src=x onerror=\"window.__ran = 'context'\">"
)
RAG_PAIRS = [
    {
        "id": "r0",
        "input": "When did the bridge open?",
        "output": "Answer r0: in 1932, please.",
        "reference": REFERENCE,
        "contexts": [
            "The bridge opened in <b>1932</b>.</details>",
            LONG_CONTEXT,
            "<script>window.__ran = 'short'</script>",
        ],
    },
    {"id": "r1", "input": "And the tunnel?", "output": "Answer r1: please ask again."},
    {
        "id": "r2",
        "input": "And the ferry?",
        "output": "Answer r2: nothing, please.",
        "contexts": [],
    },
]


# E11: a pair with a hostile conversation and calls that part at call 2; pairs whose calls are
# the shared cases of the first difference (tests/trajectory_cases.py), as the service returns
# them; and one with calls made and none expected.
CONVERSATION = [
    {
        "role": "system",
        "content": "You answer about bridges. <script>window.__ran = 'system'</script>",
    },
    {
        "role": "user",
        "content": "</details><summary>not a summary</summary>"
        "<img src=x onerror=\"window.__ran = 'message'\">",
    },
    {"role": "assistant", "content": "\u202eevil\u2028 and a second line"},
    {"role": "tool", "content": '{"found": "</pre></code></td>"}'},
    {"role": "user", "content": "Which one opened first?"},
]
HOSTILE_CALLS = [
    {"name": "search", "arguments": {"q": "bridges", "limit": 3}},
    {
        "name": "</td></tr></table><script>window.__ran = 'name'</script>",
        "arguments": {
            "html": "<img src=x onerror=\"window.__ran = 'arguments'\">",
            "\u202e": "\u2028",
        },
    },
]
EXPECTED_CALLS = [
    {"name": "search", "arguments": {"limit": 3.0, "q": "bridges"}},
    {"name": "open", "arguments": {"id": 1}},
]
SHOWN_CASES = [
    c
    for c in CASES
    if c.name
    in {
        "equal lists",
        "a call differs",
        "made shorter",
        "expected shorter",
        "1 and 1.0",
        "true and 1",
        "integers beyond a double, one apart",
        "an integer and the float equal to it",
    }
]
AGENT_PAIRS: list[dict[str, Any]] = [
    {
        "id": "a-apart",
        "input": "And the \u202esecond?",
        "output": "Agent a-apart: please see.",
        "messages": CONVERSATION,
        "tool_calls": HOSTILE_CALLS,
        "expected_tool_calls": EXPECTED_CALLS,
    },
    {
        "id": "a-made",
        "input": "Look it up.",
        "output": "Agent a-made: please wait.",
        "tool_calls": HOSTILE_CALLS[:1],
    },
    *(
        {
            "id": f"case-{k}",
            "input": case.name,
            "output": f"Agent case {k}: please.",
            "messages": CONVERSATION[-1:],
            "tool_calls": json.loads(case.made),
            "expected_tool_calls": json.loads(case.expected),
        }
        for k, case in enumerate(SHOWN_CASES)
    ),
]


ROUGE = "check:rouge_l"


def hostile_note(output: str) -> str:
    """The fake judge's reason: unique to the output, and hostile too."""
    return judge_note(output) + " <img src=x onerror=\"window.__ran = 'reason'\">"


def outputs(version: str) -> list[str]:
    texts = [f"Answer {k}: please restart the router ({version})." for k in range(PAIRS)]
    texts[3], texts[5], texts[8] = HOSTILE
    if version == "candidate":  # worse on the check for eight pairs: a significant regression
        for k in (0, 1, 2, 4, 6, 7, 9, 10):
            texts[k] = f"Answer {k}: restart it."
    return texts


def scores(version: str) -> list[tuple[int, int]]:
    """Each pair's (judge, check) scores, as the service will give them."""
    return [(judge_score(o), 5 if "please" in o.lower() else 1) for o in outputs(version)]


@pytest.fixture(scope="module")
def app_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    with served(tmp_path_factory.mktemp("review-app"), note_judge(hostile_note)) as run:
        metrics_id = run.api("POST", "/specify_questions", {"metrics": [QUESTION, CHECK]})[
            "metrics_id"
        ]
        ids = {"rag": run.api.evaluate("help-rag", RAG_PAIRS, metrics_id)}
        ids["agent"] = run.api.evaluate("help-agent", AGENT_PAIRS, metrics_id)
        # E10: a reference check over pairs none of which has a reference (not applicable).
        reference_metrics = run.api("POST", "/specify_questions", {"metrics": [ROUGE, CHECK]})
        unreferenced = [pair for pair in RAG_PAIRS if "reference" not in pair]
        ids["unreferenced"] = run.api.evaluate(
            "help-unreferenced", unreferenced, reference_metrics["metrics_id"]
        )
        # "quiet" is never voted on (the pages that say there are no votes yet); then the
        # baseline (the blind review votes on its first metric) and the candidate.
        for version in ("quiet", "baseline", "candidate"):
            data = [
                {"id": f"p{k:02d}", "input": f"How do I fix the Wi-Fi? <i>{k}</i>", "output": text}
                for k, text in enumerate(outputs(version))
            ]
            ids[version] = run.api.evaluate(f"help-{version}", data, metrics_id)
        yield {"url": run.app_url, "api": run.server.base_url, **ids}


class App:
    """The app in a page, driven as a person would, with sync calls."""

    def __init__(self, page: Loaded) -> None:
        self.page = page

    def run(self, action: Callable[[Page], Any]) -> Any:
        return self.page.run(action)

    def press(self, key: str) -> None:
        self.run(lambda page: page.keyboard.press(key))

    def type(self, text: str) -> None:
        self.run(lambda page: page.keyboard.type(text))

    def wait_for(self, text: str, timeout: float = 15_000) -> None:
        self.run(lambda page: page.get_by_text(text).first.wait_for(timeout=timeout))

    def wait_until(self, expression: str, arg: Any = None, timeout: float = 15_000) -> None:
        """Wait until a JS expression, or a function of `arg`, is truthy. An expression is
        wrapped in a function: Playwright would evaluate a bare one with eval, which the
        app's CSP refuses."""
        function = expression if "=>" in expression else f"() => ({expression})"
        self.run(lambda page: page.wait_for_function(function, arg=arg, timeout=timeout))

    def wait_for_pair(self) -> None:
        """Until a pair is on the review page (its Output region drawn)."""
        self.wait_until("document.querySelector('[aria-label=Output] pre, [aria-label=Output] p')")

    def text(self, selector: str = "main") -> str:
        return self.page.inner_text(selector)

    def dom_text(self) -> str:
        """Every text in the document, hidden ones included."""
        return str(self.page.evaluate("document.documentElement.textContent"))

    def focused(self) -> str:
        return str(
            self.page.evaluate(
                "(() => { const e = document.activeElement; if (!e) return '';"
                " return (e.getAttribute('aria-label') || e.textContent || e.tagName).trim(); })()"
            )
        )

    def tab_to(self, name: str, limit: int = 60) -> None:
        """Press Tab until the focused element's name starts with `name`."""
        for _ in range(limit):
            self.press("Tab")
            if self.focused().startswith(name):
                return
        raise AssertionError(f"Tab never reached {name!r}; last focus: {self.focused()!r}")

    def sign_in(self, key: str = DEV_KEY) -> None:
        self.wait_for("API key")
        self.run(lambda page: page.get_by_label("API key").focus())
        self.type(key)
        self.press("Enter")

    def axe_clean(self, where: str) -> None:
        found = axe.blocking(self.page)
        assert not found, f"axe on {where}:\n  " + "\n  ".join(found)

    def nothing_ran(self) -> None:
        assert self.page.evaluate("window.__ran === undefined"), self.page.evaluate("window.__ran")
        assert self.page.dialogs == []

    def api_requests(self, method: str, path_part: str) -> list[Any]:
        return [
            request.json()
            for request in self.page.origin_requests
            if request.method == method and path_part in request.url
        ]

    def own_origin_only(self, allowed_console: tuple[str, ...] = ()) -> None:
        """No request tried to leave the origin; no CSP violation, script error or dialog."""
        assert self.page.requests == [], self.page.requests
        assert self.page.csp_violations == []
        assert self.page.page_errors == []
        errors = [
            str(m)
            for m in self.page.console_errors
            if not any(a in m.text for a in allowed_console)
        ]
        assert errors == []


@pytest.fixture
def app(browser: Browser, app_server: dict[str, str]) -> Iterator[App]:
    page = browser.open(app_server["url"])
    yield App(page)
    page.close()


def test_sign_in_and_open_an_evaluation_from_the_list(app: App, app_server: dict[str, str]) -> None:
    # The sign-in page, then a wrong key: a message, not a blank page
    app.wait_for("API key")
    app.axe_clean("the sign-in page")
    app.sign_in("evk_not_a_key_at_all_0000000000000000000000")
    app.wait_for("was not accepted")
    app.axe_clean("the sign-in page with its error")

    # The right key: the list, newest first, one link per evaluation naming its id
    app.run(lambda page: page.get_by_label("API key").fill(""))
    app.sign_in()
    app.wait_for(app_server["candidate"])
    names = app.page.evaluate(
        "[...document.querySelectorAll('main a[href^=\"#/evaluation/\"]')]"
        ".map(a => a.getAttribute('aria-label'))"
    )
    assert names[:3] == [
        f"Evaluation {app_server['candidate']}",
        f"Evaluation {app_server['baseline']}",
        f"Evaluation {app_server['quiet']}",
    ]
    app.axe_clean("the evaluations list")

    # The evaluation: each metric's mean, interval, histogram, agreement and a Review button
    app.run(lambda page: page.get_by_role("link", name=app_server["quiet"]).click())
    app.wait_for("human agreement")
    text = app.text()
    assert "Mean" in text and "95% interval" in text
    assert text.count("No votes yet") == 2
    assert app.page.count("svg.chart[role=img]") == 4  # an interval and a histogram per metric
    assert app.page.count("main button") == 2
    assert all(t.startswith("Review") for t in app.page.texts("main button"))
    assert QUESTION in text  # the hostile metric, as text
    app.axe_clean("an evaluation")
    app.nothing_ran()
    app.own_origin_only(allowed_console=("status of 401",))


def test_blind_keyboard_review_of_ten_pairs(app: App, app_server: dict[str, str]) -> None:
    evaluation = app_server["baseline"]
    app.sign_in()
    app.wait_for("Evaluations")
    app.run(lambda page: page.evaluate(f"location.hash = '#/evaluation/{evaluation}'"))
    app.wait_for("human agreement")
    # Keyboard only from here: Tab to the first metric's Review button, Enter
    app.tab_to("Review Metric 1")
    app.press("Enter")
    app.wait_for_pair()
    app.axe_clean("the review page, before a vote")

    texts = outputs("baseline")
    seen: list[str] = []
    for turn in range(10):
        app.wait_until("document.querySelector('[aria-label=Output] pre, [aria-label=Output] p')")
        output = app.page.texts("[aria-label=Output] pre")[0]
        note = judge_note(output).split(" <")[0]
        # Blind: neither the judge's reason nor its score is anywhere in the document
        dom = app.dom_text()
        assert note not in dom
        assert "Score " not in app.text("[aria-label=Judge]")
        assert "Hidden until you vote" in app.text("[aria-label=Judge]")
        app.press("+" if "please" in output else "-")
        app.wait_for(note)
        assert f"Score {judge_score(output)} of 5" in app.text("[aria-label=Judge]")
        app.wait_until(
            "(n) => (document.querySelector('[aria-label=Agreement]')?.innerText || '')"
            ".includes('Votes\\n' + n)",
            str(turn + 1),
        )
        if turn == 0:
            app.axe_clean("the review page, after a vote")
        seen.append(output)
        app.press("n")
    assert sorted(seen) == sorted(set(seen)) and set(seen) <= set(texts)

    # Every vote reached the API as an audit vote, and agreement counts them
    votes = app.api_requests("PUT", "/vote_eval_pair/")
    assert len(votes) == 10
    assert {vote["source"] for vote in votes} == {"audit"}
    assert {vote["metric_idx"] for vote in votes} == {0}
    agreement = Api(app_server["api"])("GET", f"/evaluation/{evaluation}/agreement?source=audit")
    assert agreement["metrics"][0]["votes"] >= 10
    app.nothing_ran()
    app.own_origin_only()


def test_the_lowest_scores_queue_shows_the_judge_and_votes_for_review(
    app: App, app_server: dict[str, str]
) -> None:
    evaluation = app_server["candidate"]
    app.sign_in()
    app.wait_for("Evaluations")
    app.run(lambda page: page.evaluate(f"location.hash = '#/review/{evaluation}/1'"))
    app.wait_for_pair()
    app.run(lambda page: page.get_by_role("button", name="Lowest scores").click())
    app.wait_for("Lowest scores: the pairs")
    app.wait_until("document.querySelector('[aria-label=Judge] .big')")
    assert "Score 1 of 5" in app.text("[aria-label=Judge]")  # shown before any vote
    app.press("0")
    app.wait_until("document.querySelector('button.vote-0[aria-pressed=true]')")
    assert [v["source"] for v in app.api_requests("PUT", "/vote_eval_pair/")] == ["review"]
    app.axe_clean("the lowest-scores queue")
    app.own_origin_only()


def test_the_audit_queue_takes_an_overlap_with_other_reviewers_by_keyboard(
    app: App, app_server: dict[str, str]
) -> None:
    # The baseline's second metric, which no other test votes on
    evaluation = app_server["baseline"]
    app.sign_in()
    app.wait_for("Evaluations")
    app.run(lambda page: page.evaluate(f"location.hash = '#/review/{evaluation}/1'"))
    app.wait_for_pair()

    def samples() -> list[str]:
        return [
            r.url
            for r in app.page.origin_requests
            if r.method == "GET" and "/audit_sample" in r.url
        ]

    # The audit queue has a labelled control, at 0 % at first: no overlap asked for
    assert app.page.evaluate("document.getElementById('overlap').labels[0].textContent") == (
        "Overlap with other reviewers"
    )
    options = app.page.texts("#overlap option")
    assert options == ["0 %", "10 %", "20 %", "50 %"]
    assert "overlap=" not in samples()[-1]
    app.axe_clean("the audit queue with its overlap control")

    # Keyboard only: Tab to it, two arrows down (20 %): the queue reloads with overlap=0.2 and
    # the focus stays on the control
    for _ in range(40):
        app.press("Tab")
        if app.page.evaluate("document.activeElement.id") == "overlap":
            break
    else:
        raise AssertionError("Tab never reached the overlap control")
    app.press("ArrowDown")
    app.press("ArrowDown")
    app.wait_until("(location.hash || '').includes('overlap=0.2')")
    app.wait_for_pair()
    assert any("overlap=0.2" in url for url in samples())
    assert app.page.evaluate("document.activeElement.id") == "overlap"
    app.axe_clean("the audit queue with 20 % overlap")

    # The control's keys are its own: a + on it is no vote; one from the vote buttons is
    app.press("Shift+Equal")
    assert app.api_requests("PUT", "/vote_eval_pair/") == []
    app.tab_to("Meets (+1)")
    app.press("+")
    app.wait_until("document.querySelector('button.vote-1[aria-pressed=true]')")
    # The agreement beside the pair says how far people agree with each other
    app.wait_until(
        "(document.querySelector('[aria-label=Agreement]')?.innerText || '')"
        ".includes('People with each other')"
    )
    said = app.text("[aria-label=Agreement]")
    assert "needs two pairs voted on by two people or more" in said and "1 person" in said
    app.axe_clean("the audit queue after a vote, with people's agreement")

    # The choice is in the address: opened again, the control says 20 % and asks for it
    app.run(lambda page: page.reload())
    app.wait_for_pair()
    assert app.page.evaluate("document.getElementById('overlap').value") == "0.2"
    # The lowest-scores queue has no overlap control
    app.run(lambda page: page.get_by_role("button", name="Lowest scores").click())
    app.wait_for("Lowest scores: the pairs")
    assert app.page.count("#overlap") == 0
    app.nothing_ran()
    app.own_origin_only()


def test_hostile_outputs_run_nothing(app: App, app_server: dict[str, str]) -> None:
    evaluation = app_server["candidate"]
    app.sign_in()
    app.wait_for("Evaluations")
    app.run(lambda page: page.evaluate(f"location.hash = '#/review/{evaluation}/0'"))
    app.wait_for_pair()
    shown = []
    for _ in range(PAIRS):
        shown.append(app.page.texts("[aria-label=Output] pre")[0])
        app.press("-")
        app.wait_until("document.querySelector('button.vote--1[aria-pressed=true]')")
        app.press("n")
        app.wait_until(
            "(n) => document.querySelector('#review-progress')?.textContent.includes('Pair ' + n)"
            " || document.querySelector('.empty')",
            str(len(shown) + 1),
        )
    # Every hostile output was on screen, as the text it is; nothing ran, loaded or popped up
    for hostile in HOSTILE:
        assert hostile in shown
    assert app.page.count("main img, main script, main svg:not(.chart), main b, main i") == 0
    app.nothing_ran()
    app.own_origin_only()


def test_a_pairs_reference_and_contexts_are_shown_as_text_long_ones_collapsed(
    app: App, app_server: dict[str, str]
) -> None:
    app.sign_in()
    app.wait_for("Evaluations")
    app.run(lambda page: page.evaluate(f"location.hash = '#/review/{app_server['rag']}/0'"))
    app.wait_for_pair()
    by_output = {pair["output"]: pair for pair in RAG_PAIRS}
    for turn in range(len(RAG_PAIRS)):
        app.wait_until("document.querySelector('[aria-label=Output] pre')")
        pair = by_output[app.page.texts("[aria-label=Output] pre")[0]]
        contexts = pair.get("contexts")
        # The reference as the text it is, only for a pair that has one
        shown = app.page.evaluate(
            "[...document.querySelectorAll('[aria-label=Reference] pre')].map(e => e.textContent)"
        )
        assert shown == ([pair["reference"]] if "reference" in pair else [])
        # Each context in its own disclosure, in rank order, as text: the short ones open, the
        # long one closed; none at all for a pair without them, a note for an empty list
        drawn = app.page.evaluate(
            "[...document.querySelectorAll('[aria-label=Contexts] details')].map(d => "
            "({open: d.open, text: d.querySelector('pre').textContent,"
            " summary: d.querySelector('summary').textContent}))"
        )
        assert app.page.count("[aria-label=Contexts]") == (contexts is not None)
        assert [d["text"] for d in drawn] == (contexts or [])
        assert [d["open"] for d in drawn] == [len(c) <= 300 for c in contexts or []]
        if contexts == []:
            assert "retrieved nothing" in app.text("[aria-label=Contexts]")
        if contexts:
            assert drawn[1]["summary"] == f"Context 2 of 3 · {len(LONG_CONTEXT):,} characters"
            app.axe_clean("the review page with a reference and contexts")
            # Keyboard: Tab to the closed context's summary, Enter opens it
            app.tab_to("Context 2 of 3")
            app.press("Enter")
            app.wait_until("document.querySelectorAll('[aria-label=Contexts] details')[1].open")
            assert LONG_CONTEXT.split(" <")[0][:40] in app.text("[aria-label=Contexts]")
            app.axe_clean("the review page with a long context opened")
        if turn + 1 < len(RAG_PAIRS):
            app.press("n")
            app.wait_until(
                "(n) => document.querySelector('#review-progress')?.textContent"
                ".includes('Pair ' + n)",
                str(turn + 2),
            )
    assert app.page.count("main img, main script, main b") == 0
    app.nothing_ran()
    app.own_origin_only()


def test_a_metric_no_pair_applies_to_says_so_instead_of_figures(
    app: App, app_server: dict[str, str]
) -> None:
    app.sign_in()
    app.wait_for("Evaluations")
    results_id = app_server["unreferenced"]
    app.run(lambda page: page.evaluate(f"location.hash = '#/evaluation/{results_id}'"))
    app.wait_for("No pair has what this metric needs")
    text = app.text()
    assert "2 pairs not applicable" in text
    # The check every pair meets keeps its mean and interval; the reference check draws none.
    assert app.page.count("svg.chart.interval") == 1
    app.axe_clean("an evaluation with a metric no pair applies to")
    app.nothing_ran()


# The review page's table of calls: its caption, and each row's number, names and labels.
CALL_TABLE = """(() => {
  const table = document.querySelector('[aria-label="Tool calls"] table');
  if (!table) return null;
  return {
    caption: table.querySelector('caption').textContent,
    rows: [...table.querySelectorAll('tbody tr')].map(r => ({
      number: r.querySelector('th')?.textContent ?? null,
      marked: r.classList.contains('first-difference'),
      labels: [...r.querySelectorAll('td')].map(td =>
        td.querySelector('.diff-mark')?.textContent ?? null),
      names: [...r.querySelectorAll('td')].map(td => td.querySelector('code')?.textContent ?? null),
      arguments: [...r.querySelectorAll('td')].map(td =>
        td.querySelector('pre')?.textContent ?? null),
    })),
  };
})()"""
MARK = "▶ First difference"


def test_a_pairs_conversation_is_collapsed_and_its_calls_mark_the_first_difference(
    app: App, app_server: dict[str, str]
) -> None:
    app.sign_in()
    app.wait_for("Evaluations")
    app.run(lambda page: page.evaluate(f"location.hash = '#/review/{app_server['agent']}/0'"))
    app.wait_for_pair()
    by_output = {pair["output"]: pair for pair in AGENT_PAIRS}
    firsts = {f"case-{k}": case.first for k, case in enumerate(SHOWN_CASES)}
    seen = []
    for turn in range(len(AGENT_PAIRS)):
        app.wait_until("document.querySelector('[aria-label=Output] pre')")
        pair = by_output[app.page.texts("[aria-label=Output] pre")[0]]
        seen.append(pair["id"])
        table = app.page.evaluate(CALL_TABLE)
        marked = [(r["number"], r["labels"]) for r in table["rows"] if r["marked"]]
        if pair["id"] == "a-apart":
            # Call 2 marked in both columns by a label; the hostile name and arguments as text
            assert table["caption"] == "Tool calls: 2 made, 2 expected. First difference at call 2."
            assert marked == [("2", [MARK, MARK])]
            assert table["rows"][1]["names"] == [HOSTILE_CALLS[1]["name"], "open"]
            # A bidirectional override shown as U+FFFD, never obeyed
            assert table["rows"][1]["arguments"][0] == json.dumps(
                HOSTILE_CALLS[1]["arguments"], ensure_ascii=False, separators=(",", ":")
            ).replace("\u202e", "\ufffd")
            # The conversation: three earlier messages closed, the last two open, with roles
            drawn = app.page.evaluate(
                "(() => { const c = document.querySelector('[aria-label=Conversation]'); return {"
                " details: [...c.querySelectorAll('details')].map(d => [d.open,"
                "  d.querySelector('summary').textContent]),"
                " roles: [...c.querySelectorAll('.role strong')].map(e => e.textContent),"
                " texts: [...c.querySelectorAll('pre')].map(e => e.textContent)}; })()"
            )
            assert drawn["details"] == [[False, "3 earlier messages"]]
            assert drawn["roles"] == [m["role"] for m in CONVERSATION]
            assert drawn["texts"] == [
                m["content"].replace("\u202e", "\ufffd") for m in CONVERSATION
            ]
            # The input too: an override in any text is shown, not obeyed
            assert app.page.texts("[aria-label=Input] pre") == ["And the \ufffdsecond?"]
            conversation = app.text("[aria-label=Conversation]")
            assert "Which one opened first?" in conversation
            assert "You answer about bridges." not in conversation
            app.axe_clean("the review page with a conversation and tool calls")
            # Keyboard: Tab to the summary, Enter opens the earlier messages
            app.tab_to("3 earlier messages")
            app.press("Enter")
            app.wait_until("document.querySelector('[aria-label=Conversation] details').open")
            assert "You answer about bridges." in app.text("[aria-label=Conversation]")
            app.axe_clean("the review page with the earlier messages open")
        elif pair["id"] == "a-made":
            assert table["caption"] == (
                "Tool calls: 1 made. No expected calls were given: nothing to compare with."
            )
            assert marked == [] and [len(r["names"]) for r in table["rows"]] == [1]
            assert app.page.count("[aria-label=Conversation]") == 0
        else:
            # Each shared case marked where the layer's first_difference says
            first = firsts[pair["id"]]
            assert marked == ([] if first is None else [(str(first + 1), [MARK, MARK])])
            assert app.page.count("[aria-label=Conversation] details") == 0
            assert "Which one opened first?" in app.text("[aria-label=Conversation]")
        if turn + 1 < len(AGENT_PAIRS):
            app.press("n")
            app.wait_until(
                "(n) => document.querySelector('#review-progress')?.textContent"
                ".includes('Pair ' + n)",
                str(turn + 2),
            )
    assert sorted(seen) == sorted(pair["id"] for pair in AGENT_PAIRS)
    assert app.page.count("main img, main script, main b, main table:not(.calls)") == 0
    app.nothing_ran()
    app.own_origin_only()


def test_the_apps_first_difference_and_shown_text_are_the_layers(
    app: App, app_server: dict[str, str]
) -> None:
    app.sign_in()
    app.wait_for("Evaluations")
    found = app.page.evaluate(
        """async (cases) => {
          const main = document.querySelector('script[type=module]').src;
          const m = await import(main.replace(/main\\.js$/, 'conversation.js'));
          return cases.map(([made, expected]) => m.firstDifference(
            JSON.parse(made, m.exactNumbers), JSON.parse(expected, m.exactNumbers)));
        }""",
        [[c.made, c.expected] for c in CASES],
    )
    assert dict(zip([c.name for c in CASES], found, strict=True)) == {
        c.name: c.first for c in CASES
    }
    # What the app shows of a message, a name or arguments is what the report pages show
    every = "".join(chr(c) for c in range(0x2100)) + "\u202e\u2066\u2069\u2028\u2029\ufeff"
    shown = app.page.evaluate(
        """async ([text]) => {
          const main = document.querySelector('script[type=module]').src;
          const m = await import(main.replace(/main\\.js$/, 'conversation.js'));
          return [m.shown(text), m.shown('a\\ud800b\\udc00c\\ud83d\\ude00')];
        }""",
        [every],
    )
    assert shown == [neutralised(every), "a\ufffdb\ufffdc\U0001f600"]
    app.own_origin_only()


def test_compare_two_runs(app: App, app_server: dict[str, str]) -> None:
    app.sign_in()
    app.wait_for("Evaluations")
    app.run(lambda page: page.get_by_role("link", name="Compare").click())
    app.wait_for("Baseline")
    app.run(lambda page: page.get_by_label("Baseline").select_option(app_server["baseline"]))
    app.run(lambda page: page.get_by_label("Candidate").select_option(app_server["candidate"]))
    app.run(lambda page: page.get_by_role("button", name="Compare").click())
    regressed = [
        (b[m], c[m])
        for b, c in zip(scores("baseline"), scores("candidate"), strict=True)
        for m in range(2)
        if c[m] - b[m] <= -1
    ]
    app.wait_for(f"Regressions ({len(regressed)})")
    assert "Regressed" in app.text()  # the check's verdict: eight pairs lost "please"
    # Side by side: each regression shows the baseline's and the candidate's score and reason
    sides = app.page.texts("section.changes:first-of-type .side-label")
    shown = list(zip(sides[0::2], sides[1::2], strict=True))
    assert sorted(shown) == sorted(
        (f"Baseline: {b} of 5", f"Candidate: {c} of 5") for b, c in regressed
    )
    assert len(app.page.texts("section.changes:first-of-type .side .reason")) == 2 * len(regressed)
    app.axe_clean("the comparison")
    app.nothing_ran()
    app.own_origin_only()


def test_sign_out_leaves_no_key_anywhere(app: App, app_server: dict[str, str]) -> None:
    app.sign_in()
    app.wait_for(app_server["baseline"])
    assert app.page.evaluate("sessionStorage.getItem('evalsvc.apiKey')") == DEV_KEY
    app.tab_to("Sign out")
    app.press("Enter")
    app.wait_for("You are signed out")
    stored = app.page.evaluate(
        """async (key) => ({
            session: Object.keys(sessionStorage).map((k) => k + '=' + sessionStorage.getItem(k)),
            local: Object.keys(localStorage).map((k) => k + '=' + localStorage.getItem(k)),
            cookies: document.cookie,
            databases: (await indexedDB.databases()).map((d) => d.name),
            caches: await caches.keys(),
            dom: document.documentElement.outerHTML.includes(key),
        })""",
        DEV_KEY,
    )
    assert stored == {
        "session": [],
        "local": [],
        "cookies": "",
        "databases": [],
        "caches": [],
        "dom": False,
    }
    cookies = app.run(lambda page: page.context.cookies())
    assert cookies == []
    app.axe_clean("the sign-in page after signing out")
    # Reloading does not sign anyone back in
    app.run(lambda page: page.reload())
    app.wait_for("API key")
    assert app.page.evaluate("document.querySelector('#nav').hidden")


def test_a_rejected_key_and_a_network_failure_each_show_a_message(
    app: App, app_server: dict[str, str]
) -> None:
    app.sign_in()
    app.wait_for(app_server["baseline"])

    # The network fails: the page says so and offers to try again
    async def cut(page: Page) -> None:
        async def abort(route: Route) -> None:
            await route.abort("internetdisconnected")

        await page.route("**/v1/**", abort)

    app.run(cut)
    app.run(lambda page: page.evaluate("location.hash = '#/evaluations?dataset=help-baseline'"))
    app.wait_for("could not be reached")
    app.axe_clean("a network failure")
    app.run(lambda page: page.unroute("**/v1/**"))
    app.run(lambda page: page.get_by_role("button", name="Try again").click())
    app.wait_for(app_server["baseline"])

    # The key stops being accepted mid-session (revoked, expired): back to sign in, told why
    app.run(lambda page: page.evaluate("sessionStorage.setItem('evalsvc.apiKey', 'evk_revoked')"))
    app.run(lambda page: page.evaluate(f"location.hash = '#/evaluation/{app_server['baseline']}'"))
    app.wait_for("no longer accepted")
    assert app.page.evaluate("sessionStorage.length") == 0
    assert "API key" in app.text()
    app.axe_clean("a rejected key")
    app.own_origin_only(allowed_console=("status of 401", "ERR_INTERNET_DISCONNECTED"))


def test_a_running_evaluation_and_one_without_votes_say_what_to_do(
    app: App, app_server: dict[str, str]
) -> None:
    app.sign_in()
    app.wait_for(app_server["baseline"])
    evaluation = app_server["quiet"]

    # While it runs (the answer is what GET /evaluation/{id} says of a running one)
    async def running(page: Page) -> None:
        async def fulfil(route: Route) -> None:
            body = {
                "results_id": evaluation,
                "status": "running",
                "pairs_done": 3,
                "pairs_total": PAIRS,
            }
            await route.fulfill(status=200, json=body)

        await page.route(f"**/v1/evaluation/{evaluation}", fulfil)

    app.run(running)
    app.run(lambda page: page.evaluate(f"location.hash = '#/evaluation/{evaluation}'"))
    app.wait_for(f"3 of {PAIRS} pairs scored")
    app.axe_clean("a running evaluation")
    app.run(lambda page: page.unroute(f"**/v1/evaluation/{evaluation}"))
    # When it completes, the page shows it by itself
    app.wait_for("human agreement")
    assert "No votes yet" in app.text()
    app.own_origin_only()


def test_the_app_is_small_and_its_files_never_change_meaning(app_server: dict[str, str]) -> None:
    page = requests.get(app_server["url"], headers={"Accept-Encoding": "gzip"}, timeout=10)
    assert page.headers["Content-Security-Policy"] == (
        "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
        "img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    )
    assets = re.findall(r'(?:href|src)="(/app/[0-9a-f]{16}/[a-z_]+\.(?:js|css))"', page.text)
    origin = app_server["url"].removesuffix("/app/")
    total = int(page.raw.headers["Content-Length"])
    for asset in assets:
        answer = requests.get(origin + asset, headers={"Accept-Encoding": "gzip"}, timeout=10)
        assert answer.headers["Content-Encoding"] == "gzip"
        assert "immutable" in answer.headers["Cache-Control"]
        total += int(answer.raw.headers["Content-Length"])
    assert len(assets) == len(set(assets)) == 11
    assert total <= 300 * 1024
    static = Path(__file__).resolve().parents[2] / "functions" / "review_app" / "static"
    assert {a.split("/")[3] for a in assets} == {p.name for p in static.iterdir()} - {"index.html"}
