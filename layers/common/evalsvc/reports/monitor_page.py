"""The monitor page (E8, GET /monitors/{id}/report): what the monitor watches and when it runs
next; for each metric, a chart of its mean and interval over the newest runs (oldest left), a
regression or an improvement marked by its shape as well as its colour, a failed run by a cross,
and the same figures as a table; then the runs, newest first: what each found against its
baseline, its cost and alert, its failure, and links to its evaluation report and comparison.

A metric is followed from run to run by its definition (a monitor of the "latest" metrics set
may see its definitions change); the metrics of a run whose result is gone have no known
definition, and are drawn apart, by their place in the run's set, saying so.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from decimal import Decimal, InvalidOperation
from typing import NamedTuple
from urllib.parse import quote, urlencode

from markupsafe import Markup, escape

from evalsvc.core.identifiers import format_ms
from evalsvc.models.metric_sets import MAX_DEFINITIONS
from evalsvc.models.monitors import PREVIOUS, Run, run_id
from evalsvc.models.reports import MonitorReport
from evalsvc.reports import charts
from evalsvc.reports.comparison_page import VERDICT_WORDS
from evalsvc.reports.filters import money, number, shown
from evalsvc.reports.limits import WORST_BYTES_PER_CHAR, Limits
from evalsvc.reports.pages import render
from evalsvc.statistics.scores import CONFIDENCE, SCALE_MAX, SCALE_MIN

MONITOR_PAGE = "monitor.html.j2"
# The most metrics charted (a set holds at most this many; more are seen only when the
# definitions changed between runs): the rest are in the runs' table.
MAX_CHARTS = MAX_DEFINITIONS
# The most metrics not charted that the page names (by the start of their definitions); a run's
# evaluation report names the rest.
MAX_UNCHARTED_NAMED = 200
UNCHARTED_CHARS = 80
# Budgets (bytes of escaped text) for the metrics' definitions and the runs' failures, divided
# among those the page shows.
DEFINITION_BUDGET = 1_000_000
FAILURE_BUDGET = 1_000_000
# Characters of a metric's definition in a heading.
HEADING_CHARS = 160
# Links to the other report pages, from /v1/monitors/{id}/report.
TO_API_ROOT = "../../"
# A heading's text may break inside a word this long (a name or a definition of no spaces
# would otherwise run past a phone's screen).
BREAK_CHARS = 20
_LONG_WORD = re.compile(rf"\S{{{BREAK_CHARS + 1},}}")

TONES = {"improved": "better", "regressed": "worse"}
STATUS_WORDS = {
    "claimed": "claimed (starting)",
    "running": "running",
    "complete": "complete",
    "failed": "failed",
}

# A metric as the page follows it across runs: its definition and which of its equals in the
# set it is (a set may hold one definition twice), or, with no definition known, its index.
SeriesKey = tuple[str | None, int]


class Series(NamedTuple):
    """A metric followed across the runs: numbered M1, M2, ... in the page's order."""

    number: int
    definition: str | None  # None: not known (the runs' result is gone)
    place: int  # with no definition: its index in the run's metrics set
    charted: bool

    @property
    def name(self) -> str:
        return f"M{self.number}"


class ShownMetric(NamedTuple):
    """One metric of one run, as the runs' table lists it."""

    series: Series
    figure: str  # "4.20 [3.90, 4.50]"
    verdict: str  # in words
    tone: str


class ShownRun(NamedTuple):
    run_id: str
    iso: str  # when it was scheduled, ISO 8601 UTC
    when: str  # the same, as the page writes it: 2026-11-26 00:36:07.123
    manual: bool
    status: str
    status_words: str
    metrics: list[ShownMetric]
    definitions_gone: bool  # it has figures, and its result (naming their metrics) is gone
    pairs_matched: str
    cost: str
    alert: str
    failure: str | None
    result_id: str | None
    baseline_id: str | None
    evaluation_href: str | None
    comparison_href: str | None


class FigureRow(NamedTuple):
    """One run in a chart's table: its time and what it found for the metric."""

    iso: str
    when: str
    figure: str
    verdict: str
    tone: str


class MetricChart(NamedTuple):
    series: Series
    trend: charts.Trend
    rows: list[FigureRow]  # oldest first, as the chart reads
    regressions: int
    failures: int


class Latest(NamedTuple):
    """What the page says first: the newest run that ended, and how."""

    run: ShownRun
    regressed: list[Series]


def _key(definitions: Sequence[str], index: int) -> SeriesKey:
    if index >= len(definitions):
        return (None, index)
    definition = definitions[index]
    return (definition, sum(1 for d in definitions[:index] if d == definition))


def _series(report: MonitorReport) -> dict[SeriesKey, Series]:
    """Every metric the runs measured, newest run first, in each run's order."""
    found: dict[SeriesKey, Series] = {}
    for run, definitions in report.runs:
        for m in run.metrics:
            key = _key(definitions, m.index)
            if key not in found:
                number = len(found) + 1
                found[key] = Series(number, key[0], m.index, number <= MAX_CHARTS)
    return found


