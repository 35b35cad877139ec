"""Monitors (E8): the request that makes one. What can be checked without reading anything is
checked here (a 400 naming the field; a name's control character is named as a code point,
U+202E, with where it is, never echoed); the metrics set (does a metric need the judge, so
that max_cost_usd is required), the dataset and the webhook's addresses are checked by the
logic."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationInfo,
    field_validator,
    model_validator,
)

from evalsvc.core.controls import first_control
from evalsvc.core.errors import InvalidInput
from evalsvc.core.identifiers import CLIENT_ID_PATTERN
from evalsvc.models.common import MIN_ALPHA, ListNextCursor
from evalsvc.models.datasets import PairQuery
from evalsvc.models.usage import max_cost_usd_field
from evalsvc.monitoring import schedules
from evalsvc.monitoring.webhook_targets import MAX_URL_CHARS

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


RunStatus = Literal["claimed", "running", "complete", "failed"]


AlertStatus = Literal["pending", "delivered", "failed"]


@dataclass(frozen=True, slots=True)
class Due:
    """Something the dispatcher has to do now: a monitor's next run (`run_ms` None), or the
    alert of the run scheduled for `run_ms`; `at_ms` is when it came due."""

    tenant: str
    monitor_id: str
    at_ms: int
    run_ms: int | None = None


@dataclass(frozen=True, slots=True)
class StoredMonitor:
    """A monitor as stored: what was asked (`body`, JSON), when (`created_ms`: a rate's
    anchor), its next run, and the time of the run claimed last (None: none since monitors
    kept it)."""

    tenant: str
    monitor_id: str
    body: str
    created_ms: int
    next_run_ms: int
    last_run_ms: int | None = None


@dataclass(frozen=True, slots=True)
class RunMetric:
    """One metric of a run: its place among its result's definitions, its mean and interval,
    and its verdict against the baseline (None: no baseline, or not a shared metric)."""

    index: int
    mean: float
    ci_low: float
    ci_high: float
    verdict: str | None
    # Pairs shared with the baseline whose score fell by at least the monitor's
    # regression_threshold (None: no baseline, or not a shared metric).
    pairs_regressed: int | None = None

    def as_json(self) -> list[Any]:
        return [
            self.index,
            self.mean,
            self.ci_low,
            self.ci_high,
            self.verdict,
            self.pairs_regressed,
        ]

    @classmethod
    def from_json(cls, value: Sequence[Any]) -> RunMetric:
        index, mean, low, high, verdict, *rest = value
        regressed = rest[0] if rest else None
        return cls(
            int(index),
            float(mean),
            float(low),
            float(high),
            verdict,
            None if regressed is None else int(regressed),
        )


@dataclass(frozen=True, slots=True)
class Alert:
    status: AlertStatus
    attempts: int = 0
    http_status: int | None = None
    # Times the alert was taken for delivery (each try a lease).
    leases: int = 0
    # While pending: when it may be tried (now, or when its lease ends).
    due_ms: int | None = None


# A run waits on its evaluation at most this long (the evaluation's own job ends long before:
# the sweeper fails a stalled one), then fails (logic.kinds.monitor_run).
MAX_WAIT_MS = 24 * 3_600_000
# A run not ended this long after its time is taken for dead (its end was lost): it no longer
# holds its monitor, whose other runs may start (logic.monitors).
HOLD_MS = MAX_WAIT_MS + 3_600_000


@dataclass(slots=True)
class Run:
    """One run of a monitor, as recorded."""

    tenant: str
    monitor_id: str
    scheduled_ms: int
    status: RunStatus
    manual: bool = False
    result_id: str | None = None
    baseline_id: str | None = None
    metrics: list[RunMetric] = field(default_factory=list)
    # The definitions_sha256 of the result's definitions (which the metrics' indexes name).
    definitions_sha256: str | None = None
    pairs_matched: int | None = None
    cost_usd: str | None = None
    failure: str | None = None
    finished_ms: int | None = None
    alert: Alert | None = None

    @property
    def regressed(self) -> list[int]:
        return [m.index for m in self.metrics if m.verdict == "regressed"]


PREVIOUS = "previous"


def run_id(monitor_id: str, scheduled_ms: int) -> str:
    """A run's id: its monitor's and the time it was scheduled for."""
    return f"{monitor_id}.{scheduled_ms}"
