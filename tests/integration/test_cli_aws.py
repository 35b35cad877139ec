"""The operator CLI against "AWS" (moto): table names from a stack's outputs, or from flags."""

from __future__ import annotations

import json

import boto3
import pytest
from evalsvc.logic import api_keys
from evalsvc_tools.cli import main


@pytest.fixture
def stack(tables: dict[str, str]) -> str:
    template = {
        "Resources": {"Marker": {"Type": "AWS::SQS::Queue"}},
        "Outputs": {
            "ApiKeysTableName": {"Value": tables["EVALSVC_API_KEYS_TABLE"]},
            "DatasetsTableName": {"Value": tables["EVALSVC_DATASETS_TABLE"]},
        },
    }
    boto3.client("cloudformation").create_stack(
        StackName="evalsvc-test", TemplateBody=json.dumps(template)
    )
    return "evalsvc-test"


def test_keys_create_with_stack_name_prints_a_working_key_last(
    stack: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EVALSVC_API_KEYS_TABLE", "not-this-one")

    code = main(
        [
            "keys",
            "create",
            "--stack-name",
            stack,
            "--region",
            "us-east-1",
            "--tenant",
            "acme",
            "--user",
            "ann",
            "--email",
            "ann@acme.test",
        ]
    )

    assert code == 0
    key = capsys.readouterr().out.splitlines()[-1]
    identity = api_keys.authenticate(key)
    assert (identity.tenant, identity.user, identity.user_email) == ("acme", "ann", "ann@acme.test")


def test_keys_list_and_revoke_with_table_flags(
    tables: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    flags = [
        "--api-keys-table",
        tables["EVALSVC_API_KEYS_TABLE"],
        "--datasets-table",
        tables["EVALSVC_DATASETS_TABLE"],
    ]
    assert (
        main(
            [
                "keys",
                "create",
                "--tenant",
                "acme",
                "--user",
                "ann",
                "--email",
                "ann@acme.test",
                *flags,
            ]
        )
        == 0
    )
    key = capsys.readouterr().out.splitlines()[-1]

    assert main(["keys", "list", "--tenant", "acme", *flags]) == 0
    listing = capsys.readouterr().out
    key_id = listing.splitlines()[1].split()[0]
    assert "ann@acme.test" in listing and key not in listing and "active" in listing

    assert main(["keys", "revoke", key_id, *flags]) == 0
    capsys.readouterr()
    main(["keys", "list", *flags])
    assert "revoked" in capsys.readouterr().out


def test_cli_refuses_bad_input_with_a_message(
    tables: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert (
        main(["keys", "create", "--tenant", "bad tenant", "--user", "u", "--email", "u@x.test"])
        == 2
    )
    assert "tenant must be" in capsys.readouterr().err
    assert main(["keys", "revoke", "nosuchkeyid"]) == 2
    assert "no API key" in capsys.readouterr().err


def test_synthetic_import_reports_a_bad_line(tables: dict[str, str], tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "rows.jsonl"
    path.write_text('{"input": "a", "output": "b"}\n{"input": "a"}\n')

    assert main(["synthetic", "import", str(path), "--tenant", "acme"]) == 2
    assert "rows.jsonl:2: 'output' must be a string" in capsys.readouterr().err


def test_key_owner_names_reach_the_terminal_as_text(
    tables: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    hostile_user = "ann\x1b]0;owned\x07\x1b[2J\u202eevil"
    hostile_email = "a\x9b31m@acme.test"
    assert (
        main(
            ["keys", "create", "--tenant", "acme", "--user", hostile_user, "--email", hostile_email]
        )
        == 0
    )
    created = capsys.readouterr().out
    key_id = created.splitlines()[0].split()[2]
    assert main(["keys", "list", "--tenant", "acme"]) == 0
    listing = capsys.readouterr().out
    assert main(["keys", "revoke", key_id]) == 0
    revoked = capsys.readouterr().out

    for shown in (created, listing, revoked):
        assert "ann" in shown
        assert not any(c in shown for c in "\x1b\x07\x9b\u202e")


def test_tenants_set_limit_overrides_the_default_chooses_none_or_returns_to_it(
    tables: dict[str, str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from decimal import Decimal

    from evalsvc.storage import ledger

    from tests.conftest import point_service_at

    point_service_at({"EVALSVC_DEFAULT_MONTHLY_LIMIT_USD": "100"}, monkeypatch)

    def limit_shown() -> tuple[object, object]:
        capsys.readouterr()
        assert main(["tenants", "usage", "--tenant", "acme"]) == 0
        figures = json.loads(capsys.readouterr().out)
        return figures["limit_usd"], figures["limit_is_default"]

    assert limit_shown() == (100.0, True)

    assert main(["tenants", "set-limit", "--tenant", "acme", "--monthly-usd", "5"]) == 0
    assert "$5 a month" in capsys.readouterr().out
    assert ledger.limit_of("acme") == ledger.OwnLimit(Decimal(5))
    assert limit_shown() == (5.0, False)

    assert main(["tenants", "set-limit", "--tenant", "acme", "--unlimited"]) == 0
    assert "no monthly LLM limit, whatever the default" in capsys.readouterr().out
    assert ledger.limit_of("acme") == ledger.OwnLimit(None)
    assert limit_shown() == (None, False)

    assert main(["tenants", "set-limit", "--tenant", "acme", "--clear"]) == 0
    assert "the deployment's default applies" in capsys.readouterr().out
    assert ledger.limit_of("acme") is None
    assert limit_shown() == (100.0, True)


def test_tenants_set_limit_takes_one_choice(
    tables: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["tenants", "set-limit", "--tenant", "acme", "--unlimited", "--monthly-usd", "5"])

    assert exited.value.code == 2
    assert "not allowed with argument" in capsys.readouterr().err


@pytest.mark.parametrize(("output", "shown"), [("25", (25.0, True)), (None, (None, False))])
def test_tenants_usage_by_stack_name_holds_the_tenant_to_the_stacks_default(
    tables: dict[str, str],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    output: str | None,
    shown: tuple[object, object],
) -> None:
    # Given a stack deployed with a default monthly limit (or without: no output), and a CLI
    # whose own environment says otherwise
    outputs = {
        "ApiKeysTableName": {"Value": tables["EVALSVC_API_KEYS_TABLE"]},
        "DatasetsTableName": {"Value": tables["EVALSVC_DATASETS_TABLE"]},
        "UsageTableName": {"Value": tables["EVALSVC_USAGE_TABLE"]},
    }
    if output is not None:
        outputs["DefaultMonthlyLimitUsd"] = {"Value": output}
    template = {"Resources": {"Marker": {"Type": "AWS::SQS::Queue"}}, "Outputs": outputs}
    boto3.client("cloudformation").create_stack(
        StackName="evalsvc-limits", TemplateBody=json.dumps(template)
    )
    monkeypatch.setenv("EVALSVC_DEFAULT_MONTHLY_LIMIT_USD", "7")

    # When the operator reads a tenant's month through the stack
    code = main(["tenants", "usage", "--tenant", "acme", "--stack-name", "evalsvc-limits"])

    # Then the limit in force is the stack's default, as its functions hold the tenant to it
    assert code == 0
    figures = json.loads(capsys.readouterr().out)
    assert (figures["limit_usd"], figures["limit_is_default"]) == shown
