"""Settings read from the environment: the OpenAI key's secret, the default monthly limit and
the structured-output mode."""

from __future__ import annotations

from decimal import Decimal

import pytest
from evalsvc.core.settings import Settings


def test_the_secret_and_the_default_limit_are_unset_unless_given(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in ("OPENAI_API_KEY_SECRET_ARN", "EVALSVC_DEFAULT_MONTHLY_LIMIT_USD"):
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
    monkeypatch.setenv("OPENAI_API_KEY_SECRET_ARN", arn)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-not-used-when-the-secret-is-named")

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
