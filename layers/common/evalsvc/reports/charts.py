"""The geometry of the reports' charts: where each mark goes, computed here; the SVG markup is
written by the templates (charts.html.j2), which escape every text in it.

Coordinates are SVG user units; every chart scales with its viewBox. A value the chart cannot
place (no interval, a NaN that should never be stored) is drawn as absent, not guessed. The
marks are named tuples: immutable, and a tenth of what a frozen dataclass costs to define at a
report function's start.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import NamedTuple

# The forest plots.
ROW_HEIGHT = 24
LABEL_WIDTH = 300
PLOT_WIDTH = 420
VALUE_WIDTH = 170
TOP = 14
AXIS_HEIGHT = 30
LABEL_CHARS = 44


class Tick(NamedTuple):
    x: float
    label: str


class ForestRow(NamedTuple):
    label: str  # cut to LABEL_CHARS
    title: str  # what a screen reader or a hover reads: the whole row in words
    y: float
    x: float | None  # the point estimate; None when there is none
    x_low: float | None
    x_high: float | None
    value: str  # the estimate and its interval, as text beside the row
    tone: str  # a CSS class: neutral, better, worse
    # A second, wider interval drawn as a pale band behind the first (E6's clustered one).
    x_wide_low: float | None = None
    x_wide_high: float | None = None


class Forest(NamedTuple):
    title: str
    description: str
    width: float
    height: float
    plot_x0: float
    plot_x1: float
    axis_y: float
    ticks: list[Tick]
    reference_x: float | None  # a vertical line (0 for differences)
    rows: list[ForestRow]


def short(text: str, chars: int = LABEL_CHARS) -> str:
    """`text` on one line, cut to `chars` characters with an ellipsis."""
    line = " ".join(text.split())
    return line if len(line) <= chars else line[: chars - 1].rstrip() + "…"


def _finite(value: float | None) -> float | None:
    return value if value is not None and math.isfinite(value) else None


class _Scale:
    def __init__(self, low: float, high: float, x0: float, x1: float) -> None:
        self.low, self.high, self.x0, self.x1 = low, high, x0, x1

    def __call__(self, value: float | None) -> float | None:
        value = _finite(value)
        if value is None:
            return None
        clamped = min(self.high, max(self.low, value))
        return round(
            self.x0 + (clamped - self.low) / (self.high - self.low) * (self.x1 - self.x0), 2
        )


class Estimate(NamedTuple):
    """One row of a forest plot: a label, the estimate, its interval, and how it reads."""

    label: str
    estimate: float | None
    low: float | None
    high: float | None
    tone: str = "neutral"
    note: str = ""  # added to the row's title (a verdict)
    # A second interval, drawn as a pale band behind the first and named by `wide_name` in
    # the row's text ("clustered"): E6's clustered interval beside the independent one.
    wide_low: float | None = None
    wide_high: float | None = None
    wide_name: str = ""


def _fmt(value: float | None, signed: bool) -> str:
    value = _finite(value)
    if value is None:
        return "—"
    return f"{value:+.2f}" if signed else f"{value:.2f}"


def forest(
    estimates: Sequence[Estimate],
    *,
    title: str,
    description: str,
    low: float,
    high: float,
    ticks: Sequence[float],
    reference: float | None = None,
    signed: bool = False,
) -> Forest:
    """A forest plot of `estimates` on the axis `low`..`high`."""
    x0 = LABEL_WIDTH + 10
    x1 = x0 + PLOT_WIDTH
    scale = _Scale(low, high, x0, x1)
    rows = []
    for i, e in enumerate(estimates):
        value = _fmt(e.estimate, signed)
        if _finite(e.low) is not None and _finite(e.high) is not None:
            value += f" [{_fmt(e.low, signed)}, {_fmt(e.high, signed)}]"
        wide = _finite(e.wide_low) is not None and _finite(e.wide_high) is not None
        words = f"{e.label}: {value}"
        if wide:
            words += f", {e.wide_name} [{_fmt(e.wide_low, signed)}, {_fmt(e.wide_high, signed)}]"
        words += f", {e.note}" if e.note else ""
        rows.append(
            ForestRow(
                label=short(e.label),
                title=words,
                y=TOP + i * ROW_HEIGHT + ROW_HEIGHT / 2,
                x=scale(e.estimate),
                x_low=scale(e.low),
                x_high=scale(e.high),
                value=value,
                tone=e.tone,
                x_wide_low=scale(e.wide_low) if wide else None,
                x_wide_high=scale(e.wide_high) if wide else None,
            )
        )
    axis_y = TOP + len(rows) * ROW_HEIGHT + 4
    return Forest(
        title=title,
        description=description,
        width=x1 + VALUE_WIDTH,
        height=axis_y + AXIS_HEIGHT,
        plot_x0=x0,
        plot_x1=x1,
        axis_y=axis_y,
        ticks=[Tick(scale(t) or x0, _tick_label(t, signed)) for t in ticks],
        reference_x=scale(reference) if reference is not None else None,
        rows=rows,
    )


def _tick_label(value: float, signed: bool) -> str:
    text = f"{value:g}"
    return f"+{text}" if signed and value > 0 else text


def difference_extent(values: Sequence[float | None]) -> float:
    """A symmetric axis half-width for differences of 1-5 scores: the largest magnitude among
    `values`, rounded up to a half, at least 0.5 and at most 4."""
    finite = [abs(v) for v in values if v is not None and math.isfinite(v)]
    largest = max(finite, default=0.0)
    return min(4.0, max(0.5, math.ceil(largest * 2) / 2))


def strength_extent(values: Sequence[float | None]) -> float:
    """A symmetric axis half-width for Bradley-Terry strengths (natural log scale, mean 0): the
    largest magnitude among `values` rounded up to a whole number, at least 1 and at most 8
    (odds of e^8, about 3,000 to 1, between a run and the average; a mark past it is drawn at
    the axis' end, its value written beside the row)."""
    finite = [abs(v) for v in values if v is not None and math.isfinite(v)]
    largest = max(finite, default=0.0)
    return min(8.0, max(1.0, float(math.ceil(largest))))


# ---- histograms --------------------------------------------------------------------------------

HIST_WIDTH = 300
HIST_HEIGHT = 170
HIST_LEFT = 34
HIST_BOTTOM = 34
HIST_TOP = 18


class Bar(NamedTuple):
    x: float
    y: float
    width: float
    height: float
    label: str  # the bin
    pairs: int
    share: str  # "12 %"


class Histogram(NamedTuple):
    title: str
    description: str
    width: float
    height: float
    base_y: float
    bars: list[Bar]


def histogram(counts: Sequence[int], *, title: str) -> Histogram:
    """Bars for the 1-5 score bins; heights relative to the fullest bin."""
    total = sum(counts)
    top = max(counts, default=0) or 1
    plot_h = HIST_HEIGHT - HIST_TOP - HIST_BOTTOM
    slot = (HIST_WIDTH - HIST_LEFT - 8) / max(len(counts), 1)
    bars = []
    for i, count in enumerate(counts):
        h = round(plot_h * count / top, 2)
        bars.append(
            Bar(
                x=round(HIST_LEFT + i * slot + slot * 0.15, 2),
                y=round(HIST_TOP + plot_h - h, 2),
                width=round(slot * 0.7, 2),
                height=h,
                label=str(i + 1),
                pairs=count,
                share=f"{100 * count / total:.0f} %" if total else "0 %",
            )
        )
    words = ", ".join(f"score {b.label}: {b.pairs}" for b in bars)
    return Histogram(
        title=title,
        description=f"{total} scored pairs by score: {words}",
        width=HIST_WIDTH,
        height=HIST_HEIGHT,
        base_y=HIST_TOP + plot_h,
        bars=bars,
    )


# ---- wins, ties and losses -----------------------------------------------------------------------

WTL_BAR_WIDTH = 420


class Segment(NamedTuple):
    x: float
    width: float
    pairs: int
    kind: str  # win, tie, loss


class WtlRow(NamedTuple):
    label: str
    title: str
    y: float
    segments: list[Segment]


class WinsTiesLosses(NamedTuple):
    title: str
    description: str
    width: float
    height: float
    rows: list[WtlRow]


def wins_ties_losses(rows: Sequence[tuple[str, int, int, int]], *, title: str) -> WinsTiesLosses:
    """A stacked bar per metric: the pairs the candidate scored higher on (wins), the same
    (ties), lower (losses), as shares of the metric's pairs."""
    x0 = LABEL_WIDTH + 10
    drawn = []
    for i, (label, wins, ties, losses) in enumerate(rows):
        total = wins + ties + losses
        x = float(x0)
        segments = []
        for kind, count in (("win", wins), ("tie", ties), ("loss", losses)):
            width = round(WTL_BAR_WIDTH * count / total, 2) if total else 0.0
            segments.append(Segment(round(x, 2), width, count, kind))
            x += width
        drawn.append(
            WtlRow(
                label=short(label),
                title=f"{label}: {wins} wins, {ties} ties, {losses} losses",
                y=TOP + i * ROW_HEIGHT,
                segments=segments,
            )
        )
    return WinsTiesLosses(
        title=title,
        description="Per metric, the matched pairs the candidate scored higher (wins), the "
        "same (ties) and lower (losses) than the baseline.",
        width=x0 + WTL_BAR_WIDTH + VALUE_WIDTH,
        height=TOP + len(drawn) * ROW_HEIGHT + 10,
        rows=drawn,
    )


# ---- trends: a metric over a monitor's runs ------------------------------------------------------

TREND_WIDTH = 720
TREND_LEFT = 34
TREND_RIGHT = 14
TREND_TOP = 10
TREND_PLOT_HEIGHT = 150
TREND_AXIS_HEIGHT = 40
# Half the width of a triangle (a regression, an improvement) and of a cross (a failed run).
MARK_SIZE = 5.0


class YTick(NamedTuple):
    y: float
    label: str


class TrendValue(NamedTuple):
    """One run's place on a trend, oldest first: `when` it ran (UTC, as the page writes it:
    2026-11-26 00:36:07.123), its mean and
    interval for the metric (None when it has none), and how it is marked: dot, regressed,
    improved, failed (a cross on the axis, no figure), or none (nothing drawn: running, or the
    metric not in that run). `words`: the mark's title."""

    when: str
    mean: float | None
    low: float | None
    high: float | None
    mark: str
    words: str


class TrendMark(NamedTuple):
    x: float
    y: float | None  # the mean; None when nothing is drawn at a height (a failed run, none)
    y_low: float | None
    y_high: float | None
    mark: str
    tone: str  # a CSS class: neutral, better, worse
    title: str
    shape: str  # an SVG path: a triangle for regressed and improved, a cross for failed; else ""


class Trend(NamedTuple):
    title: str
    description: str
    width: float
    height: float
    plot_x0: float
    plot_x1: float
    plot_top: float
    axis_y: float
    ticks: list[YTick]
    labels: list[Tick]  # dates under the axis (x: where the label is anchored)
    anchors: list[str]  # text-anchor of each label: start, middle, end
    marks: list[TrendMark]
    line: str  # an SVG path through the means, broken where a run has none


_TONE_OF_MARK = {"regressed": "worse", "improved": "better", "failed": "worse"}


def _shape(mark: str, x: float, y: float | None, axis_y: float) -> str:
    s = MARK_SIZE
    if mark == "regressed" and y is not None:  # a triangle pointing down
        return f"M{x - s:.2f} {y - s:.2f}L{x + s:.2f} {y - s:.2f}L{x:.2f} {y + s:.2f}Z"
    if mark == "improved" and y is not None:  # a triangle pointing up
        return f"M{x - s:.2f} {y + s:.2f}L{x + s:.2f} {y + s:.2f}L{x:.2f} {y - s:.2f}Z"
    if mark == "failed":  # a cross on the axis
        return (
            f"M{x - s:.2f} {axis_y - s:.2f}L{x + s:.2f} {axis_y + s:.2f}"
            f"M{x - s:.2f} {axis_y + s:.2f}L{x + s:.2f} {axis_y - s:.2f}"
        )
    return ""


def trend(
    values: Sequence[TrendValue],
    *,
    title: str,
    description: str,
    low: float,
    high: float,
    ticks: Sequence[float],
) -> Trend:
    """A trend of `values` (oldest first), each run in a slot of its own, equally spaced, on a
    vertical axis `low`..`high` (a value past it is drawn at its end, its figure in the
    title)."""
    x0 = float(TREND_LEFT)
    x1 = float(TREND_WIDTH - TREND_RIGHT)
    top = float(TREND_TOP)
    axis_y = top + TREND_PLOT_HEIGHT
    scale = _Scale(low, high, axis_y, top)  # upwards: `high` at the top
    slot = (x1 - x0) / max(len(values), 1)
    marks = []
    line: list[str] = []
    joined = False
    for i, v in enumerate(values):
        x = round(x0 + slot * (i + 0.5), 2)
        y = None if v.mark in ("none", "failed") else scale(v.mean)
        if y is not None:
            line.append(f"{'L' if joined else 'M'}{x:.2f} {y:.2f}")
        joined = y is not None
        marks.append(
            TrendMark(
                x=x,
                y=y,
                y_low=scale(v.low) if y is not None else None,
                y_high=scale(v.high) if y is not None else None,
                mark=v.mark,
                tone=_TONE_OF_MARK.get(v.mark, "neutral"),
                title=v.words,
                shape=_shape(v.mark, x, y, axis_y),
            )
        )
    labels: list[Tick] = []
    anchors: list[str] = []
    if values:
        picks = [0] if len(values) == 1 else [0, len(values) - 1]
        if len(values) >= 5:
            picks.insert(1, len(values) // 2)
        for i in picks:
            labels.append(Tick(marks[i].x, _day_and_time(values[i].when)))
            first, last = i == 0, i == len(values) - 1
            anchors.append(
                "start" if first and not last else "end" if last and not first else "middle"
            )
    return Trend(
        title=title,
        description=description,
        width=TREND_WIDTH,
        height=axis_y + TREND_AXIS_HEIGHT,
        plot_x0=x0,
        plot_x1=x1,
        plot_top=top,
        axis_y=axis_y,
        ticks=[YTick(scale(t) or axis_y, _tick_label(t, False)) for t in ticks],
        labels=labels,
        anchors=anchors,
        marks=marks,
        line="".join(line),
    )


def _day_and_time(when: str) -> str:
    """2026-11-26 00:36:07.123 (or 2026-11-26T00:36:07.123Z) as 2026-11-26 00:36."""
    return when[:16].replace("T", " ")
