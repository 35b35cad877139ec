"""The report pages as a browser sees them: made by the service's routes (moto, the fake judge)
from datasets, metrics, reasons and comments holding `<script>` and `<img onerror>`, then loaded
in headless Chromium with the network cut off. Each page renders with no console message, asks
for nothing, runs nothing, applies its stylesheet (the CSP lets it in by its hash), has its
charts with their titles, and prints."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from evalsvc.api.app import create_versioned_app
from evalsvc.api.routes import all_routers
from evalsvc.core.errors import Failure, ModelFailed
from evalsvc.logic import api_keys
from evalsvc.statistics.agreement import score_bin
from evalsvc.storage import results as results_store
from evalsvc.storage.writes import commit
from evalsvc_tools.local.inprocess import moto_in_process
from evalsvc_tools.local.tables import create_tables
from fastapi.testclient import TestClient

from tests.browser import axe
from tests.browser.chromium import Browser, pdf_pages
from tests.browser.report_checks import assert_loads_clean
from tests.conftest import point_service_at
from tests.fake_judge import FakeJudge
from tests.integration.test_reports import (
    IMG,
    OUTPUTS,
    QUESTION,
    SCRIPT,
    hostile_judge,
    start_running,
)
from tests.integration.test_usage import judge_env
from tests.pinned_versions import EXPIRED_DAY, expire

# E10: a reference and contexts, hostile, the second context long (shown closed).
RAG_REFERENCE = f"The answer.</details></div>{SCRIPT}"
RAG_CONTEXTS = [
    f"</details>{IMG}",
    "The long one. " * 40 + f"</summary></details>{SCRIPT}",
    "<details open><summary>not a summary</summary>",
]
# E11: a conversation and tool calls, hostile (markup, a bidirectional override, U+2028); the
# calls made and the expected ones alike at call 1 (key order, 1 and 1.0 aside), apart at call 2.
CONVERSATION = [
    {"role": "system", "content": f"You answer about bridges. {SCRIPT}"},
    {"role": "user", "content": f"</details><summary>not a summary</summary>{IMG}"},
    {"role": "assistant", "content": "\u202eevil\u2028 and a second line"},
    {"role": "tool", "content": '{"found": "</pre></code></td>"}'},
    {"role": "user", "content": "Which one opened first?"},
]
CALLS_MADE = [
    {"name": "search", "arguments": {"q": "bridges", "limit": 3}},
    {"name": f"</td></tr></table>{SCRIPT}", "arguments": {"html": IMG, "\u202e": "\u2028"}},
]
CALLS_EXPECTED = [
    {"name": "search", "arguments": {"limit": 3.0, "q": "bridges"}},
    {"name": "open", "arguments": {"id": 1}},
    {"name": "summarize", "arguments": {}},
]
# What a script in the page would set if any ran.
RAN = "window.__ran === undefined && window.__evalsvc_ran === undefined"
HOSTILE_CHECK = "check:contains:<script>window.__evalsvc_ran=1</script>"
# What the histograms must say, from the scored pairs GET /evaluation lists (set by `pages`).
HISTOGRAMS: list[str] = []


@pytest.fixture(scope="module")
def pages() -> Iterator[dict[str, tuple[str, dict[str, str]]]]:
    """Each kind of page, with the headers the service sent it with."""
    with pytest.MonkeyPatch.context() as patch, moto_in_process():
        env = create_tables(boto3.client("dynamodb", region_name="us-east-1"), "browser")
        point_service_at(env, patch)
        judge = FakeJudge(hostile_judge)
        with judge.running(), TestClient(create_versioned_app(all_routers())) as client:
            point_service_at(judge_env(judge), patch)
            key, _ = api_keys.create_key("acme", f"ann {SCRIPT}", "ann@acme.test")
            yield _make_pages(client, key)


def _make_pages(client: TestClient, key: str) -> dict[str, tuple[str, dict[str, str]]]:
    auth = {"Authorization": key}

    def post(path: str, body: Any) -> Any:
        response = client.post(f"/v1{path}", json=body, headers=auth)
        assert response.status_code == 200, response.text
        return response.json()

    def seed(dataset_id: str, outputs: list[str]) -> None:
        data = [
            {"id": f"p{k:02d}", "input": f"question {k} {IMG}", "output": out}
            for k, out in enumerate(outputs)
        ]
        post(f"/data/seed/{dataset_id}", {"data": data, "system_prompt": SCRIPT})

    metrics_id = post(
        "/specify_questions", {"metrics": [QUESTION, "check:max_words:6", HOSTILE_CHECK]}
    )["metrics_id"]
    seed("base", [*OUTPUTS, *(f"please {k}" for k in range(8))])
    seed("cand", [*reversed(OUTPUTS), *(f"no {k} {SCRIPT}" for k in range(8))])
    # Clustered (by input): the forest plot draws both intervals
    base = post(
        "/evaluate", {"seed_data_id": "base", "metrics_id": metrics_id, "cluster_by": "input"}
    )
    cand = post("/evaluate", {"seed_data_id": "cand", "metrics_id": metrics_id})
    scored = client.get(
        f"/v1/evaluation/{base['eval_results_id']}?includeAllScores=true", headers=auth
    ).json()["all_scored_pairs"]
    for entries in scored:
        bins = Counter(score_bin(e["score"]) for e in entries)
        words = ", ".join(f"score {b}: {bins.get(b, 0)}" for b in range(1, 6))
        HISTOGRAMS.append(f"{len(entries)} scored pairs by score: {words}")
    lowest = base["scores"][0]["lowest_scoring_pairs"]
    for pair, vote, comment in zip(lowest, (1, -1, 0), (SCRIPT, IMG, "ok"), strict=False):
        response = client.put(
            f"/v1/vote_eval_pair/{base['eval_results_id']}",
            json={"pair_id": pair["pair_id"], "metric_idx": 0, "vote": vote, "comment": comment},
            headers=auth,
        )
        assert response.status_code == 200, response.text

    # E10: pairs with a reference and contexts (hostile, one long), and one without either
    rag = [
        {
            "id": f"r{k}",
            "input": f"question {k}",
            "output": out,
            "reference": RAG_REFERENCE,
            "contexts": RAG_CONTEXTS,
        }
        for k, out in enumerate(OUTPUTS[:2])
    ]
    rag.append({"id": "r-plain", "input": "plain", "output": "plain"})
    post("/data/seed/rag", {"data": rag})
    rag_result = post("/evaluate", {"seed_data_id": "rag", "metrics_id": metrics_id})

    # E11: a pair with a conversation and calls that part at call 2, one whose calls are the
    # expected ones (one message: nothing to collapse), one with calls and none expected
    agent = [
        {
            "id": "a-apart",
            "input": "And the second?",
            "output": OUTPUTS[0],
            "messages": CONVERSATION,
            "tool_calls": CALLS_MADE,
            "expected_tool_calls": CALLS_EXPECTED,
            "conversation_id": "c1",
        },
        {
            "id": "a-same",
            "input": "Open it.",
            "output": OUTPUTS[1],
            "messages": CONVERSATION[-1:],
            "tool_calls": CALLS_EXPECTED,
            "expected_tool_calls": CALLS_EXPECTED,
        },
        {"id": "a-made", "input": "Look.", "output": OUTPUTS[2], "tool_calls": CALLS_MADE},
    ]
    post("/data/seed/agent", {"data": agent})
    agent_result = post("/evaluate", {"seed_data_id": "agent", "metrics_id": metrics_id})

    # A result whose dataset was overwritten since, and whose version then expired
    seed("old", OUTPUTS)
    old = post("/evaluate", {"seed_data_id": "old", "metrics_id": metrics_id})["eval_results_id"]
    seed("old", [f"written later {k}" for k in range(len(OUTPUTS))])
    expire("acme", old, purged=False)

    for status in ("running", "failed"):
        start_running(f"r-{status}", 40, "base")
    failure = f"the judge answered nonsense for pair p01: {IMG}"
    assert commit(results_store.failing("acme", "r-failed", Failure.of(ModelFailed(failure))))

    def page(path: str) -> tuple[str, dict[str, str]]:
        response = client.get(f"/v1{path}", headers=auth)
        assert response.status_code == 200, response.text
        assert response.headers["content-type"] == "text/html; charset=utf-8"
        return response.text, {
            "Content-Security-Policy": response.headers["content-security-policy"]
        }

    return {
        "evaluation": page(f"/evaluation/{base['eval_results_id']}/report"),
        "comparison": page(
            f"/compare/report?baseline_id={base['eval_results_id']}"
            f"&candidate_id={cand['eval_results_id']}&cluster_by=input"
        ),
        "expired": page(f"/evaluation/{old}/report"),
        "rag": page(f"/evaluation/{rag_result['eval_results_id']}/report"),
        "agent": page(f"/evaluation/{agent_result['eval_results_id']}/report"),
        "running": page("/evaluation/r-running/report"),
        "failed": page("/evaluation/r-failed/report"),
    }


# Charts each page holds: (selector, how many).
CHARTS = {
    "evaluation": [("svg.forest", 1), ("svg.histogram", 3)],
    "comparison": [("svg.forest", 1), ("svg.wtl", 1)],
    "expired": [("svg.forest", 1), ("svg.histogram", 3)],
    "rag": [("svg.forest", 1), ("svg.histogram", 3)],
    "agent": [("svg.forest", 1), ("svg.histogram", 3)],
    "running": [],
    "failed": [],
}


@pytest.mark.parametrize("kind", sorted(CHARTS))
@pytest.mark.parametrize("with_header", [False, True], ids=["meta-only", "with-header"])
def test_a_report_loads_clean_asks_for_nothing_and_runs_nothing(
    browser: Browser, pages: dict[str, tuple[str, dict[str, str]]], kind: str, with_header: bool
) -> None:
    html, headers = pages[kind]
    loaded = browser.load(html, headers=headers if with_header else None)

    assert_loads_clean(loaded, CHARTS[kind], RAN, SCRIPT)


def test_the_charts_say_what_the_json_says(
    browser: Browser, pages: dict[str, tuple[str, dict[str, str]]]
) -> None:
    loaded = browser.load(pages["evaluation"][0])
    # The histograms count every scored pair GET /evaluation lists, by score bin.
    assert loaded.texts("svg.histogram > desc") == HISTOGRAMS
    assert len(HISTOGRAMS) == 3
    heights = loaded.evaluate(
        "[...document.querySelectorAll('svg.histogram')].map(s =>"
        " [...s.querySelectorAll('rect')].map(r => +r.getAttribute('height')))"
    )
    for description, bars in zip(HISTOGRAMS, heights, strict=True):
        counts = [int(part.rsplit(": ", 1)[1]) for part in description.split(", ")]
        tallest = max(counts)
        assert [round(h / max(bars), 3) for h in bars] == [round(c / tallest, 3) for c in counts]
    # The forest plot draws a dot per metric, each inside the axis.
    dots = loaded.evaluate(
        "[...document.querySelectorAll('svg.forest circle')].map(c => +c.getAttribute('cx'))"
    )
    axis = loaded.evaluate(
        "(() => { const l = document.querySelector('svg.forest line.axis');"
        " return [+l.getAttribute('x1'), +l.getAttribute('x2')]; })()"
    )
    assert len(dots) == 3 and all(axis[0] <= x <= axis[1] for x in dots)
    # Headings and table headers for a screen reader.
    assert loaded.count("h1") == 1 and loaded.count("h2") >= 3
    assert loaded.count("th[scope='col']") >= 9


def test_the_comparison_says_what_it_could_see_and_its_clustered_interval(
    browser: Browser, pages: dict[str, tuple[str, dict[str, str]]]
) -> None:
    loaded = browser.load(pages["comparison"][0])
    text = loaded.inner_text()
    assert "What this comparison could see" in text
    assert "Smallest difference it could see (80 % power)" in text
    assert "Pairs needed to see the observed difference" in text
    # every pair has its own input: 15 clusters, the interval drawn for each metric
    assert "Clustered interval" in text
    assert text.count("(15 clusters)") == 3
    assert loaded.count("#power-h") == 1 and loaded.count("th[scope='col']") >= 20


# Whether anything in the section on what produced the result reaches past its right edge.
OVERFLOWS = """(() => {
  const section = document.querySelector('#inputs-h').parentElement;
  const edge = section.getBoundingClientRect().right + 1;
  return [...section.querySelectorAll('*')].some(e => e.getBoundingClientRect().right > edge);
})()"""


def test_what_produced_each_result_is_shown_and_its_digests_wrap(
    browser: Browser, pages: dict[str, tuple[str, dict[str, str]]]
) -> None:
    for kind, digests in (("evaluation", 3), ("comparison", 6)):
        for width in (1200, 360):
            loaded = browser.load(pages[kind][0], width=width)
            assert loaded.count("#inputs-h") == 1
            assert loaded.count(".digest") == digests, kind
            fonts = loaded.evaluate(
                "[...document.querySelectorAll('.digest')].map(e => getComputedStyle(e).fontFamily)"
            )
            assert all("monospace" in font for font in fonts)
            # On a phone too the section holds its digests: they wrap, onto lines of its width
            assert not loaded.evaluate(OVERFLOWS), (kind, width)
            lines = loaded.evaluate(
                "[...document.querySelectorAll('.digest')].map(e => e.getClientRects().length)"
            )
            assert width > 360 or all(n > 1 for n in lines), (kind, lines)
    compared = browser.load(pages["comparison"][0]).inner_text()
    assert "The two results did not score the same pairs" in compared
    for kind in ("running", "failed"):
        assert "Not recorded" in browser.load(pages[kind][0]).inner_text()


def test_a_pairs_reference_and_contexts_are_text_each_context_a_disclosure(
    browser: Browser, pages: dict[str, tuple[str, dict[str, str]]]
) -> None:
    loaded = browser.load(pages["rag"][0])
    text = loaded.inner_text()
    # The two RAG pairs are listed under each of the 3 metrics, the plain one too
    pairs = loaded.count("article.pair")
    rag = loaded.count("article.pair .contexts")
    assert rag == 2 * 3 and pairs == 3 * 3
    labels = loaded.texts(".label")
    assert sum(label.startswith("Reference (") for label in labels) == rag
    # Every context its own disclosure, in rank order, its text as text: the markup in it made
    # no element (3 contexts a pair, no more details, no summary of its own)
    drawn = loaded.evaluate(
        "[...document.querySelectorAll('.contexts')].map(c =>"
        " [...c.querySelectorAll('details')].map(d =>"
        " ({open: d.open, text: d.querySelector('.text').textContent,"
        " summary: d.querySelector('summary').textContent})))"
    )
    for contexts in drawn:
        assert [d["text"] for d in contexts] == RAG_CONTEXTS
        assert [d["open"] for d in contexts] == [True, False, True]
        assert contexts[1]["summary"] == f"Context 2 of 3 ({len(RAG_CONTEXTS[1]):,} characters)"
    assert loaded.count("details") == 3 * rag and loaded.count("summary") == 3 * rag
    assert RAG_REFERENCE in text
    # The long context's text is not shown until its summary is opened, by the keyboard
    assert "The long one." not in text
    loaded.run(lambda page: page.locator(".contexts summary").nth(1).focus())
    loaded.run(lambda page: page.keyboard.press("Enter"))
    loaded.settle()
    assert loaded.evaluate("document.querySelectorAll('.contexts details')[1].open")
    assert "The long one." in loaded.inner_text()
    assert loaded.evaluate(RAN)
    found = axe.blocking(loaded)
    assert not found, "\n".join(found)


# Each table of calls: its caption, and each row's number, cells and whether it is marked.
CALL_TABLES = """[...document.querySelectorAll('article.pair')].map(a => {
  const table = a.querySelector('table.calls');
  if (!table) return null;
  return {
    pair: a.querySelector('.pair-head .id').textContent,
    caption: table.querySelector('caption').textContent.replace(/\\s+/g, ' ').trim(),
    rows: [...table.querySelectorAll('tbody tr')].map(r => ({
      number: r.querySelector('th')?.textContent,
      marked: r.classList.contains('first-difference'),
      labels: [...r.querySelectorAll('td')].map(td =>
        td.querySelector('.diff-mark')?.textContent.trim() ?? null),
      names: [...r.querySelectorAll('td')].map(td => td.querySelector('code')?.textContent ?? null),
      arguments: [...r.querySelectorAll('td')].map(td =>
        td.querySelector('pre')?.textContent ?? null),
    })),
  };
}).filter(t => t)"""


def compact(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def test_a_pairs_conversation_is_collapsed_and_its_calls_mark_the_first_difference(
    browser: Browser, pages: dict[str, tuple[str, dict[str, str]]]
) -> None:
    loaded = browser.load(pages["agent"][0])
    # Each of the three pairs is listed under each of the 3 metrics
    assert loaded.count("article.pair") == 3 * 3
    tables = loaded.evaluate(CALL_TABLES)
    assert sorted(t["pair"] for t in tables) == sorted(["a-apart", "a-same", "a-made"] * 3)
    for table in tables:
        marked = [(r["number"], r["labels"]) for r in table["rows"] if r["marked"]]
        if table["pair"] == "a-apart":
            # Marked at call 2, in both columns, by a label; the names and arguments as text
            assert table["caption"] == "Tool calls: 2 made, 3 expected. First difference at call 2."
            assert marked == [("2", ["▶ First difference", "▶ First difference"])]
            assert [r["number"] for r in table["rows"]] == ["1", "2", "3"]
            row = table["rows"][1]
            assert row["names"] == [CALLS_MADE[1]["name"], "open"]
            assert row["arguments"][0] == compact(CALLS_MADE[1]["arguments"]).replace(
                "\u202e", "\ufffd"
            )
            assert table["rows"][2]["names"] == [None, "summarize"]
        elif table["pair"] == "a-same":
            assert table["caption"].endswith("The calls made are the expected ones, in order.")
            assert marked == []
        else:
            assert table["caption"] == (
                "Tool calls: 2 made. No expected calls were given: nothing to compare with."
            )
            assert marked == [] and all(len(r["names"]) == 1 for r in table["rows"])
    # The marker is not colour alone: the row has a border, each cell a label
    border = loaded.evaluate(
        "getComputedStyle(document.querySelector('tr.first-difference td')).borderTopWidth"
    )
    assert border == "2px"

    # The conversation: the earlier three messages in a closed disclosure saying how many, the
    # last two open, each with its role; nothing in them made an element or ran
    conversations = loaded.evaluate(
        "[...document.querySelectorAll('.conversation')].map(c => ({"
        " details: [...c.querySelectorAll('details')].map(d => ({open: d.open,"
        "  summary: d.querySelector('summary').textContent})),"
        " roles: [...c.querySelectorAll('.message .role strong')].map(e => e.textContent),"
        " texts: [...c.querySelectorAll('.message .text')].map(e => e.textContent)}))"
    )
    collapsed = [c for c in conversations if c["details"]]
    assert len(conversations) == 2 * 3 and len(collapsed) == 3
    for drawn in collapsed:
        assert drawn["details"] == [{"open": False, "summary": "3 earlier messages"}]
        assert drawn["roles"] == [m["role"] for m in CONVERSATION]
        shown = [m["content"].replace("\u202e", "\ufffd") for m in CONVERSATION]
        assert drawn["texts"] == shown
    assert loaded.count("details") == len(collapsed) and loaded.count("summary") == 3
    text = loaded.inner_text()
    assert "Which one opened first?" in text and "You answer about bridges." not in text
    assert "\u202e" not in text and CONVERSATION[1]["content"] not in text
    made = "main img, main script, .pair table:not(.calls), .pair pre:not(.arguments), .pair b"
    assert loaded.count(made) == 0

    # The earlier messages open with the keyboard: Tab to the summary, Enter
    for _ in range(40):
        loaded.run(lambda page: page.keyboard.press("Tab"))
        if loaded.evaluate("document.activeElement?.tagName") == "SUMMARY":
            break
    assert loaded.evaluate("document.activeElement.textContent") == "3 earlier messages"
    loaded.run(lambda page: page.keyboard.press("Enter"))
    loaded.settle()
    assert loaded.evaluate("document.querySelector('.conversation details').open")
    assert "You answer about bridges." in loaded.inner_text()
    assert CONVERSATION[1]["content"] in loaded.inner_text()
    assert loaded.evaluate(RAN)
    assert loaded.problems() == [] and loaded.requests == []
    found = axe.blocking(loaded)
    assert not found, "\n".join(found)


def test_a_result_whose_version_expired_says_so_for_each_pair(
    browser: Browser, pages: dict[str, tuple[str, dict[str, str]]]
) -> None:
    text = browser.load(pages["expired"][0]).inner_text()
    assert text.count(f"expired on {EXPIRED_DAY}") == 3 * 5  # five pairs listed a metric
    assert "written later" not in text


def test_the_failed_and_running_pages_say_so(
    browser: Browser, pages: dict[str, tuple[str, dict[str, str]]]
) -> None:
    running = browser.load(pages["running"][0])
    assert "0 of 40 pairs scored" in running.inner_text()
    assert running.evaluate("document.querySelector('progress').max") == 40
    failed = browser.load(pages["failed"][0])
    assert f"the judge answered nonsense for pair p01: {IMG}" in failed.inner_text()


@pytest.mark.parametrize("kind", ["evaluation", "comparison"])
def test_a_report_prints(
    browser: Browser, pages: dict[str, tuple[str, dict[str, str]]], kind: str
) -> None:
    loaded = browser.load(pages[kind][0], media="print")
    assert loaded.problems() == [] and loaded.requests == []
    # The scroll boxes open up in print: no text is hidden behind a scroll bar.
    hidden = loaded.evaluate(
        "[...document.querySelectorAll('.text')].filter(e => e.scrollHeight > e.clientHeight + 1)"
        ".length"
    )
    assert hidden == 0
    assert pdf_pages(loaded.pdf()) >= 1


def test_the_pages_are_what_the_service_sent(pages: dict[str, tuple[str, dict[str, str]]]) -> None:
    for html, headers in pages.values():
        assert "default-src 'none'" in headers["Content-Security-Policy"]
        assert "<script" not in html.lower() and "<img" not in html.lower()
