"""Runtime settings, read from the environment on first use (never at import time).

Every variable the service reads is EVALSVC_ and the field's name in capitals, read by
pydantic-settings; only AWS's own (AWS_REGION, AWS_DEFAULT_REGION) are read as AWS sets them. A
value that is empty is unset (the default), and a malformed one refuses the settings with
pydantic's ValidationError naming the field. pydantic-settings is imported when the settings are
first read, not with this module: about 11 ms of CPU, which what imports this module without
reading the settings does not pay (docs/performance.md, "Settings read by pydantic-settings").

The names read before every variable carried the prefix (DATASETS_TABLE, JUDGE_CONCURRENCY,
OPENAI_BASE_URL…: the field's name in capitals) are still read for one release, each with a
warning in the log naming it and its new name; when both are set, the new name wins.
"""

from __future__ import annotations

from decimal import Decimal
from functools import cache
from typing import TYPE_CHECKING, Any, Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, SecretStr

if TYPE_CHECKING:
    from pydantic.fields import FieldInfo

ENV_PREFIX = "EVALSVC_"

# The fields read until now from their name in capitals, without the prefix (issue 42): read so
# for one more release, with a warning. Remove with the release after.
UNPREFIXED_UNTIL_NOW = frozenset(
    {
        "datasets_table",
        "api_keys_table",
        "metrics_table",
        "results_table",
        "jobs_table",
        "critiques_table",
        "usage_table",
        "monitors_table",
        "dynamodb_endpoint_url",
        "auth_cache_seconds",
        "judge_cache_table",
        "idempotency_table",
        "idempotency_ttl_seconds",
        "openai_base_url",
        "openai_api_key",
        "openai_api_key_secret_arn",
        "judge_concurrency",
        "judge_max_attempts",
        "judge_timeout_seconds",
        "judge_retry_base_seconds",
        "judge_cache_days",
        "work_queue_url",
        "sqs_endpoint_url",
    }
)


def variable(field: str) -> str:
    """The environment variable a field is read from."""
    return ENV_PREFIX + field.upper()


def old_variable(field: str) -> str | None:
    """The name a field was read from before it had the prefix, if it had another."""
    return field.upper() if field in UNPREFIXED_UNTIL_NOW else None


class Settings(BaseModel):
    """Every field is read from EVALSVC_<FIELD> (EVALSVC_JUDGE_CONCURRENCY for
    judge_concurrency), but the region, which is AWS's own AWS_REGION (or AWS_DEFAULT_REGION)."""

    model_config = ConfigDict(frozen=True)

    region: str = Field(
        default="us-east-1", validation_alias=AliasChoices("AWS_REGION", "AWS_DEFAULT_REGION")
    )
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
    # E13: the judges a metrics set may name as a jury, comma-separated in `llm`'s form; empty
    # means `llm` alone (scoring.llm.jurors).
    judges: str = ""
    # E13: where an OpenAI-compatible judge of `judges` is served when not at openai_base_url
    # with the judge's key: JSON {"openai:<model>": {"base_url": ..., "api_key_secret_arn": ...}}
    # ("api_key" in place of the secret locally; "structured" pins its mode).
    judge_endpoints: str = ""
    openai_base_url: str = "https://api.openai.com/v1"
    openai_api_key: SecretStr = SecretStr("")
    # The Secrets Manager secret (ARN or name) holding the OpenAI key, deployed; when set, the
    # key is read from it (scoring/llm/credentials.py) and EVALSVC_OPENAI_API_KEY is not used.
    openai_api_key_secret_arn: str = ""
    # How an OpenAI-compatible server is asked for structured output: "auto" finds the first
    # mode it takes (scoring/llm/structured.py) and remembers it; a mode's name pins that mode.
    llm_structured: Literal["auto", "json_schema", "json_object", "tools", "prompt"] = "auto"
    # The embeddings model of embed: metrics, named as `llm` is: "openai:<model>" (through
    # openai_base_url, with the judge's key) or "bedrock:<model-id>" (Titan Text Embeddings
    # v2); empty means none. It is retried, timed and metered as the judge is (judge_*).
    embeddings: str = ""
    # The most texts one call to an OpenAI-compatible embeddings endpoint carries (Bedrock's
    # takes one text a call).
    embeddings_batch: int = Field(default=64, ge=1, le=2048)
    # The vectors' dimensions asked for (Titan v2: 256, 512 or 1024; OpenAI's text-embedding-3
    # models: any up to theirs); unset, the model's own.
    embeddings_dimensions: int | None = Field(default=None, ge=1, le=8192)
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
    def from_environ(cls) -> Settings:
        """The settings the environment gives now (ValidationError when a value is malformed)."""
        return _reader()()


def _warn_old_name(message: str, old: str, new: str) -> None:
    # Imported only when an old name is found: reading the settings needs no logger otherwise.
    from evalsvc.core.observability import logger

    logger.warning(message, extra={"deprecated_variable": old, "variable": new})


@cache
def _reader() -> type[Settings]:
    """Settings as pydantic-settings reads them from the environment: the class is made, and
    pydantic-settings imported, when the settings are first read."""
    import os

    from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

    class OldNames(PydanticBaseSettingsSource):
        """The names without the prefix, for the fields the prefixed names left unset."""

        def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
            old = old_variable(field_name)
            return (os.environ.get(old) if old else None) or None, field_name, False

        def __call__(self) -> dict[str, Any]:
            values: dict[str, Any] = {}
            for field in sorted(UNPREFIXED_UNTIL_NOW):
                old, new = field.upper(), variable(field)
                value = os.environ.get(old)
                if not value:
                    continue
                if field in self.current_state:
                    _warn_old_name(
                        f"{old} is deprecated and ignored: {new} is set too, and wins; unset {old}",
                        old,
                        new,
                    )
                    continue
                _warn_old_name(
                    f"{old} is deprecated: set {new} instead ({old} is read for one more release)",
                    old,
                    new,
                )
                values[field] = value
            return values

    class EnvironmentSettings(BaseSettings, Settings):
        model_config = SettingsConfigDict(
            # ValidationError's title, as before pydantic-settings read the environment.
            title="Settings",
            env_prefix=ENV_PREFIX,
            # An empty variable is unset (the default), as before.
            env_ignore_empty=True,
            frozen=True,
        )

        @classmethod
        def settings_customise_sources(
            cls,
            settings_cls: type[BaseSettings],
            init_settings: PydanticBaseSettingsSource,
            env_settings: PydanticBaseSettingsSource,
            dotenv_settings: PydanticBaseSettingsSource,
            file_secret_settings: PydanticBaseSettingsSource,
        ) -> tuple[PydanticBaseSettingsSource, ...]:
            # The environment alone (no .env file, no secrets directory); the old names after
            # the new, so that a new name set wins.
            return init_settings, env_settings, OldNames(settings_cls)

    return EnvironmentSettings


@cache
def get_settings() -> Settings:
    return Settings.from_environ()


def reset_settings() -> None:
    """Forget the cached settings (tests and the local server change the environment)."""
    get_settings.cache_clear()
