"""The report pages drawn from reports built in memory: any text a tenant or a model can store
stays text (hypothesis), the charts are where the figures say, and a page at the field limits
stays under 5 MB and fits one Lambda response."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from evalsvc.api.responses import MAX_RESPONSE_BYTES, _proxy_bytes
from evalsvc.logic import reports
from evalsvc.models.comparisons import (
    CompareIn,
    Comparison,
    MatchedMetric,
    MetricComparison,
    PairChange,
)
from evalsvc.models.conversations import (
    MAX_ARGUMENTS_BYTES,
    MAX_MESSAGES,
    MAX_TOOL_CALLS,
    MAX_TOOL_NAME_CHARS,
    ROLES,
    Message,
    ToolCall,
    arguments_bytes,
    compact_json,
)
from evalsvc.models.datasets import MAX_CONTEXT_CHARS, MAX_CONTEXTS, MAX_TEXT_CHARS, DatasetKind
from evalsvc.models.evaluations import (
    LOWEST_PER_METRIC,
    MAX_COMMENT_CHARS,
    MAX_REASON_CHARS,
    Critique,
    EvaluationResult,
    ResultInputs,
)
from evalsvc.models.jobs import Status
from evalsvc.models.metric_sets import MAX_DEFINITION_CHARS, MAX_DEFINITIONS
from evalsvc.models.reports import (
    LISTED_ITEMS,
    Calls,
    ChangeTexts,
    ComparisonReport,
    EvaluationReport,
    MetricSection,
    PairText,
    ShownPair,
    VoteCounts,
    same_pairs,
)
from evalsvc.reports import charts
from evalsvc.reports.comparison_page import render_comparison
from evalsvc.reports.evaluation_page import render_evaluation
from evalsvc.reports.filters import cut
from evalsvc.reports.limits import MAX_PAGE_BYTES
from evalsvc.reports.pages import CONTENT_SECURITY_POLICY
from evalsvc.statistics.scores import Paired, summarize
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from markupsafe import escape

from tests.integration.test_reports import ELEMENTS
from tests.trajectory_cases import CASES, Case, tool_calls

# Any text: every code point (lone surrogates too, as stored text may hold them).
texts = st.text(st.characters(codec=None, exclude_categories=()), max_size=300)


class Parsed(HTMLParser):
    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: set[str] = set()
        self.attributes: set[str] = set()
        self.text: list[str] = []
        self.feed(html)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)
        self.attributes.update(name for name, _ in attrs)

    def handle_data(self, data: str) -> None:
        self.text.append(data)


# What a page never writes as it is: controls (C0 but tab and line breaks, DEL, C1), the
# bidirectional controls and lone surrogates, each shown as U+FFFD.
UNSHOWN = frozenset(
    [chr(c) for c in range(0x20) if chr(c) not in "\t\n\r"]
    + [chr(c) for c in range(0x7F, 0xA0)]
    + list("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
)


def shown(text: str) -> str:
    """`text` as the page shows it: each character of UNSHOWN, and each lone surrogate, as
    U+FFFD."""
    return "".join("\ufffd" if ch in UNSHOWN or "\ud800" <= ch <= "\udfff" else ch for ch in text)


def result(
    definitions: list[str], status: Status = Status.COMPLETE, **kw: object
) -> EvaluationResult:
    fields: dict[str, object] = {
        "tenant": "t",
        "results_id": "r1",
        "created_ms": 1_790_000_000_000,
        "dataset_id": "d1",
        "dataset_kind": DatasetKind.SEED,
        "metrics_id": "m1",
        "definitions": definitions,
        "system_prompt": "",
        "pair_count": 10,
        "summaries": [summarize([1, 2, 3, 4, 5]) for _ in definitions],
        "status": status,
        **kw,
    }
    return EvaluationResult(**fields)  # type: ignore[arg-type]


def critique(comment: str, user: str, metric_idx: int = 0, pair_id: str = "p1") -> Critique:
    return Critique("c1", pair_id, metric_idx, comment, -1, user, f"{user}@x", 1_790_000_000_000)


def evaluation(
    definition: str, reason: str, text: str, comment: str, pair_id: str = "p1"
) -> EvaluationReport:
    c = critique(comment, text[:20] or "u", pair_id=pair_id)
    section = MetricSection(
        idx=0,
        definition=definition,
        summary=summarize([1, 2, 3, 4, 5]),
        histogram=[1, 2, 3, 2, 1],
        lowest=[ShownPair(pair_id, 1.0, reason, PairText(text, text[::-1]), [c])],
        votes=VoteCounts(0, 1, 0, 1),
        agreement=None,
    )
    return EvaluationReport(
        result([definition], system_prompt=text, failure=reason), [section], [c], False
    )


def assert_only_page_markup(html: str) -> Parsed:
    page = Parsed(html)
    assert page.tags <= ELEMENTS, page.tags - ELEMENTS
    assert not {a for a in page.attributes if a.startswith("on") or a in ("src", "href")}
    assert f'content="{escape(CONTENT_SECURITY_POLICY)}"' in html
    return page


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(definition=texts, reason=texts, text=texts, comment=texts)
def test_any_stored_text_stays_text_on_the_evaluation_page(
    definition: str, reason: str, text: str, comment: str
) -> None:
    html = render_evaluation(evaluation(definition, reason, text, comment)).decode()
    page = assert_only_page_markup(html)
    words = "".join(page.text)
    for value in (reason, text, text[::-1], comment):
        assert shown(value) in words


@settings(max_examples=60, deadline=None)
@given(definition=texts, reason=texts, pair_id=texts)
def test_any_stored_text_stays_text_on_the_comparison_page(
    definition: str, reason: str, pair_id: str
) -> None:
    html = render_comparison(comparison(definition, reason, pair_id)).decode()
    page = assert_only_page_markup(html)
    words = "".join(page.text)
    assert shown(reason) in words and shown(pair_id) in words


def comparison(definition: str, reason: str, pair_id: str, changes: int = 1) -> ComparisonReport:
    paired = Paired(40, -0.5, -0.5, 1.0, -0.8, -0.2, -3.1, 0.004, 0.01, 0.02, 5, 20, 15, -0.5)
    metric = MetricComparison(MatchedMetric(definition, 0, 0), 3.5, 3.0, paired, 0.004, "regressed")
    moved = [
        PairChange(f"{pair_id}{k}" if k else pair_id, 0, 5.0, 1.0, reason, reason)
        for k in range(changes)
    ]
    body = CompareIn(baseline_id="a", candidate_id="b")
    texts = {
        c.pair_id: ChangeTexts(PairText(reason, reason), PairText(reason, reason[::-1]))
        for c in moved
    }
    return ComparisonReport(
        Comparison(body, 40, 0, 0, [metric], moved, []),
        result([definition]),
        result([definition]),
        texts,
    )


def test_a_moved_pair_shows_its_reference_and_contexts_on_both_sides() -> None:
    report = comparison("q", "why", "p")
    rag = PairText("in", "out", reference="<b>ref</b>", contexts=("c1", "</details>c2"))
    report.texts["p"] = ChangeTexts(rag, rag)

    html = render_comparison(report).decode()

    words = "".join(assert_only_page_markup(html).text)
    assert words.count("<b>ref</b>") == 2 and words.count("</details>c2") == 2
    assert html.count('<details class="context" open>') == 4


def test_long_texts_are_cut_with_their_length() -> None:
    assert str(cut("<" * 10, 3)) == (
        '&lt;&lt;&lt;<span class="cut">… cut: the first 3 of 10 characters</span>'
    )
    assert str(cut("<ok>", 4)) == "&lt;ok&gt;"


def test_the_histogram_bars_follow_the_counts() -> None:
    chart = charts.histogram([0, 10, 5, 0, 20], title="t")
    heights = [b.height for b in chart.bars]
    assert heights[0] == heights[3] == 0
    assert heights[4] == max(heights) and heights[1] == pytest.approx(2 * heights[2])
    assert (
        chart.description
        == "35 scored pairs by score: score 1: 0, score 2: 10, score 3: 5, score 4: 0, score 5: 20"
    )
    # Every bar stands on the same base line.
    assert {round(b.y + b.height, 2) for b in chart.bars} == {chart.base_y}


def test_the_forest_plot_places_means_and_intervals_on_the_axis() -> None:
    plot = charts.forest(
        [charts.Estimate("a", 3.0, 2.0, 4.0), charts.Estimate("b", None, None, None)],
        title="t",
        description="d",
        low=1.0,
        high=5.0,
        ticks=[1, 2, 3, 4, 5],
    )
    first, second = plot.rows
    middle = (plot.plot_x0 + plot.plot_x1) / 2
    assert first.x == pytest.approx(middle)
    assert first.x_low == pytest.approx(plot.plot_x0 + (plot.plot_x1 - plot.plot_x0) / 4)
    assert first.title == "a: 3.00 [2.00, 4.00]"
    assert second.x is None and second.value == "—"
    # Differences: a symmetric axis around a zero line.
    assert charts.difference_extent([-0.3, 1.2, None]) == 1.5
    assert charts.difference_extent([float("nan")]) == 0.5


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(reference=st.none() | texts, contexts=st.none() | st.lists(texts, max_size=4))
def test_any_reference_and_contexts_stay_text_each_context_a_disclosure(
    reference: str | None, contexts: list[str] | None
) -> None:
    hostile = "</details></summary><script>x()</script>"
    if contexts:
        contexts = [*contexts, hostile + "y" * 300]  # and one long context, closed
    kept = tuple(contexts) if contexts is not None else None
    text = PairText("in", "out", reference=reference, contexts=kept)
    section = MetricSection(
        0, "q", summarize([1, 5]), None, [ShownPair("p1", 1.0, "r", text)], VoteCounts(), None
    )
    html = render_evaluation(EvaluationReport(result(["q"]), [section], [], False)).decode()

    page = assert_only_page_markup(html)
    words = "".join(page.text)
    for value in [*([reference] if reference is not None else []), *(contexts or [])]:
        assert shown(value) in words
    assert ("Reference (" in words) is (reference is not None)
    assert html.count("<details") == len(text.contexts or ())
    assert ("Contexts (" in words) is (text.contexts is not None)
    if text.contexts:
        # Short contexts open, the long one closed
        opened = re.findall(r'<details class="context"( open)?>', html)
        assert [bool(o) for o in opened] == [len(c) <= 300 for c in text.contexts]
    elif text.contexts == ():
        assert "The app retrieved nothing for this pair." in words


def test_a_pair_without_reference_or_contexts_is_drawn_as_before_them() -> None:
    text = PairText("in", "out")
    section = MetricSection(
        0, "q", summarize([1, 5]), None, [ShownPair("p1", 1.0, "r", text)], VoteCounts(), None
    )
    html = render_evaluation(EvaluationReport(result(["q"]), [section], [], False)).decode()
    assert "Reference" not in html and "Contexts" not in html and "<details" not in html


def one_pair_page(text: PairText) -> str:
    """The evaluation page listing one pair with `text`."""
    section = MetricSection(
        0, "q", summarize([1, 5]), None, [ShownPair("p1", 1.0, "r", text)], VoteCounts(), None
    )
    return render_evaluation(EvaluationReport(result(["q"]), [section], [], False)).decode()


def conversation(count: int) -> tuple[Message, ...]:
    roles = ["system", *(["user", "assistant"] * count)]
    return tuple(Message(roles[n], f"message {n + 1}") for n in range(count))  # type: ignore[arg-type]


def test_a_conversation_shows_its_last_two_messages_open_and_the_earlier_ones_closed() -> None:
    html = one_pair_page(PairText("in", "out", messages=conversation(5)))

    words = "".join(assert_only_page_markup(html).text)
    assert "Conversation before the input (5 messages)" in words
    # One closed disclosure, its summary saying how many it holds; then the last two, open
    earlier, last = html.split("</details>")
    assert '<details class="earlier">' in earlier and " open" not in earlier
    assert "<summary>3 earlier messages</summary>" in earlier
    assert [m in earlier for m in ("message 1", "message 2", "message 3")] == [True] * 3
    assert "message 4" in last and "message 5" in last
    # Each message with its role, in order, before the input
    roles = re.findall(r'<div class="role"><strong>(\w+)</strong> · message (\d+) of 5', html)
    assert roles == [
        ("system", "1"), ("user", "2"), ("assistant", "3"), ("user", "4"), ("assistant", "5")
    ]  # fmt: skip
    assert html.index("message 5") < html.index("Input (2 characters)")


@pytest.mark.parametrize(("count", "closed"), [(0, None), (1, None), (2, None), (3, 1)])
def test_a_short_conversation_needs_no_disclosure(count: int, closed: int | None) -> None:
    html = one_pair_page(PairText("in", "out", messages=conversation(count)))

    words = "".join(assert_only_page_markup(html).text)
    noun = "message" if count == 1 else "messages"
    assert f"Conversation before the input ({count} {noun})" in words
    assert ("<details" in html) is (closed is not None)
    if closed:
        assert "<summary>1 earlier message</summary>" in html
    if not count:
        assert "No message came before the input" in words


def flat(text: str) -> str:
    """`text` with every run of white space (U+2028 too) one space, as the tests read words."""
    return " ".join(text.split())


def call_numbers(html: str) -> list[str]:
    """The numbers of the rows drawn in the pair's table of calls."""
    table = html[
        html.index('<table class="calls">') : html.index(
            "</table>", html.index('<table class="calls">')
        )
    ]
    return re.findall(r'<th scope="row" class="num">([\d,]+)</th>', table)


