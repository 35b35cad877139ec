"""A metric's clustered figures (E6) as the answers show them (POST /evaluate, GET
/evaluation/{id}, POST /compare). Apart from models.evaluation_out so that POST /compare does
not build the evaluation answers' models for the one it shares with them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from pydantic import BaseModel, Field

if TYPE_CHECKING:
    from evalsvc.statistics.error_bars import ClusteredMean


# A metric's clustered figures (E6): with cluster_by, and null without.
Clusters = Annotated[
    int | None, Field(description="G, the number of clusters (null without cluster_by)")
]
SeClustered = Annotated[
    float | None,
    Field(
        description="sqrt(sum over clusters of (sum in the cluster of (s_i - mean))^2) / n; "
        "null without cluster_by or with fewer than 2 clusters"
    ),
]
CiLowClustered = Annotated[
    float | None,
    Field(
        description="mean - t.ppf(0.975, G - 1) * se_clustered (not clipped to 1-5); null when "
        "se_clustered is"
    ),
]
CiHighClustered = Annotated[
    float | None, Field(description="mean + t.ppf(0.975, G - 1) * se_clustered")
]


class ClusteredOut(BaseModel):
    """A metric's clustered figures (E6): with cluster_by, and null without."""

    clusters: Clusters = None
    se_clustered: SeClustered = None
    ci_low_clustered: CiLowClustered = None
    ci_high_clustered: CiHighClustered = None


def clustered_out(clustered: ClusteredMean | None) -> ClusteredOut:
    """One metric's clustered figures (all null without cluster_by)."""
    if clustered is None:
        return ClusteredOut()
    return ClusteredOut(
        clusters=clustered.clusters,
        se_clustered=clustered.se_clustered,
        ci_low_clustered=clustered.ci_low_clustered,
        ci_high_clustered=clustered.ci_high_clustered,
    )