def breakable(text: str) -> Markup:
    """`text` shown (filters.shown) and escaped, a line break allowed (<wbr>) every BREAK_CHARS
    characters of a longer word: the same text, that wraps."""
    text = shown(text)
    parts: list[Markup] = []
    done = 0
    for word in _LONG_WORD.finditer(text):
        parts.append(escape(text[done : word.start()]))
        long = word.group()
        pieces = (escape(long[i : i + BREAK_CHARS]) for i in range(0, len(long), BREAK_CHARS))
        parts.append(Markup("<wbr>").join(pieces))
        done = word.end()
    parts.append(escape(text[done:]))
    return Markup("").join(parts)


def _when(ms: int) -> str:
    """A time as the page writes it (UTC, to the millisecond): it breaks across lines."""
    return format_ms(ms).replace("T", " ").removesuffix("Z")


def _verdict(run: Run, verdict: str | None) -> str:
    if verdict is not None:
        return VERDICT_WORDS.get(verdict, verdict)
    if run.baseline_id is None:
        return "not compared (no baseline)"
    return "not compared (not a metric of the baseline)"


def _figure(mean: float, low: float, high: float) -> str:
    return f"{number(mean)} [{number(low)}, {number(high)}]"


def _alert(run: Run, has_webhook: bool) -> str:
    alert = run.alert
    if alert is None:
        if run.status not in ("complete", "failed"):
            return "—"
        return "none needed" if has_webhook else "none (no webhook)"
    tries = f"{alert.attempts} attempt{'s' if alert.attempts != 1 else ''}"
    answer = f"HTTP {alert.http_status}" if alert.http_status is not None else "no HTTP answer"
    if alert.status == "delivered":
        return f"delivered ({answer}, {tries})"
    if alert.status == "failed":
        return f"failed after {tries} ({answer})"
    return f"pending ({tries} so far)" if alert.attempts else "pending"


def _cost(cost: str | None) -> str:
    if cost is None:
        return "—"
    try:
        return money(Decimal(cost))
    except InvalidOperation:
        return cost


def _evaluation_href(result_id: str) -> str:
    return f"{TO_API_ROOT}evaluation/{quote(result_id, safe='')}/report"


def _comparison_href(report: MonitorReport, run: Run) -> str | None:
    if run.baseline_id is None or run.result_id is None or run.status != "complete":
        return None
    query = urlencode(
        {
            "baseline_id": run.baseline_id,
            "candidate_id": run.result_id,
            "alpha": f"{report.monitor.alpha:g}",
            "regression_threshold": f"{report.monitor.regression_threshold:g}",
        }
    )
    return f"{TO_API_ROOT}compare/report?{query}"


def _shown_runs(report: MonitorReport, series: dict[SeriesKey, Series]) -> list[ShownRun]:
    has_webhook = report.monitor.webhook_url is not None
    shown = []
    for run, definitions in report.runs:
        metrics = [
            ShownMetric(
                series[_key(definitions, m.index)],
                _figure(m.mean, m.ci_low, m.ci_high),
                _verdict(run, m.verdict),
                TONES.get(m.verdict or "", "neutral"),
            )
            for m in run.metrics
        ]
        shown.append(
            ShownRun(
                run_id=run_id(run.monitor_id, run.scheduled_ms),
                iso=format_ms(run.scheduled_ms),
                when=_when(run.scheduled_ms),
                manual=run.manual,
                status=run.status,
                status_words=STATUS_WORDS.get(run.status, run.status),
                metrics=metrics,
                definitions_gone=bool(run.metrics)
                and any(m.index >= len(definitions) for m in run.metrics),
                pairs_matched="—" if run.pairs_matched is None else f"{run.pairs_matched:,}",
                cost=_cost(run.cost_usd),
                alert=_alert(run, has_webhook),
                failure=(run.failure or "no reason was recorded")
                if run.status == "failed"
                else None,
                result_id=run.result_id,
                baseline_id=run.baseline_id,
                evaluation_href=_evaluation_href(run.result_id) if run.result_id else None,
                comparison_href=_comparison_href(report, run),
            )
        )
    return shown


