"""Every report page (evaluation, comparison, pairwise, monitor) shows a tenant's text by one
rule (reports.filters.shown): whatever the text, the page holds no control character (but tab
and line breaks), no bidirectional control and no lone surrogate as it is, each shown as
U+FFFD where the text was, and the rest of the text as written."""

from __future__ import annotations

from evalsvc.reports.comparison_page import render_comparison
from evalsvc.reports.evaluation_page import render_evaluation
from evalsvc.reports.filters import cut
from evalsvc.reports.monitor_page import breakable, render_monitor
from evalsvc.reports.pairwise_page import render_pairwise
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.integration.test_monitor_report import assert_safe, in_memory
from tests.unit.test_pairwise_page import disagreement, ladder, stats_report
from tests.unit.test_report_pages import (
    UNSHOWN,
    assert_only_page_markup,
    comparison,
    evaluation,
    inputs,
    shown,
)

# Text made mostly of what a page must not write as it is, among letters, markup and emoji.
hostile = st.text(
    st.sampled_from(sorted(UNSHOWN))
    | st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF)
    | st.sampled_from(["a", " ", "\n", "\t", "\r", "<", "&", '"', "\u200d", "😀", "\u05d0"]),
    min_size=1,
    max_size=40,
)


def raw(html: bytes) -> set[str]:
    """What the page writes as it is of what it must not."""
    text = html.decode("utf-8")  # a lone surrogate would not have been encoded
    return {ch for ch in text if ch in UNSHOWN}


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=hostile)
def test_no_page_writes_a_control_or_bidirectional_character_of_any_text(text: str) -> None:
    # Given the same text in every field a tenant (or a model) writes, on every page
    evaluated = evaluation(text, text, text, text)
    evaluated.result.inputs = inputs(text)
    compared = comparison(text, text, text)
    runs = [f"{text}1", f"{text}2", "r3"]
    judged = stats_report(
        runs,
        ladder(3),
        disagreements=[disagreement(text, runs[0], runs[1], text, text)],
        pairwise_id=text,
        question=text,
        status="failed",
        failure=text,
    )
    watched = in_memory(text, [text, "check:non_empty"], text)

    # When each page is drawn
    pages = {
        "evaluation": render_evaluation(evaluated),
        "comparison": render_comparison(compared),
        "pairwise": render_pairwise(judged),
        "monitor": render_monitor(watched),
    }

    # Then none writes a control or bidirectional character as it is, and each shows the text
    for name, html in pages.items():
        assert raw(html) == set(), name
        if name == "monitor":
            words = assert_safe(html.decode()).words
        else:
            words = "".join(assert_only_page_markup(html.decode()).text)
        assert shown(text) in words, name


@given(text=hostile, chars=st.integers(1, 50))
def test_the_markup_made_in_python_shows_texts_by_the_same_rule(text: str, chars: int) -> None:
    assert not set(str(cut(text, chars))) & UNSHOWN
    assert not set(str(breakable(text))) & UNSHOWN
    assert str(cut(text, 100)) == str(cut(shown(text), 100))
