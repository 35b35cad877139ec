"""Handlers log JSON with the API Gateway request id as correlation id, and never the key."""

from __future__ import annotations

import json

from evalsvc.core.observability import logger

from tests.lambda_support import invoke, load_event, with_header


def test_log_lines_carry_the_request_id_as_correlation_id(
    event_key: str, log_lines: list[str]
) -> None:
    event = load_event("write_seed_dataset")

    status, _ = invoke("write_seed_dataset", event)

    assert status == 200
    records = [json.loads(line) for line in log_lines]
    written = [r for r in records if r["message"] == "seed dataset written"]
    assert written, log_lines
    assert written[0]["correlation_id"] == event["requestContext"]["requestId"]
    assert written[0]["dataset_id"] == "support-faq"
    assert written[0]["function_request_id"]


def test_keys_never_reach_the_logs(
    event_key: str, log_lines: list[str], tables: dict[str, str]
) -> None:
    bad_key = "evk_this_key_is_wrong_and_must_not_be_logged"
    invoke("write_seed_dataset", load_event("write_seed_dataset"))
    invoke(
        "get_seed_dataset", with_header(load_event("get_seed_dataset"), "Authorization", bad_key)
    )
    invoke("add_seed_pair", load_event("add_seed_pair"))
    invoke("add_seed_pair", load_event("add_seed_pair"))  # 409

    text = "\n".join(log_lines)
    assert log_lines
    assert event_key not in text
    assert bad_key not in text


def test_lines_after_authentication_carry_tenant_and_key_id_for_that_invocation_only(
    event_key: str, log_lines: list[str], tables: dict[str, str]
) -> None:
    from evalsvc.logic import api_keys

    key_id = api_keys.hash_key(event_key)[:12]
    event = load_event("write_seed_dataset")

    assert invoke("write_seed_dataset", event)[0] == 200
    bad = with_header(load_event("get_seed_dataset"), "Authorization", "evk_not_a_key_at_all")
    assert invoke("get_seed_dataset", bad)[0] == 401
    logger.info("between invocations")

    records = [json.loads(line) for line in log_lines]
    written = next(r for r in records if r["message"] == "seed dataset written")
    assert (written["tenant"], written["key_id"]) == ("local", key_id)
    assert written["correlation_id"] == event["requestContext"]["requestId"]
    between = next(r for r in records if r["message"] == "between invocations")
    for name in ("tenant", "key_id", "correlation_id", "function_request_id"):
        assert name not in between, between
    assert event_key not in "\n".join(log_lines)
    assert api_keys.hash_key(event_key) not in "\n".join(log_lines)
