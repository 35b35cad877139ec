"""Runtime settings, read from the environment on first use (never at import time)."""

import os
from functools import cache

from pydantic import BaseModel, ConfigDict


class Settings(BaseModel):
    model_config = ConfigDict(frozen=True)

    region: str = "us-east-1"
    datasets_table: str = "evalsvc-datasets"
    api_keys_table: str = "evalsvc-api-keys"
    metrics_table: str = "evalsvc-metrics"
    # Set for the embedded local store (and tests); None means the real DynamoDB endpoint.
    dynamodb_endpoint_url: str | None = None
    # Seconds an authenticated key stays cached in a warm process. Revocation takes effect
    # within this window.
    auth_cache_seconds: float = 60.0

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
            ("dynamodb_endpoint_url", "DYNAMODB_ENDPOINT_URL"),
            ("auth_cache_seconds", "AUTH_CACHE_SECONDS"),
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
