"""A request's deadline: 29 s after API Gateway received it, or the Lambda's timeout if that is
sooner; off Lambda, 29 s after it arrived."""

from __future__ import annotations

import time

import pytest
from evalsvc.api.request_deadline import ARRIVED, request_deadline
from evalsvc.core.deadlines import Deadline


class _Request:
    def __init__(self, **scope: object) -> None:
        self.scope = scope


class _Context:
    def __init__(self, millis: int) -> None:
        self.millis = millis

    def get_remaining_time_in_millis(self) -> int:
        return self.millis


def _left(**scope: object) -> float:
    return request_deadline(_Request(**scope)).left()  # type: ignore[arg-type]


def test_off_lambda_a_request_has_29_seconds_from_its_arrival() -> None:
    assert _left() == pytest.approx(29, abs=0.05)
    assert _left(**{ARRIVED: time.monotonic() - 10}) == pytest.approx(19, abs=0.05)


def test_the_gateway_clock_starts_when_api_gateway_received_the_request() -> None:
    received = (time.time() - 4) * 1000
    event = {"requestContext": {"requestTimeEpoch": int(received)}}
    assert _left(**{"aws.event": event}) == pytest.approx(25, abs=0.1)
    # A missing, malformed or unbelievable epoch (older than the limit: a replayed sample
    # event) falls back to the arrival here
    assert _left(**{"aws.event": {"requestContext": {}}}) == pytest.approx(29, abs=0.05)
    stale = {"requestContext": {"requestTimeEpoch": 1428582896000}}
    assert _left(**{"aws.event": stale}) == pytest.approx(29, abs=0.05)
    assert _left(**{"aws.event": {"requestContext": {"requestTimeEpoch": "x"}}}) == (
        pytest.approx(29, abs=0.05)
    )


def test_a_lambda_timing_out_sooner_than_the_gateway_sets_the_deadline() -> None:
    assert _left(**{"aws.context": _Context(7_000)}) == pytest.approx(7, abs=0.05)
    assert _left(**{"aws.context": _Context(900_000)}) == pytest.approx(29, abs=0.05)


def test_the_setting_changes_the_gateway_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.conftest import point_service_at

    point_service_at({"EVALSVC_REQUEST_SECONDS": "10"}, monkeypatch)
    assert _left() == pytest.approx(10, abs=0.05)


def test_deadline_arithmetic() -> None:
    soon = Deadline.after(5)
    assert soon.earlier(2).left() == pytest.approx(3, abs=0.05)
    assert soon.sooner_of(Deadline.after(9)) is soon
    assert Deadline.never().left() == float("inf") and not Deadline.never().passed()
    assert Deadline.after(-1).passed()
