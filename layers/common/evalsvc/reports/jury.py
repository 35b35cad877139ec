"""E13 on the evaluation page: for each metric a jury judged, its judges and how they make a
pair's score, how far they agree with each other (Krippendorff's alpha, read in plain words by
the project's own guidance), each judge's mean score beside the jury's, and what each judge's
calls cost (the result's usage by model), so a reader sees whether the jury's figure is one
opinion or an average of several."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from evalsvc.models.evaluations import EvaluationResult
from evalsvc.spending.meter import Usage

# The project's reading of the judges' alpha: at or above GOOD they agree well, at or above
# TENTATIVE tentatively, below it they disagree.
GOOD = 0.8
TENTATIVE = 0.667
AGGREGATE_WORDS = {
    "mean": "each pair's score is the mean of the judges' scores",
    "median": "each pair's score is the median of the judges' scores",
}


@dataclass(frozen=True, slots=True)
class JudgeLine:
    """One judge of the jury: its name, its mean score on the metric (None: no pair scored),
    and its calls' cost over the whole evaluation, when the usage names it (`costed`: False
    when the usage has no part for it: its cost is not shown)."""

    name: str
    mean: float | None
    cost: Decimal | None = None
    costed: bool = False


@dataclass(frozen=True, slots=True)
class JurySection:
    judges: list[JudgeLine]
    aggregate: str
    alpha: float | None
    # The jury's own mean score on the metric (the mean of its aggregated scores).
    jury_mean: float | None
    # Whether any judge's cost is shown (the result's usage is by model).
    costs: bool

    @property
    def aggregate_words(self) -> str:
        return AGGREGATE_WORDS.get(
            self.aggregate, f"each pair's score is the judges' {self.aggregate}"
        )

    @property
    def reading(self) -> str:
        """The alpha in plain words, and what to do about it."""
        if self.alpha is None:
            return (
                "not measured: it needs at least 2 scored pairs and some difference between the "
                "scores given"
            )
        if self.alpha >= GOOD:
            return "the judges agree well (0.8 or more): the jury's score can be read as one"
        if self.alpha >= TENTATIVE:
            return (
                "the judges agree only tentatively (0.667 to 0.8): read the jury's score with "
                "care, and look at the pairs where they differ"
            )
        return (
            "the judges disagree (below 0.667): the jury's score averages different readings "
            "of the metric; read the pairs where they differ, and make the metric's wording "
            "more precise before relying on it"
        )


def _shares(usage: Usage) -> dict[str, Usage]:
    return {part.model: part for part in usage.shares}


def jury_sections(result: EvaluationResult) -> list[JurySection | None]:
    """Per metric, its jury's section (None for a metric no jury judged, and for every metric
    before the result completed)."""
    juries = result.juries or []
    shares = _shares(result.usage)
    sections: list[JurySection | None] = []
    for idx in range(len(result.definitions)):
        figures = juries[idx] if idx < len(juries) else None
        if figures is None:
            sections.append(None)
            continue
        lines = [
            JudgeLine(name, mean, share.cost(), True)
            if (share := shares.get(name)) is not None
            else JudgeLine(name, mean)
            for name, mean in zip(figures.judges, figures.means, strict=True)
        ]
        summary = result.summaries[idx] if idx < len(result.summaries) else None
        sections.append(
            JurySection(
                lines,
                figures.aggregate,
                figures.alpha,
                summary.mean if summary is not None else None,
                any(line.costed for line in lines),
            )
        )
    return sections