def marked_rows(html: str) -> list[tuple[str, int]]:
    """Each marked row's number and how many of its cells say "First difference"."""
    rows = re.findall(r'<tr class="first-difference">(.*?)</tr>', html, re.S)
    return [
        (
            re.findall(r'<th scope="row" class="num">([\d,]+)</th>', row)[0],
            row.count("First difference"),
        )
        for row in rows
    ]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_the_first_difference_is_marked_in_both_columns_of_its_row(case: Case) -> None:
    made, expected = tool_calls(case.made), tool_calls(case.expected)
    html = one_pair_page(PairText("in", "out", calls=Calls.of(made, expected)))

    words = flat(" ".join(assert_only_page_markup(html).text))
    assert f"Tool calls: {len(made)} made, {len(expected)} expected." in words
    if case.first is None:
        assert marked_rows(html) == []
        assert "The calls made are the expected ones, in order." in words
    else:
        # The row of the first difference, marked by a label in both columns (not by colour)
        assert marked_rows(html) == [(str(case.first + 1), 2)]
        assert f"First difference at call {case.first + 1}." in words
    # Every call as text: its name, and its arguments as compact JSON
    for call in made + expected:
        assert flat(shown(call.name)) in words
        assert flat(shown(compact_json(call.arguments))) in words
    rows = max(len(made), len(expected))
    assert call_numbers(html) == [str(n) for n in range(1, rows + 1)]


