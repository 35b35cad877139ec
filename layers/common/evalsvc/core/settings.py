"""Runtime settings, read from the environment on first use (never at import time)."""

import os
from decimal import Decimal
from functools import cache
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr


class Settings(BaseModel):
    model_config = ConfigDict(frozen=True)

    region: str = "us-east-1"
    datasets_table: str = "evalsvc-datasets"
    api_keys_table: str = "evalsvc-api-keys"
    metrics_table: str = "evalsvc-metrics"
    results_table: str = "evalsvc-results"
    jobs_table: str = "evalsvc-jobs"
    critiques_table: str = "evalsvc-critiques"
    usage_table: str = "evalsvc-usage"
    monitors_table: str = "evalsvc-monitors"
    # Set for the embedded local store (and tests); None means the real DynamoDB endpoint.
    dynamodb_endpoint_url: str | None = None
    judge_cache_table: str = "evalsvc-judge-cache"
    idempotency_table: str = "evalsvc-idempotency"
    idempotency_ttl_seconds: int = 24 * 3600
    # The LLM judge: "bedrock:<model-id>" or "openai:<model>"; empty means none (checks only).
    llm: str = ""
    openai_base_url: str = "https://api.openai.com/v1"
    openai_api_key: SecretStr = SecretStr("")
    # The Secrets Manager secret (ARN or name) holding the OpenAI key, deployed; when set, the
    # key is read from it (scoring/llm/credentials.py) and OPENAI_API_KEY is not used.
    openai_api_key_secret_arn: str = ""
    # How an OpenAI-compatible server is asked for structured output: "auto" finds the first
    # mode it takes (scoring/llm/structured.py) and remembers it; a mode's name pins that mode.
    llm_structured: Literal["auto", "json_schema", "json_object", "tools", "prompt"] = "auto"
    judge_concurrency: int = 16
    judge_max_attempts: int = 4
    judge_timeout_seconds: float = 30.0
    judge_retry_base_seconds: float = 0.5
    judge_cache_days: int = 30
    # Prices (USD per million tokens) over the built-in table: JSON, read by
    # evalsvc.spending.prices.
    prices: str = ""
    # The monthly LLM spending limit of a tenant that has none of its own (None: no default);
    # `evalsvc tenants set-limit` gives a tenant its own, or the explicit choice of none.
    default_monthly_limit_usd: Decimal | None = Field(default=None, ge=0, le=10_000_000)
    # Seconds an authenticated key stays cached in a warm process. Revocation takes effect
    # within this window.
    auth_cache_seconds: float = 60.0
    # Evaluations and augmentations too large for one request run as chunks on this SQS queue
    # (None: always inline). The endpoint is set for the embedded local store and tests.
    work_queue_url: str | None = None
    sqs_endpoint_url: str | None = None
    # Partition keys the pairs appended to a new dataset version spread over, and the most its
    # written pairs do (as many as their write needs; each is one item collection: 10 GB and
    # 1,000 write units a second; docs/design.md, "Datasets in DynamoDB" and "Appends"). The
    # embedded local store serves one request at a time, where a query per shard only adds
    # calls: it uses 1.
    dataset_shards: int = Field(default=16, ge=1, le=64)
    # Batch writes sent at once by one request (each waits for DynamoDB's round trip). The
    # embedded local store runs them one at a time in this process: it uses 1.
    write_threads: int = Field(default=8, ge=1, le=32)
    # One chunk of a queued evaluation: at most this many check scorings, and this many LLM
    # judge calls (a judge call costs about as much time as thousands of checks).
    chunk_checks: int = Field(default=10_000, ge=1)
    chunk_judge_calls: int = Field(default=500, ge=1)
    # The largest job run inside the request: check scorings, LLM judge calls, and the text of
    # the pairs it reads (or, for an augmentation, writes).
    inline_max_checks: int = Field(default=10_000, ge=0)
    inline_max_judge_calls: int = Field(default=100, ge=0)
    inline_max_bytes: int = Field(default=32 * 1024 * 1024, ge=0)
    # The text of the pairs one chunk of queued work reads (or writes) at most.
    chunk_max_bytes: int = Field(default=32 * 1024 * 1024, ge=1)
    # Augmentation with an LLM: the most generation calls (one per seed pair) made inside the
    # request, and in one chunk of work.
    inline_max_generation_calls: int = Field(default=16, ge=0)
    # Augmentation without an LLM: the most synthetic pairs written inside the request.
    inline_max_synthetic_pairs: int = Field(default=20_000, ge=0)
    chunk_generation_calls: int = Field(default=32, ge=1)
    # How long a plain POST waits for a queued job before answering with its id to poll.
    sync_wait_seconds: float = Field(default=25.0, ge=0)
    # Seconds a request has before API Gateway answers 504 for it (its integration timeout).
    request_seconds: float = Field(default=29.0, gt=0)
    # Seconds before a failed chunk is tried again (doubling with each receive).
    chunk_retry_base_seconds: float = Field(default=10.0, ge=0)
    # A running job with no progress for this long is stalled: the sweeper queues its missing
    # chunks again (at most JOB_MAX_SWEEPS times), then fails it. Longer than a worker may run
    # on one chunk (300 s) plus the longest delay a throttled chunk waits (900 s).
    job_stall_seconds: float = Field(default=1800.0, ge=0)
    # The most queued jobs (evaluations, augmentations) one tenant has running at once; a
    # request that would start one more is a 429 (docs/design.md, "Queued work").
    max_running_jobs_per_tenant: int = Field(default=4, ge=1, le=1000)
    # Days a dataset version is kept after an overwrite replaced it, so that the results that
    # scored it can list its pairs and be run again (E7); then DynamoDB's TTL removes it.
    version_retention_days: int = Field(default=365, ge=1, le=36_500)
    # Monitors' webhooks may post to http://127.0.0.1 (the local server only; never set in
    # the template): EVALSVC_ALLOW_LOCAL_WEBHOOKS=1.
    allow_local_webhooks: bool = False
    # E8: how long a monitor's run records are kept (days after the run), and how often a run
    # waiting on its queued evaluation looks again (seconds).
    monitor_history_days: int = Field(default=400, ge=1, le=36_500)
    monitor_poll_seconds: int = Field(default=30, ge=0, le=900)

    @classmethod
    def from_environ(cls) -> "Settings":
        env = os.environ
        values: dict[str, object] = {
            "region": env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION") or "us-east-1",
        }
        for field, var in (
            ("datasets_table", "DATASETS_TABLE"),
            ("api_keys_table", "API_KEYS_TABLE"),
            ("metrics_table", "METRICS_TABLE"),
            ("results_table", "RESULTS_TABLE"),
            ("jobs_table", "JOBS_TABLE"),
            ("critiques_table", "CRITIQUES_TABLE"),
            ("usage_table", "USAGE_TABLE"),
            ("monitors_table", "MONITORS_TABLE"),
            ("dynamodb_endpoint_url", "DYNAMODB_ENDPOINT_URL"),
            ("auth_cache_seconds", "AUTH_CACHE_SECONDS"),
            ("judge_cache_table", "JUDGE_CACHE_TABLE"),
            ("idempotency_table", "IDEMPOTENCY_TABLE"),
            ("idempotency_ttl_seconds", "IDEMPOTENCY_TTL_SECONDS"),
            ("llm", "EVALSVC_LLM"),
            ("openai_base_url", "OPENAI_BASE_URL"),
            ("openai_api_key", "OPENAI_API_KEY"),
            ("openai_api_key_secret_arn", "OPENAI_API_KEY_SECRET_ARN"),
            ("llm_structured", "EVALSVC_LLM_STRUCTURED"),
            ("judge_concurrency", "JUDGE_CONCURRENCY"),
            ("judge_max_attempts", "JUDGE_MAX_ATTEMPTS"),
            ("judge_timeout_seconds", "JUDGE_TIMEOUT_SECONDS"),
            ("judge_retry_base_seconds", "JUDGE_RETRY_BASE_SECONDS"),
            ("judge_cache_days", "JUDGE_CACHE_DAYS"),
            ("prices", "EVALSVC_PRICES"),
            ("default_monthly_limit_usd", "EVALSVC_DEFAULT_MONTHLY_LIMIT_USD"),
            ("work_queue_url", "WORK_QUEUE_URL"),
            ("sqs_endpoint_url", "SQS_ENDPOINT_URL"),
            ("dataset_shards", "EVALSVC_DATASET_SHARDS"),
            ("write_threads", "EVALSVC_WRITE_THREADS"),
            ("version_retention_days", "EVALSVC_VERSION_RETENTION_DAYS"),
            ("chunk_checks", "EVALSVC_CHUNK_CHECKS"),
            ("chunk_judge_calls", "EVALSVC_CHUNK_JUDGE_CALLS"),
            ("inline_max_checks", "EVALSVC_INLINE_MAX_CHECKS"),
            ("inline_max_judge_calls", "EVALSVC_INLINE_MAX_JUDGE_CALLS"),
            ("inline_max_bytes", "EVALSVC_INLINE_MAX_BYTES"),
            ("chunk_max_bytes", "EVALSVC_CHUNK_MAX_BYTES"),
            ("sync_wait_seconds", "EVALSVC_SYNC_WAIT_SECONDS"),
            ("request_seconds", "EVALSVC_REQUEST_SECONDS"),
            ("inline_max_generation_calls", "EVALSVC_INLINE_MAX_GENERATION_CALLS"),
            ("inline_max_synthetic_pairs", "EVALSVC_INLINE_MAX_SYNTHETIC_PAIRS"),
            ("chunk_generation_calls", "EVALSVC_CHUNK_GENERATION_CALLS"),
            ("job_stall_seconds", "EVALSVC_JOB_STALL_SECONDS"),
            ("chunk_retry_base_seconds", "EVALSVC_CHUNK_RETRY_BASE_SECONDS"),
            ("max_running_jobs_per_tenant", "EVALSVC_MAX_RUNNING_JOBS_PER_TENANT"),
            ("allow_local_webhooks", "EVALSVC_ALLOW_LOCAL_WEBHOOKS"),
            ("monitor_history_days", "EVALSVC_MONITOR_HISTORY_DAYS"),
            ("monitor_poll_seconds", "EVALSVC_MONITOR_POLL_SECONDS"),
        ):
            if env.get(var):
                values[field] = env[var]
        return cls.model_validate(values)


@cache
def get_settings() -> Settings:
    return Settings.from_environ()


def reset_settings() -> None:
    """Forget the cached settings (tests and the local server change the environment)."""
    get_settings.cache_clear()
