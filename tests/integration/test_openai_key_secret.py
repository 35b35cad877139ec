"""The OpenAI key read from Secrets Manager (moto) through Powertools' parameters utility: only
when a call is made, cached, a rotated key picked up after the cache's age, a secret that
cannot be read a clear 503, and the key never in a log line."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from datetime import datetime, timedelta
from typing import Any

import boto3
import pytest
from evalsvc.scoring.llm import credentials

from tests.conftest import ROOT, point_service_at
from tests.fake_judge import FakeJudge
from tests.integration.conftest import Tenant, ok

SECRET_NAME = "evalsvc/openai-api-key"
KEY = "sk-from-the-secret-0123456789"
ROTATED = "sk-rotated-in-the-secret-9876543210"
PLAIN = "sk-plain-environment-key"
QUESTION = "Does the output say please?"


class _Clock:
    """Powertools' parameter cache reads `datetime.now()`: a clock the test moves."""

    def __init__(self) -> None:
        self.now = datetime(2026, 11, 27, 12, 0, 0)

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> _Clock:
    from aws_lambda_powertools.utilities.parameters import base

    moved = _Clock()

    class Moved(datetime):
        @classmethod
        def now(cls, tz: Any = None) -> Moved:  # type: ignore[override]
            return moved.now  # type: ignore[return-value]

    monkeypatch.setattr(base, "datetime", Moved)
    return moved


class _Reads:
    """Every GetSecretValue a client sends (a botocore event hook on the default session, which
    the secrets client is made from)."""

    def __init__(self) -> None:
        self.secrets: list[str] = []

    def __call__(self, params: dict[str, Any], **_: Any) -> None:
        self.secrets.append(params["SecretId"])


@pytest.fixture
def reads() -> Iterator[_Reads]:
    credentials.reset()
    # The session the secrets client is made from: the client copies its hooks.
    events = boto3._get_default_session().events
    hook = _Reads()
    events.register("provide-client-params.secrets-manager.GetSecretValue", hook)
    yield hook
    events.unregister("provide-client-params.secrets-manager.GetSecretValue", hook)
    credentials.reset()


@pytest.fixture
def secret(tables: dict[str, str]) -> str:
    client = boto3.client("secretsmanager", region_name="us-east-1")
    return str(client.create_secret(Name=SECRET_NAME, SecretString=KEY)["ARN"])


@pytest.fixture
def judge(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeJudge]:
    fake = FakeJudge()
    with fake.running():
        yield fake


def use_secret(judge: FakeJudge, monkeypatch: pytest.MonkeyPatch, secret: str) -> None:
    monkeypatch.delenv("EVALSVC_OPENAI_API_KEY", raising=False)
    point_service_at(
        {
            "EVALSVC_LLM": "openai:fake-judge",
            "EVALSVC_OPENAI_BASE_URL": judge.base_url,
            "EVALSVC_OPENAI_API_KEY_SECRET_ARN": secret,
            "EVALSVC_JUDGE_RETRY_BASE_SECONDS": "0.01",
        },
        monkeypatch,
    )


def seed(tenant: Tenant, metrics: list[str] | None = None) -> None:
    data = [
        {"id": "a", "input": "hi", "output": "please sit"},
        {"id": "b", "input": "hey", "output": "sit"},
        {"id": "c", "input": "yo", "output": "Please, sit down"},
    ]
    ok(tenant.post("/data/seed/ds", {"data": data, "system_prompt": "Be polite."}))
    ok(tenant.post("/specify_questions", {"metrics": metrics or [QUESTION]}))