def test_calls_without_expected_ones_are_listed_with_nothing_marked() -> None:
    made = [ToolCall("search", {"q": "x"}), ToolCall("open", {"id": 1})]
    html = one_pair_page(PairText("in", "out", calls=Calls.of(made, None)))

    words = flat(" ".join(assert_only_page_markup(html).text))
    assert "Tool calls: 2 made. No expected calls were given: nothing to compare with." in words
    assert "Expected" not in words and marked_rows(html) == []


def test_expected_calls_of_a_pair_that_recorded_none_differ_at_the_first() -> None:
    expected = [ToolCall("search", {"q": "x"})]
    html = one_pair_page(PairText("in", "out", calls=Calls.of(None, expected)))

    words = flat(" ".join(assert_only_page_markup(html).text))
    assert "Tool calls: 0 made, 1 expected. First difference at call 1." in words
    assert "No call (none was recorded)." in words
    assert marked_rows(html) == [("1", 2)]


def test_long_lists_show_their_first_rows_the_first_difference_and_what_is_left_out() -> None:
    made = [ToolCall("f", {"n": n}) for n in range(MAX_TOOL_CALLS)]
    expected = [ToolCall("f", {"n": n if n != 80 else -1}) for n in range(MAX_TOOL_CALLS - 1)]
    messages = conversation(MAX_MESSAGES)
    html = one_pair_page(PairText("in", "out", messages=messages, calls=Calls.of(made, expected)))

    words = flat(" ".join(assert_only_page_markup(html).text))
    numbers = call_numbers(html)
    assert numbers == [str(n) for n in range(1, LISTED_ITEMS + 1)] + ["81"]
    assert marked_rows(html) == [("81", 2)]
    assert f"Calls {LISTED_ITEMS + 1} to 80 are not shown" in words
    assert "Calls 82 to 100 are not shown" in words
    # The last messages of the conversation, the oldest ones said to be left out
    assert f"<summary>{MAX_MESSAGES - 2} earlier messages</summary>" in html
    assert f"The first {MAX_MESSAGES - LISTED_ITEMS} are not shown" in words
    shown_numbers = re.findall(r"· message (\d+) of 200", html)
    assert shown_numbers == [str(n) for n in range(MAX_MESSAGES - LISTED_ITEMS + 1, 201)]


