"""Settings read from the environment: the OpenAI key's secret, the default monthly limit and
the structured-output mode; the variables' names (EVALSVC_ for every one, the old names read
for one release with a warning), and the error a malformed value gives."""

from __future__ import annotations

import os
import subprocess
import sys
from decimal import Decimal

import pytest
from evalsvc.core.settings import (
    UNPREFIXED_UNTIL_NOW,
    Settings,
    get_settings,
    old_variable,
    reset_settings,
    variable,
)

from tests.log_capture import captured


def test_the_secret_and_the_default_limit_are_unset_unless_given(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in ("EVALSVC_OPENAI_API_KEY_SECRET_ARN", "EVALSVC_DEFAULT_MONTHLY_LIMIT_USD"):
        monkeypatch.delenv(name, raising=False)

    settings = Settings.from_environ()

    assert settings.openai_api_key_secret_arn == ""
    assert settings.default_monthly_limit_usd is None


def test_an_empty_default_limit_is_no_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EVALSVC_DEFAULT_MONTHLY_LIMIT_USD", "")

    assert Settings.from_environ().default_monthly_limit_usd is None


@pytest.mark.parametrize("text", ["0", "100", "0.50", "10000000"])
def test_a_default_limit_is_an_exact_amount(monkeypatch: pytest.MonkeyPatch, text: str) -> None:
    monkeypatch.setenv("EVALSVC_DEFAULT_MONTHLY_LIMIT_USD", text)

    assert Settings.from_environ().default_monthly_limit_usd == Decimal(text)


def test_the_secret_is_named_by_its_arn(monkeypatch: pytest.MonkeyPatch) -> None:
    arn = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:evalsvc-openai-AbCdEf"
    monkeypatch.setenv("EVALSVC_OPENAI_API_KEY_SECRET_ARN", arn)
    monkeypatch.setenv("EVALSVC_OPENAI_API_KEY", "sk-not-used-when-the-secret-is-named")

    settings = Settings.from_environ()

    assert settings.openai_api_key_secret_arn == arn
    # The plain key is never shown by the settings' repr.
    assert "sk-not-used" not in repr(settings)


def test_structured_output_is_negotiated_unless_pinned(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("EVALSVC_LLM_STRUCTURED", raising=False)
    assert Settings.from_environ().llm_structured == "auto"

    monkeypatch.setenv("EVALSVC_LLM_STRUCTURED", "tools")
    assert Settings.from_environ().llm_structured == "tools"


def test_an_unknown_structured_output_mode_is_refused_naming_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from pydantic import ValidationError

    monkeypatch.setenv("EVALSVC_LLM_STRUCTURED", "xml")

    with pytest.raises(ValidationError, match="llm_structured"):
        Settings.from_environ()


# ---- the variables' names (issue 42): EVALSVC_ for every one, the old names for one release ----


def _clear(monkeypatch: pytest.MonkeyPatch, *names: str) -> None:
    for name in names:
        monkeypatch.delenv(name, raising=False)


def test_every_field_is_read_from_its_prefixed_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EVALSVC_JUDGE_CONCURRENCY", "3")
    monkeypatch.setenv("EVALSVC_DATASETS_TABLE", "t-datasets")
    monkeypatch.setenv("EVALSVC_WORK_QUEUE_URL", "http://queue")
    monkeypatch.setenv("EVALSVC_OPENAI_API_KEY", "sk-prefixed")
    monkeypatch.setenv("EVALSVC_JUDGE_TIMEOUT_SECONDS", "7.5")
    monkeypatch.setenv("EVALSVC_ALLOW_LOCAL_WEBHOOKS", "1")

    settings = Settings.from_environ()

    assert settings.judge_concurrency == 3
    assert settings.datasets_table == "t-datasets"
    assert settings.work_queue_url == "http://queue"
    assert settings.openai_api_key.get_secret_value() == "sk-prefixed"
    assert settings.judge_timeout_seconds == 7.5
    assert settings.allow_local_webhooks is True


def test_the_region_is_awss_own_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_REGION", "eu-west-1")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-west-2")
    monkeypatch.setenv("EVALSVC_REGION", "ap-south-1")
    assert Settings.from_environ().region == "eu-west-1"

    monkeypatch.setenv("AWS_REGION", "")
    assert Settings.from_environ().region == "us-west-2"

    _clear(monkeypatch, "AWS_REGION", "AWS_DEFAULT_REGION")
    assert Settings.from_environ().region == "us-east-1"


def test_an_empty_variable_is_the_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EVALSVC_JUDGE_CONCURRENCY", "")
    monkeypatch.setenv("EVALSVC_WORK_QUEUE_URL", "")

    settings = Settings.from_environ()

    assert settings.judge_concurrency == 16
    assert settings.work_queue_url is None


def test_other_evalsvc_variables_are_not_settings_and_are_let_be(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The local server's and the CLI's own variables share the prefix.
    monkeypatch.setenv("EVALSVC_DATA_DIR", "/tmp/somewhere")
    monkeypatch.setenv("EVALSVC_SWEEP_SECONDS", "5")

    assert Settings.from_environ().judge_concurrency == 16


def test_the_old_unprefixed_names_are_exactly_the_fields_read_without_the_prefix() -> None:
    # Every other field was EVALSVC_<FIELD> already (the region is AWS's variable).
    assert set(Settings.model_fields) > UNPREFIXED_UNTIL_NOW
    assert old_variable("judge_concurrency") == "JUDGE_CONCURRENCY"
    assert old_variable("llm") is None
    assert variable("judge_concurrency") == "EVALSVC_JUDGE_CONCURRENCY"


@pytest.mark.parametrize(
    ("field", "value", "expected"),
    [
        ("judge_concurrency", "5", 5),
        ("datasets_table", "old-datasets", "old-datasets"),
        ("openai_base_url", "http://127.0.0.1:9/v1", "http://127.0.0.1:9/v1"),
        ("judge_timeout_seconds", "2.5", 2.5),
    ],
)
def test_an_old_name_is_still_read_with_a_warning_naming_both(
    monkeypatch: pytest.MonkeyPatch, field: str, value: str, expected: object
) -> None:
    old, new = field.upper(), "EVALSVC_" + field.upper()
    _clear(monkeypatch, new)
    monkeypatch.setenv(old, value)

    with captured("WARNING") as logs:
        settings = Settings.from_environ()

    assert getattr(settings, field) == expected
    [line] = [r for r in logs.records() if r.get("deprecated_variable") == old]
    assert line["level"] == "WARNING"
    assert line["variable"] == new
    assert old in line["message"] and new in line["message"]
    assert "deprecated" in line["message"]


def test_the_new_name_wins_when_both_are_set(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JUDGE_CONCURRENCY", "2")
    monkeypatch.setenv("EVALSVC_JUDGE_CONCURRENCY", "9")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-old")
    monkeypatch.setenv("EVALSVC_OPENAI_API_KEY", "sk-new")

    with captured("WARNING") as logs:
        settings = Settings.from_environ()

    assert settings.judge_concurrency == 9
    assert settings.openai_api_key.get_secret_value() == "sk-new"
    warned = {r["deprecated_variable"]: r for r in logs.records() if "deprecated_variable" in r}
    assert set(warned) == {"JUDGE_CONCURRENCY", "OPENAI_API_KEY"}
    line = warned["JUDGE_CONCURRENCY"]
    assert line["variable"] == "EVALSVC_JUDGE_CONCURRENCY"
    assert "ignored" in line["message"] and "EVALSVC_JUDGE_CONCURRENCY" in line["message"]
    # Neither value is ever logged.
    assert not any("sk-old" in text or "sk-new" in text for text in logs.lines)


def test_an_empty_new_name_leaves_the_old_one_read(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EVALSVC_JUDGE_CONCURRENCY", "")
    monkeypatch.setenv("JUDGE_CONCURRENCY", "3")

    assert Settings.from_environ().judge_concurrency == 3


def test_nothing_is_logged_when_only_new_names_are_set(monkeypatch: pytest.MonkeyPatch) -> None:
    for field in UNPREFIXED_UNTIL_NOW:
        monkeypatch.delenv(field.upper(), raising=False)
    monkeypatch.setenv("EVALSVC_JUDGE_CONCURRENCY", "4")

    with captured("DEBUG") as logs:
        Settings.from_environ()

    assert logs.records() == []


# The error a malformed value gives, as it was before pydantic-settings read the environment:
# pydantic's ValidationError for Settings, naming the field, the value and what was wanted.
MALFORMED = [
    ("EVALSVC_JUDGE_CONCURRENCY", "ten", "judge_concurrency", "Input should be a valid integer"),
    # Lax mode takes False for an int, but a variable is text: "false" is not an integer.
    ("EVALSVC_JUDGE_CONCURRENCY", "false", "judge_concurrency", "Input should be a valid integer"),
    ("JUDGE_CONCURRENCY", "false", "judge_concurrency", "Input should be a valid integer"),
    ("EVALSVC_INLINE_MAX_BYTES", "1e3", "inline_max_bytes", "Input should be a valid integer"),
    ("EVALSVC_DATASET_SHARDS", "0", "dataset_shards", "greater than or equal to 1"),
    ("EVALSVC_JUDGE_TIMEOUT_SECONDS", "false", "judge_timeout_seconds", "valid number"),
    ("EVALSVC_ALLOW_LOCAL_WEBHOOKS", "2", "allow_local_webhooks", "valid boolean"),
    ("EVALSVC_DEFAULT_MONTHLY_LIMIT_USD", "nan", "default_monthly_limit_usd", "finite number"),
    ("EVALSVC_LLM_STRUCTURED", "xml", "llm_structured", "Input should be 'auto'"),
]


@pytest.mark.parametrize(("name", "value", "field", "wanted"), MALFORMED)
def test_a_malformed_value_is_refused_naming_the_field_and_the_value(
    monkeypatch: pytest.MonkeyPatch, name: str, value: str, field: str, wanted: str
) -> None:
    from pydantic import ValidationError

    _clear(monkeypatch, "EVALSVC_" + name.removeprefix("EVALSVC_"))
    monkeypatch.setenv(name, value)

    with pytest.raises(ValidationError) as refused:
        Settings.from_environ()

    text = str(refused.value)
    assert text.startswith("1 validation error for Settings\n" + field + "\n"), text
    assert wanted in text
    assert f"input_value={value!r}, input_type=str" in text


def test_settings_are_read_on_first_use_and_pydantic_settings_imported_then() -> None:
    # Cold start: importing the settings (every function does) reads nothing and does not
    # import pydantic-settings; the first get_settings() does both.
    code = (
        "import sys\n"
        "import evalsvc.core.settings as s\n"
        "assert 'pydantic_settings' not in sys.modules\n"
        "assert s.get_settings.cache_info().currsize == 0\n"
        "assert s.get_settings().judge_concurrency == 7\n"
        "assert 'pydantic_settings' in sys.modules\n"
    )
    env = {**os.environ, "EVALSVC_JUDGE_CONCURRENCY": "7"}
    subprocess.run([sys.executable, "-c", code], env=env, check=True)


def test_get_settings_is_cached_until_reset(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EVALSVC_JUDGE_CONCURRENCY", "5")
    reset_settings()
    assert get_settings().judge_concurrency == 5

    monkeypatch.setenv("EVALSVC_JUDGE_CONCURRENCY", "6")
    assert get_settings().judge_concurrency == 5
    reset_settings()
    assert get_settings().judge_concurrency == 6


def test_settings_are_frozen(monkeypatch: pytest.MonkeyPatch) -> None:
    from pydantic import ValidationError

    settings = Settings.from_environ()
    with pytest.raises(ValidationError):
        settings.judge_concurrency = 1  # type: ignore[misc]