def test_the_key_is_read_from_the_secret_once_for_many_calls(
    acme: Tenant,
    judge: FakeJudge,
    secret: str,
    reads: _Reads,
    clock: _Clock,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    use_secret(judge, monkeypatch, secret)
    seed(acme)

    ok(acme.post("/evaluate", {"seed_data_id": "ds"}))
    clock.advance(60)
    ok(acme.post("/evaluate", {"seed_data_id": "ds", "metrics_id": None}))
    ok(acme.post("/questions", {"system_prompt": "Always say please."}))

    assert len(judge.authorizations) >= 4
    assert set(judge.authorizations) == {f"Bearer {KEY}"}
    assert reads.secrets == [secret]


def test_a_secret_holding_json_gives_its_api_key(
    acme: Tenant, judge: FakeJudge, reads: _Reads, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = boto3.client("secretsmanager", region_name="us-east-1")
    arn = client.create_secret(Name="json-key", SecretString=json.dumps({"api_key": KEY}))["ARN"]
    use_secret(judge, monkeypatch, arn)
    seed(acme)

    ok(acme.post("/evaluate", {"seed_data_id": "ds"}))

    assert set(judge.authorizations) == {f"Bearer {KEY}"}


def test_a_rotated_key_is_used_once_the_cached_one_is_older_than_its_max_age(
    acme: Tenant,
    judge: FakeJudge,
    secret: str,
    reads: _Reads,
    clock: _Clock,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    use_secret(judge, monkeypatch, secret)
    seed(acme)
    ok(acme.post("/evaluate", {"seed_data_id": "ds"}))
    boto3.client("secretsmanager", region_name="us-east-1").put_secret_value(
        SecretId=secret, SecretString=ROTATED
    )

    clock.advance(credentials.SECRET_MAX_AGE_SECONDS - 1)
    judge.authorizations.clear()
    ok(acme.post("/questions", {"system_prompt": "Always say please."}))
    still = list(judge.authorizations)
    clock.advance(2)
    judge.authorizations.clear()
    ok(acme.post("/questions", {"system_prompt": "Never shout."}))

    assert set(still) == {f"Bearer {KEY}"}
    assert set(judge.authorizations) == {f"Bearer {ROTATED}"}
    assert reads.secrets == [secret, secret]


def test_routes_that_call_no_model_never_read_the_secret(
    acme: Tenant, judge: FakeJudge, secret: str, reads: _Reads, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_secret(judge, monkeypatch, secret)
    seed(acme, metrics=["check:non_empty"])

    ok(acme.post("/evaluate", {"seed_data_id": "ds"}))
    ok(acme.get("/usage"))
    ok(acme.get("/data/seed/ds"))

    assert reads.secrets == []
    assert judge.requests == []


@pytest.mark.parametrize(
    "stored",
    [None, "   ", json.dumps({"key": KEY}), json.dumps({"api_key": 5}), "{not json"],
)
def test_a_secret_that_cannot_be_read_or_holds_no_key_is_a_503_that_says_so(
    acme: Tenant,
    judge: FakeJudge,
    reads: _Reads,
    log_lines: list[str],
    monkeypatch: pytest.MonkeyPatch,
    stored: str | None,
) -> None:
    name = "absent-secret"
    if stored is not None:
        client = boto3.client("secretsmanager", region_name="us-east-1")
        name = client.create_secret(Name="odd-secret", SecretString=stored)["ARN"]
    use_secret(judge, monkeypatch, name)
    seed(acme)

    response = acme.post("/evaluate", {"seed_data_id": "ds"})

    assert response.status_code == 503, response.text
    error = response.json()["error"]
    assert "EVALSVC_OPENAI_API_KEY_SECRET_ARN" in error
    assert KEY not in error
    assert judge.requests == []
    if stored is None:
        assert "ResourceNotFoundException" in error
    assert KEY not in "\n".join(log_lines)
    assert len(reads.secrets) == 1


def test_the_key_never_reaches_the_logs(
    acme: Tenant,
    judge: FakeJudge,
    secret: str,
    reads: _Reads,
    log_lines: list[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from tests.fake_judge import sequence

    use_secret(judge, monkeypatch, secret)
    seed(acme)
    ok(acme.post("/evaluate", {"seed_data_id": "ds"}))
    judge.answer = sequence((401, '{"error": "bad key"}'))

    refused = acme.post("/questions", {"system_prompt": "Always say please."})

    assert refused.status_code == 503
    assert "EVALSVC_OPENAI_API_KEY_SECRET_ARN" in refused.json()["error"]
    assert log_lines
    assert KEY not in "\n".join(log_lines)
    assert KEY not in refused.text


def test_without_a_secret_the_environments_key_is_used(
    acme: Tenant, judge: FakeJudge, reads: _Reads, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("EVALSVC_OPENAI_API_KEY_SECRET_ARN", raising=False)
    point_service_at(
        {
            "EVALSVC_LLM": "openai:fake-judge",
            "EVALSVC_OPENAI_BASE_URL": judge.base_url,
            "EVALSVC_OPENAI_API_KEY": PLAIN,
        },
        monkeypatch,
    )
    seed(acme)

    ok(acme.post("/evaluate", {"seed_data_id": "ds"}))

    assert set(judge.authorizations) == {f"Bearer {PLAIN}"}
    assert reads.secrets == []


def test_no_function_imports_the_parameters_utility_before_a_call() -> None:
    program = (
        "import importlib.util, pathlib, sys\n"
        f"for app in sorted(pathlib.Path({str(ROOT / 'functions')!r}).glob('*/app.py')):\n"
        "    spec = importlib.util.spec_from_file_location(app.parent.name, app)\n"
        "    module = importlib.util.module_from_spec(spec)\n"
        "    spec.loader.exec_module(module)\n"
        "from evalsvc.scoring.llm import configured_llm\n"
        "assert configured_llm() is not None\n"
        "prefix = 'aws_lambda_powertools.utilities.parameters'\n"
        "loaded = [m for m in sys.modules if m.startswith(prefix)]\n"
        "assert not loaded, loaded\n"
    )
    env = {
        "PATH": "/usr/bin:/bin",
        "AWS_DEFAULT_REGION": "us-east-1",
        "EVALSVC_LLM": "openai:fake-judge",
        "EVALSVC_OPENAI_API_KEY_SECRET_ARN": (
            "arn:aws:secretsmanager:us-east-1:123456789012:secret:k"
        ),
    }
    subprocess.run([sys.executable, "-c", program], check=True, env=env, cwd=ROOT)


def test_a_key_refused_after_a_rotation_is_read_again_at_once(
    acme: Tenant, judge: FakeJudge, secret: str, reads: _Reads, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_secret(judge, monkeypatch, secret)
    point_service_at({"EVALSVC_JUDGE_CONCURRENCY": "1"}, monkeypatch)
    seed(acme)
    ok(acme.post("/questions", {"system_prompt": "Always say please."}))
    # Rotated, and the old key revoked, well within the cache's age.
    boto3.client("secretsmanager", region_name="us-east-1").put_secret_value(
        SecretId=secret, SecretString=ROTATED
    )
    verdict = json.dumps({"reason": "Polite.", "score": 4})

    def only_the_rotated_key(_request: dict[str, Any]) -> tuple[int, str]:
        if judge.authorizations[-1] == f"Bearer {ROTATED}":
            return 200, verdict
        return 401, '{"error": "revoked"}'

    judge.answer = only_the_rotated_key
    judge.authorizations.clear()

    response = acme.post("/evaluate", {"seed_data_id": "ds"})

    assert response.status_code == 200, response.text
    assert judge.authorizations[0] == f"Bearer {KEY}"
    assert set(judge.authorizations[1:]) == {f"Bearer {ROTATED}"}
    assert reads.secrets == [secret, secret]


def test_a_refused_key_the_secret_still_holds_is_a_503_after_one_fresh_read(
    acme: Tenant, judge: FakeJudge, secret: str, reads: _Reads, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.fake_judge import sequence

    use_secret(judge, monkeypatch, secret)
    seed(acme)
    judge.answer = sequence((401, '{"error": "bad key"}'))

    response = acme.post("/evaluate", {"seed_data_id": "ds"})

    assert response.status_code == 503
    assert "EVALSVC_OPENAI_API_KEY_SECRET_ARN" in response.json()["error"]
    assert set(judge.authorizations) == {f"Bearer {KEY}"}
    assert reads.secrets == [secret, secret]


def test_the_secret_is_read_within_seconds_not_botocores_minutes() -> None:
    # A Secrets Manager that does not answer fails the read well within a request's 29 s,
    # every attempt timed out (botocore's own default: 60 s to connect and 60 s to read).
    config = credentials._secrets("us-east-1").client.meta.config
    attempts = config.retries["total_max_attempts"]
    assert (config.connect_timeout + config.read_timeout) * attempts <= 21
