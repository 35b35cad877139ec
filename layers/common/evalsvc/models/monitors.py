"""Monitors (E8): the request that makes one. What can be checked without reading anything is
checked here (a 400 naming the field; a name's control character is named as a code point,
U+202E, with where it is, never echoed); the metrics set (does a metric need the judge, so
that max_cost_usd is required), the dataset and the webhook's addresses are checked by the
logic."""

from __future__ import annotations

from typing import Annotated

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationInfo,
    field_validator,
    model_validator,
)

from evalsvc import schedules
from evalsvc.controls import first_control
from evalsvc.errors import InvalidInput
from evalsvc.identifiers import CLIENT_ID_PATTERN
from evalsvc.models.common import ListNextCursor
from evalsvc.models.comparisons import MIN_ALPHA
from evalsvc.models.evaluations import PairQuery
from evalsvc.models.usage import max_cost_usd_field
from evalsvc.webhook_targets import MAX_URL_CHARS

MAX_NAME_CHARS = 200
MIN_SECRET_CHARS = 16
MAX_SECRET_CHARS = 256
# What a run evaluates when the monitor names no pair_query: the newest 200 pairs.
DEFAULT_PAIRS = 200


# The validation context of a monitor read back from storage (MonitorIn.from_stored).
_STORED = {"stored": True}


class MonitorIn(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid")

    name: Annotated[str, Field(min_length=1, max_length=MAX_NAME_CHARS)]
    seed_data_id: Annotated[str, Field(pattern=CLIENT_ID_PATTERN)]
    metrics_id: Annotated[str, Field(pattern=CLIENT_ID_PATTERN)]
    schedule: Annotated[
        str,
        Field(
            max_length=schedules.MAX_SCHEDULE_CHARS,
            description="rate(N minutes|hours|days) or a 5-field cron in UTC, at least 5 "
            "minutes apart",
        ),
    ]
    pair_query: PairQuery = Field(
        default_factory=lambda: PairQuery(latest_n_pairs=DEFAULT_PAIRS),
        description='Which pairs each run evaluates (default {"latest_n_pairs": 200})',
    )
    baseline: str = Field(
        default="previous",
        description='"previous" (the last complete run) or an evaluation result id',
        pattern=CLIENT_ID_PATTERN,
    )
    alpha: float = Field(default=0.05, ge=MIN_ALPHA, lt=0.5, allow_inf_nan=False)
    regression_threshold: float = Field(default=1.0, gt=0, allow_inf_nan=False)
    max_cost_usd: float | None = max_cost_usd_field("POST /evaluate/estimate")
    webhook_url: Annotated[str, Field(min_length=1, max_length=MAX_URL_CHARS)] | None = None
    webhook_secret: (
        Annotated[str, Field(min_length=MIN_SECRET_CHARS, max_length=MAX_SECRET_CHARS)] | None
    ) = None

    @classmethod
    def from_stored(cls, body: str) -> MonitorIn:
        """A monitor as stored (its body, JSON): read as it was accepted, without the checks
        that come after it was (a name stored with a control character reads back as it was,
        and the report pages neutralise it)."""
        return cls.model_validate_json(body, strict=False, context=_STORED)

    @field_validator("name")
    @classmethod
    def _name(cls, value: str, info: ValidationInfo) -> str:
        found = None if info.context == _STORED else first_control(value)
        if found is not None:
            place, what = found
            raise ValueError(
                f"character {place} is {what}: a name is one line of text that shows as it "
                "reads, so it may hold no control character, bidirectional control or lone "
                "surrogate; remove it"
            )
        return value

    @field_validator("schedule")
    @classmethod
    def _schedule(cls, value: str) -> str:
        try:
            schedules.parse(value)
        except InvalidInput as error:
            raise ValueError(error.message) from None
        return value

    @model_validator(mode="after")
    def _webhook(self) -> MonitorIn:
        if (self.webhook_url is None) != (self.webhook_secret is None):
            raise ValueError(
                "webhook_url and webhook_secret go together: the secret signs every post "
                f"(X-Evalsvc-Signature), at least {MIN_SECRET_CHARS} characters"
            )
        return self


# ---- responses ---------------------------------------------------------------------------------


class MonitorCreated(BaseModel):
    monitor_id: str
    next_run_at: str = Field(description="When its first run is scheduled (ISO 8601, UTC)")


class MonitorOut(BaseModel):
    """A monitor as asked for (never its webhook_secret), and when it runs next."""

    monitor_id: str
    name: str
    seed_data_id: str
    metrics_id: str
    schedule: str
    pair_query: PairQuery
    baseline: str
    alpha: float
    regression_threshold: float
    max_cost_usd: float | None
    webhook_url: str | None
    created_at: str
    next_run_at: str


class MonitorsOut(BaseModel):
    monitors: list[MonitorOut] = Field(description="The tenant's monitors, oldest first")
    next_cursor: ListNextCursor


class MonitorDeleted(BaseModel):
    monitor_id: str
    deleted: bool = True
    runs_removed: int = Field(
        description="Run records removed now (any left expire with the history's retention)"
    )


class RunStarted(BaseModel):
    monitor_id: str
    run_id: str
    scheduled_for: str = Field(description="The run's time (now), ISO 8601 UTC")


class RunRunningOut(BaseModel):
    """POST /monitors/{id}/run's 409: a run of the monitor is running (a monitor runs one at a
    time)."""

    error: str
    run_id: str = Field(description="The run that is running: follow it in the history")


class RunMetricOut(BaseModel):
    metric: str = Field(description="The metric's definition")
    mean: float
    ci_low: float
    ci_high: float
    verdict: str | None = Field(
        description="Against the baseline (E1): improved, regressed, no_significant_difference "
        "or insufficient_data; null with no baseline or for a metric the baseline lacks"
    )
    pairs_regressed: int | None = Field(
        description="Pairs shared with the baseline whose score fell by at least the monitor's "
        "regression_threshold; null when there is no verdict"
    )


class WebhookOut(BaseModel):
    status: str = Field(description="delivered, failed or pending")
    attempts: int
    http_status: int | None


class RunOut(BaseModel):
    run_id: str
    scheduled_for: str
    status: str = Field(description="claimed, running, complete or failed")
    manual: bool = Field(description="Asked for with POST /monitors/{id}/run")
    result_id: str | None
    baseline_id: str | None = Field(
        description='null for a first run with "previous" (nothing to compare with)'
    )
    metrics: list[RunMetricOut]
    pairs_matched: int | None = Field(
        description="Pairs the run shares with its baseline (the comparison is paired)"
    )
    cost_usd: float | None
    failure: str | None
    webhook: WebhookOut | None


class RunsOut(BaseModel):
    runs: list[RunOut] = Field(description="Newest first")
    next_cursor: ListNextCursor