def _chart(series: Series, shown: Sequence[ShownRun], report: MonitorReport) -> MetricChart:
    """The metric's chart over the runs, oldest first."""
    values: list[charts.TrendValue] = []
    rows: list[FigureRow] = []
    regressions = failures = 0
    for (run, _), seen in zip(reversed(report.runs), reversed(shown), strict=True):
        found = next(
            ((m, s) for m, s in zip(run.metrics, seen.metrics, strict=True) if s.series is series),
            None,
        )
        if found is not None:
            metric, line = found
            mark = metric.verdict if metric.verdict in TONES else "dot"
            regressions += metric.verdict == "regressed"
            words = f"{seen.when} UTC: {line.figure}, {line.verdict}"
            values.append(
                charts.TrendValue(
                    seen.when, metric.mean, metric.ci_low, metric.ci_high, mark, words
                )
            )
            rows.append(FigureRow(seen.iso, seen.when, line.figure, line.verdict, line.tone))
        elif run.status == "failed":
            failures += 1
            # Its failure is in the table of runs: a chart of every metric repeats none.
            words = f"{seen.when} UTC: the run failed"
            values.append(charts.TrendValue(seen.when, None, None, None, "failed", words))
            rows.append(FigureRow(seen.iso, seen.when, "—", "the run failed", "worse"))
        else:
            absent = (
                seen.status_words
                if run.status != "complete"
                else "not measured (not in this run's metrics)"
            )
            values.append(
                charts.TrendValue(seen.when, None, None, None, "none", f"{seen.when} UTC: {absent}")
            )
            rows.append(FigureRow(seen.iso, seen.when, "—", absent, "neutral"))
    label = _label(series)
    confidence = f"{100 * CONFIDENCE:g}"
    description = (
        f"{label}: its mean score (1 to 5) in each of the {len(values)} runs shown, oldest left, "
        f"newest right, one slot per run: a dot at the mean and a bar across its {confidence} % "
        "confidence interval, a line joining the means of runs next to each other; a triangle "
        "pointing down marks a run that regressed against its baseline, one pointing up a run "
        "that improved, a cross on the axis a run that failed."
    )
    measured = [r for r in rows if r.figure != "—"]
    if measured:
        description += f" Newest: {measured[-1].figure} ({measured[-1].when} UTC)."
    description += f" Regressed in {regressions} run{'s' if regressions != 1 else ''}"
    description += f", failed runs: {failures}."
    trend = charts.trend(
        values,
        title=f"{series.name}: mean score over the runs, with its {confidence} % interval",
        description=description,
        low=SCALE_MIN,
        high=SCALE_MAX,
        ticks=[1, 2, 3, 4, 5],
    )
    return MetricChart(series, trend, rows, regressions, failures)


def _label(series: Series) -> str:
    if series.definition is None:
        return f"{series.name} (metric {series.place + 1} of a run whose result is gone)"
    return f"{series.name}. {charts.short(series.definition, charts.LABEL_CHARS)}"


def _share(budget: int, count: int, most: int) -> int:
    if count <= 0:
        return most
    return max(40, min(most, budget // (count * WORST_BYTES_PER_CHAR)))


def _limits(series: int, failures: int) -> Limits:
    most = Limits()
    return most._replace(
        definition=_share(DEFINITION_BUDGET, series, most.definition),
        failure=_share(FAILURE_BUDGET, failures, most.failure),
    )


def _latest(shown: Sequence[ShownRun]) -> Latest | None:
    for run in shown:
        if run.status in ("complete", "failed"):
            regressed = [m.series for m in run.metrics if m.tone == "worse"]
            return Latest(run, regressed)
    return None


def render_monitor(report: MonitorReport, fits: Callable[[bytes], bool] = lambda _: True) -> bytes:
    """The monitor page, as UTF-8 HTML that `fits` accepts (and within MAX_PAGE_BYTES)."""
    series = _series(report)
    shown = _shown_runs(report, series)
    ordered = sorted(series.values(), key=lambda s: s.number)
    sections = [_chart(s, shown, report) for s in ordered if s.charted]
    uncharted = [s for s in ordered if not s.charted]
    failures = sum(1 for r in shown if r.status == "failed")
    monitor = report.monitor
    return render(
        MONITOR_PAGE,
        fits,
        _limits(len(sections), failures),
        report=report,
        monitor=monitor,
        monitor_id=report.stored.monitor_id,
        next_run=_when(report.stored.next_run_ms),
        created=_when(report.stored.created_ms),
        series=ordered,
        sections=sections,
        uncharted=uncharted[:MAX_UNCHARTED_NAMED],
        uncharted_more=max(0, len(uncharted) - MAX_UNCHARTED_NAMED),
        uncharted_chars=UNCHARTED_CHARS,
        runs=shown,
        latest=_latest(shown),
        all_failed=bool(shown) and all(r.status == "failed" for r in shown),
        failures=failures,
        regressed_runs=sum(1 for r in shown if any(m.tone == "worse" for m in r.metrics)),
        previous=monitor.baseline == PREVIOUS,
        baseline_href=None if monitor.baseline == PREVIOUS else _evaluation_href(monitor.baseline),
        max_cost=None
        if monitor.max_cost_usd is None
        else money(Decimal(str(monitor.max_cost_usd))),
        confidence=f"{100 * CONFIDENCE:g}",
        heading_chars=HEADING_CHARS,
        breakable=breakable,
    )