@given(
    made=st.integers(0, 40),
    expected=st.none() | st.integers(0, 40),
    apart=st.integers(0, 45),
    items=st.integers(1, 30),
)
def test_the_rows_drawn_are_the_first_ones_and_the_first_differences_the_rest_said_left_out(
    made: int, expected: int | None, apart: int, items: int
) -> None:
    from itertools import pairwise

    from evalsvc.reports.conversation import CallRow, LeftOut, call_rows

    calls = [ToolCall("f", {"n": n}) for n in range(made)]
    wanted = None
    if expected is not None:
        wanted = [ToolCall("f", {"n": n if n != apart else -1}) for n in range(expected)]
    shown = Calls.of(calls, wanted)
    assert shown is not None
    rows = call_rows(shown, items)

    # Every row accounted for once, in order: drawn, or inside a range said left out
    covered = []
    for row in rows:
        if isinstance(row, LeftOut):
            assert row.first <= row.last
            covered.extend(range(row.first, row.last + 1))
        else:
            covered.append(row.index)
    assert covered == list(range(shown.rows))
    drawn = [row for row in rows if isinstance(row, CallRow)]
    differs = shown.first_difference
    assert [r.index for r in drawn if r.differs] == ([] if differs is None else [differs])
    assert {r.index for r in drawn} == set(range(min(items, shown.rows))) | (
        set() if differs is None else {differs}
    )
    # No two ranges left out side by side, and a row's calls are the lists' own
    assert not any(isinstance(a, LeftOut) and isinstance(b, LeftOut) for a, b in pairwise(rows))
    for row in drawn:
        assert (row.made is not None) is (row.index < made)
        assert (row.expected is not None) is (wanted is not None and row.index < len(wanted))


