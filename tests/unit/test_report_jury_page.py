"""The evaluation page's E13 section, drawn from a result's jury figures and usage: who judged
and how a pair's score is made, the judges' alpha read in the project's words (agree well,
tentatively, disagree, not measured), each judge's mean beside the jury's and each judge's cost
from the usage by model; nothing for a metric without a jury or a result still running; any
judge name stays text."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest
from evalsvc.models.jobs import Status
from evalsvc.models.reports import EvaluationReport
from evalsvc.reports.evaluation_page import render_evaluation
from evalsvc.reports.filters import shown
from evalsvc.reports.jury import jury_sections
from evalsvc.spending.meter import Usage
from evalsvc.statistics.jury import JuryFigures
from evalsvc.statistics.scores import summarize
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import point_service_at
from tests.unit.test_report_pages import assert_only_page_markup, evaluation, result, texts

NAMES = ["openai:a", "openai:b", "openai:c"]


def words(report: EvaluationReport) -> str:
    page = assert_only_page_markup(render_evaluation(report).decode())
    return " ".join("".join(page.text).split())


def with_jury(
    alpha: float | None,
    usage: Usage | None = None,
    names: list[str] = NAMES,
    aggregate: str = "mean",
    status: Status = Status.COMPLETE,
) -> EvaluationReport:
    report = evaluation("Is it right?", "reason", "text", "comment")
    means: list[float | None] = [4.5, 2.0, 3.25][: len(names)] + [1.0] * (len(names) - 3)
    report.result = result(
        ["Is it right?", "check:non_empty"],
        status=status,
        summaries=[summarize([3.0, 3.5]), summarize([5.0])],
        judges=names,
        jury=aggregate,
        juries=None
        if status is not Status.COMPLETE
        else [JuryFigures(names, aggregate, alpha, means), None],
        usage=usage or Usage(),
    )
    return report


def share(model: str, input_tokens: int, output_tokens: int) -> Usage:
    return Usage(llm_calls=6, input_tokens=input_tokens, output_tokens=output_tokens, model=model)


@pytest.mark.parametrize(
    ("alpha", "said"),
    [
        (0.91, "\u03b1 = 0.910 (Krippendorff's alpha over their scores of each pair; 1 is full "
         "agreement, 0 no more than chance); the judges agree well (0.8 or more): the jury's "
         "score can be read as one."),
        (0.8, "the judges agree well (0.8 or more)"),
        (0.7, "\u03b1 = 0.700 (Krippendorff's alpha over their scores of each pair; 1 is full "
         "agreement, 0 no more than chance); the judges agree only tentatively (0.667 to 0.8)"),
        (0.667, "the judges agree only tentatively"),
        (0.42, "the judges disagree (below 0.667): the jury's score averages different "
         "readings of the metric; read the pairs where they differ, and make the metric's "
         "wording more precise before relying on it."),
        (-0.3, "\u03b1 = -0.300"),
        (None, "Agreement between the judges: \u03b1 not measured: it needs at least 2 scored "
         "pairs and some difference between the scores given."),
    ],
)  # fmt: skip
def test_the_judges_alpha_is_read_in_plain_words(alpha: float | None, said: str) -> None:
    text = words(with_jury(alpha))
    assert "Judged by a jury of 3: openai:a, openai:b, openai:c (mean): each pair's score is " \
        "the mean of the judges' scores." in text  # fmt: skip
    assert said in text
    # The metric without a jury (the check) has no section; the first has one.
    assert text.count("Judged by a jury of") == 1


def test_each_judges_mean_stands_beside_the_jurys_and_its_cost_beside_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # USD per million tokens: a at $2 in, c at $1 in and $4 out; b used no token.
    prices = {NAMES[0]: [2, 8], NAMES[1]: [3, 5], NAMES[2]: [1, 4]}
    prices_json = json.dumps({k: {"input": i, "output": o} for k, (i, o) in prices.items()})
    point_service_at({"EVALSVC_PRICES": prices_json}, monkeypatch)
    usage = Usage.of_parts(
        [share(NAMES[0], 1_000_000, 0), share(NAMES[1], 0, 0), share(NAMES[2], 200_000, 100_000)]
    )
    report = with_jury(0.5, usage, aggregate="median")
    text = words(report)
    assert "Judged by a jury of 3: openai:a, openai:b, openai:c (median): each pair's score is " \
        "the median of the judges' scores." in text  # fmt: skip
    sections = jury_sections(report.result)
    assert sections[1] is None and sections[0] is not None and sections[0].costs
    assert [line.cost for line in sections[0].judges] == [Decimal(2), 0, Decimal("0.6")]
    assert "JudgeMean scoreCost (whole evaluation) openai:a4.50$2.00 openai:b2.00$0 " \
        "openai:c3.25$0.6 The jury (median)3.25" in text  # fmt: skip
    # The jury's is the mean of its scores 3.0 and 3.5.
    assert "what each judge's calls cost over the whole evaluation" in text
    # What was run names the jury rather than one judge model.
    assert "Judgesa jury of 3: openai:a, openai:b, openai:c (median of their scores)" in text
    assert "Judge model" not in text


def test_without_usage_by_model_no_cost_is_shown() -> None:
    text = words(with_jury(0.9, Usage(llm_calls=3, input_tokens=10, model=NAMES[0])))
    assert "Cost (whole evaluation)" not in text
    assert "The jury (mean)3.25" in text


def test_a_judge_the_usage_does_not_name_has_no_cost() -> None:
    usage = Usage.of_parts([share(NAMES[0], 100, 10), share(NAMES[1], 100, 10)])
    section = jury_sections(with_jury(0.9, usage).result)[0]
    assert section is not None
    assert [line.costed for line in section.judges] == [True, True, False]
    assert section.judges[2].cost is None


def test_a_running_result_or_one_without_a_jury_has_no_section() -> None:
    assert "Judged by a jury" not in words(with_jury(0.9, status=Status.RUNNING))
    plain = evaluation("Is it right?", "reason", "text", "comment")
    assert "Judged by a jury" not in words(plain) and "Judge model" in words(plain)
    assert jury_sections(plain.result) == [None]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(names=st.lists(texts.filter(bool), min_size=2, max_size=5, unique=True))
def test_any_judge_name_stays_text(names: list[str]) -> None:
    text = "".join(
        assert_only_page_markup(render_evaluation(with_jury(0.3, names=names)).decode()).text
    )
    for name in names:
        assert shown(name) in text


def test_an_unpriced_judges_cost_is_said_not_known(monkeypatch: pytest.MonkeyPatch) -> None:
    point_service_at(
        {"EVALSVC_PRICES": json.dumps({NAMES[0]: {"input": 1, "output": 1}})}, monkeypatch
    )
    usage = Usage.of_parts([share(NAMES[0], 1_000_000, 0), share(NAMES[1], 1_000_000, 0)])
    text = words(with_jury(0.9, usage))
    assert "openai:a4.50$1.00 openai:b2.00not known (no price for the model) openai:c3.25—" in text