HOSTILE_TEXTS = [
    "</details></summary><script>window.__ran = 1</script>",
    "</pre></code></td></tr></table><img src=x onerror=alert(1)>",
    "\u202eevil\u2066 \u2028line\u2029 \x1b[31mred\x00",
]


def test_hostile_messages_names_and_arguments_stay_text() -> None:
    messages = tuple(Message("user", t) for t in HOSTILE_TEXTS)
    made = [ToolCall(t, {t: [t, {"k": t}]}) for t in HOSTILE_TEXTS]
    expected = [*made[:2], ToolCall("other", {})]
    html = one_pair_page(PairText("in", "out", messages=messages, calls=Calls.of(made, expected)))

    page = assert_only_page_markup(html)
    words = "".join(page.text)
    for value in [*HOSTILE_TEXTS, *(compact_json(c.arguments) for c in made)]:
        assert shown(value) in words
    assert "\u202e" not in html and "\x1b" not in html and "\x00" not in html
    # The markup the texts hold made no element: one disclosure, one table, one marked row
    plain = one_pair_page(PairText("in", "out"))
    for tag in ("<details", "</details>", "<summary", "<table", "</table>", "<pre", "</pre>"):
        assert html.count(tag) == plain.count(tag) + {"<pre": 6, "</pre>": 6}.get(tag, 1), tag
    assert "<img" not in html and "<script" not in html
    assert marked_rows(html) == [("3", 2)]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    messages=st.none() | st.lists(st.tuples(st.sampled_from(ROLES), texts), max_size=4),
    made=st.none() | st.lists(st.tuples(texts, texts), max_size=3),
    expected=st.none() | st.lists(st.tuples(texts, texts), max_size=3),
)
def test_any_conversation_and_calls_stay_text(
    messages: list[tuple[str, str]] | None,
    made: list[tuple[str, str]] | None,
    expected: list[tuple[str, str]] | None,
) -> None:
    def calls(given: list[tuple[str, str]] | None) -> list[ToolCall] | None:
        return None if given is None else [ToolCall(n or "f", {"v": v}) for n, v in given]

    kept = None if messages is None else tuple(Message(r, c) for r, c in messages)  # type: ignore[arg-type]
    text = PairText("in", "out", messages=kept, calls=Calls.of(calls(made), calls(expected)))
    html = one_pair_page(text)

    words = "".join(assert_only_page_markup(html).text)
    for message in kept or ():
        assert shown(message.content) in words
    for call in (calls(made) or []) + (calls(expected) or []):
        assert shown(call.name) in words and shown(compact_json(call.arguments)) in words
    assert ("Conversation before the input" in words) is (messages is not None)
    assert ("Tool calls:" in words) is (made is not None or expected is not None)


def test_a_pair_without_a_conversation_or_calls_is_drawn_as_before_them() -> None:
    html = one_pair_page(PairText("in", "out", reference="ref", contexts=("c",)))
    assert "Conversation" not in html and "Tool calls" not in html and "<table class" not in html


def e11_pair(worst: str) -> dict[str, object]:
    """A conversation and tool calls at their counts' limits, each text longer than a page shows
    of it, in the characters that take the most bytes escaped (and within one pair's bytes):
    200 messages, 100 calls made and 100 expected with the longest names, differing at the
    last call."""
    roles = [ROLES[n % 4] for n in range(MAX_MESSAGES)]
    messages = tuple(Message(r, worst[:2_500]) for r in roles)
    name = worst[:MAX_TOOL_NAME_CHARS]
    value = worst[: (MAX_ARGUMENTS_BYTES - 100) // 2]
    while arguments_bytes({"v": value}) > MAX_ARGUMENTS_BYTES // 8:
        value = value[:-100]
    made = [ToolCall(name, {"v": value, "n": n}) for n in range(MAX_TOOL_CALLS)]
    expected = [*made[:-1], ToolCall(name, {"v": value, "n": -1})]
    return {"messages": messages, "calls": Calls.of(made, expected)}


def limits_report(e10: bool = False, e11: bool = False) -> EvaluationReport:
    """Everything at its field limit, in the characters that take the most bytes escaped; with
    `e10`, every listed pair with a reference and 20 contexts at their limits too; with `e11`,
    every listed pair with a conversation and tool calls at their limits (e11_pair)."""
    worst = '😀"<&' * (MAX_TEXT_CHARS // 4)
    reference = worst if e10 else None
    contexts = tuple(worst[:MAX_CONTEXT_CHARS] for _ in range(MAX_CONTEXTS)) if e10 else None
    extra = e11_pair(worst) if e11 else {}
    definitions = ['🧩"' * (MAX_DEFINITION_CHARS // 2) for _ in range(MAX_DEFINITIONS)]
    comments = [
        critique('💬"' * (MAX_COMMENT_CHARS // 2), "u" * 64, k % MAX_DEFINITIONS, f"p{k % 250}")
        for k in range(reports.CRITIQUE_READ_ITEMS)
    ]
    sections = [
        MetricSection(
            idx=m,
            definition=definition,
            summary=summarize([1, 5]),
            histogram=[100_000, 0, 0, 0, 0],
            lowest=[
                ShownPair(
                    f"p{m * LOWEST_PER_METRIC + k}",
                    1.0,
                    '🧾"' * (MAX_REASON_CHARS // 2),
                    PairText(worst, worst, reference=reference, contexts=contexts, **extra),  # type: ignore[arg-type]
                    [c for c in comments if c.metric_idx == m],
                )
                for k in range(LOWEST_PER_METRIC)
            ],
            votes=VoteCounts(),
            agreement=None,
        )
        for m, definition in enumerate(definitions)
    ]
    return EvaluationReport(
        result(definitions, system_prompt=worst, pair_count=100_000), sections, comments, True
    )


@pytest.mark.parametrize(
    ("e10", "e11"),
    [(False, False), (True, False), (True, True)],
    ids=["v1-pairs", "with-reference-and-contexts", "with-conversations-and-tool-calls"],
)
@pytest.mark.parametrize("compressed", [False, True])
def test_a_page_at_the_field_limits_stays_under_5_mb_and_fits_a_response(
    compressed: bool, e10: bool, e11: bool
) -> None:
    import gzip

    def fits(body: bytes) -> bool:
        sent = gzip.compress(body) if compressed else body
        return _proxy_bytes(sent, compressed) <= MAX_RESPONSE_BYTES

    html = render_evaluation(limits_report(e10, e11), fits)
    assert len(html) <= MAX_PAGE_BYTES
    assert fits(html)
    text = html.decode()
    assert re.search(r"cut: the first [\d,]+ of 100,000 characters", text)
    assert_only_page_markup(text)
    if e11:
        # Every listed pair still shows its conversation and calls, and where they first differ
        listed = MAX_DEFINITIONS * LOWEST_PER_METRIC
        assert text.count("Conversation before the input (200 messages)") == listed
        assert text.count("First difference at call 100.") == listed
        assert text.count('<tr class="first-difference">') == listed


def test_a_page_dense_with_messages_and_calls_shows_fewer_of_each_rather_than_shorter_texts() -> (
    None
):
    from evalsvc.reports.limits import Limits

    # Up to what the budget holds at the shortest cut, every listed item is shown
    assert Limits.for_counts(texts=40, reasons=1, comments=0).items == LISTED_ITEMS
    assert Limits.for_counts(texts=8_333, reasons=1, comments=0).items == LISTED_ITEMS
    # Beyond, fewer in proportion, never none; and halved with the other limits
    assert Limits.for_counts(texts=16_666, reasons=1, comments=0).items == LISTED_ITEMS // 2
    assert Limits.for_counts(texts=10**7, reasons=1, comments=0).items == 1
    assert Limits.for_counts(texts=40, reasons=1, comments=0).halved().items == LISTED_ITEMS // 2


def test_a_comparison_at_its_largest_stays_under_5_mb_and_fits_a_response() -> None:
    worst = '😀"<&' * (MAX_TEXT_CHARS // 4)
    report = comparison('🧩"' * (MAX_DEFINITION_CHARS // 2), worst, "p", changes=400)

    def fits(body: bytes) -> bool:
        return _proxy_bytes(body, False) <= MAX_RESPONSE_BYTES

    html = render_comparison(report, fits)
    assert len(html) <= MAX_PAGE_BYTES and fits(html)
    assert "cut: the first" in html.decode()


def test_a_comparison_of_pairs_with_conversations_and_calls_at_their_limits_fits() -> None:
    worst = '😀"<&' * (MAX_TEXT_CHARS // 4)
    report = comparison('🧩"' * (MAX_DEFINITION_CHARS // 2), worst, "p", changes=400)
    e11 = PairText(worst, worst, **e11_pair(worst))  # type: ignore[arg-type]
    report.texts = {pid: ChangeTexts(e11, e11) for pid in report.texts}

    def fits(body: bytes) -> bool:
        return _proxy_bytes(body, False) <= MAX_RESPONSE_BYTES

    html = render_comparison(report, fits)
    assert len(html) <= MAX_PAGE_BYTES and fits(html)
    text = html.decode()
    assert "cut: the first" in text
    # Every moved pair still shows its conversation, its calls and the first difference
    assert text.count("Conversation before the input (200 messages)") == 800
    assert text.count("First difference at call 100.") == 800
    assert_only_page_markup(text)


@pytest.mark.parametrize(
    ("cost", "shown"),
    [
        ("0.765000", "$0.765"),
        ("0", "$0"),
        ("0.0000004", "less than $0.000001"),
        ("0.000042", "$0.000042"),
        ("12.3456", "$12.35"),
        ("1234567", "$1,234,567.00"),
        (None, "not known (no price for the model)"),
    ],
)
def test_costs_read_as_money(cost: str | None, shown: str) -> None:
    from decimal import Decimal

    from evalsvc.reports.filters import usd

    class Priced:
        def cost(self) -> Decimal | None:
            return None if cost is None else Decimal(cost)

    assert usd(Priced()) == shown  # type: ignore[arg-type]


def test_the_compiled_templates_are_what_the_templates_compile_to(tmp_path: Path) -> None:
    from evalsvc.reports.pages import COMPILED, compile_templates

    compile_templates(tmp_path)

    fresh = {path.name: path.read_bytes() for path in tmp_path.glob("tmpl_*.py")}
    shipped = {path.name: path.read_bytes() for path in COMPILED.glob("tmpl_*.py")}
    assert fresh, "no template was compiled"
    assert shipped == fresh, "reports/compiled/ is not what templates/ compiles to: make templates"


def test_a_route_loads_every_template_from_the_compiled_ones_and_compiles_none() -> None:
    import jinja2
    from evalsvc.reports import pages

    pages.load_templates()

    assert isinstance(pages._ENV.loader, jinja2.ModuleLoader)
    for name in pages.template_names():
        assert pages._ENV.get_template(name).name == name


def inputs(text: str, digest: str | None = "ab" * 32) -> ResultInputs:
    return ResultInputs(
        dataset_version=text,
        version_ms=1_790_000_000_000,
        shards=1,
        append_shards=1,
        definitions_sha256=text,
        judge_model=text,
        judge_prompt_version=text,
        service_version=text,
        prices_date=text,
        pairs_digest=digest,
    )


@settings(max_examples=60, deadline=None)
@given(text=texts, expired=texts)
def test_what_produced_a_result_and_an_expired_version_stay_text_on_both_pages(
    text: str, expired: str
) -> None:
    report = evaluation("d", "r", "t", "c")
    report.result.inputs = inputs(text or "x")
    report.metrics[0].lowest[0].text = PairText(expired=expired or "y")
    compared = comparison("d", "r", "p")
    compared.baseline.inputs = inputs(text or "x")

    for html in (render_evaluation(report).decode(), render_comparison(compared).decode()):
        words = "".join(assert_only_page_markup(html).text)
        assert shown(text or "x") in words
    assert shown(expired or "y") in "".join(Parsed(render_evaluation(report).decode()).text)


@pytest.mark.parametrize(
    ("baseline", "candidate", "said"),
    [
        ("ab" * 32, "ab" * 32, "Both results scored the same pairs"),
        ("ab" * 32, "cd" * 32, "The two results did not score the same pairs"),
        ("ab" * 32, None, "Whether the two results scored the same pairs is not known"),
        (None, None, "Whether the two results scored the same pairs is not known"),
    ],
)
def test_the_comparison_says_whether_the_results_scored_the_same_pairs(
    baseline: str | None, candidate: str | None, said: str
) -> None:
    report = comparison("d", "r", "p")
    report.baseline.inputs = inputs("v1", baseline)
    report.candidate.inputs = inputs("v1", candidate)

    words = "".join(Parsed(render_comparison(report).decode()).text)

    assert said in words
    assert same_pairs(report.baseline, report.candidate) is (
        None if baseline is None or candidate is None else baseline == candidate
    )


def test_a_result_without_inputs_says_they_were_not_recorded() -> None:
    words = "".join(Parsed(render_evaluation(evaluation("d", "r", "t", "c")).decode()).text)
    assert "Not recorded: this result was stored before results kept what produced them" in words
    compared = "".join(Parsed(render_comparison(comparison("d", "r", "p")).decode()).text)
    assert compared.count("not recorded") == 2 * 9  # each row of both sides


@pytest.mark.parametrize(
    ("status", "said"),
    [
        (Status.RUNNING, "Pairs digestnot yet: counted once every pair is scored"),
        (Status.FAILED, "Pairs digestnone: the evaluation did not finish"),
        (Status.COMPLETE, "Pairs digestnot counted: some of its pairs were scored before"),
    ],
)
def test_a_result_without_its_pairs_digest_says_why(status: Status, said: str) -> None:
    report = evaluation("d", "r", "t", "c")
    report.result.status = status
    report.result.inputs = inputs("v1", None)

    words = "".join(Parsed(render_evaluation(report).decode()).text)

    assert said in words.replace("\n", "")
