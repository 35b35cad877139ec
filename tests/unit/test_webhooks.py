"""Posting a webhook (E8) to receivers on 127.0.0.1: signed, at most 3 attempts with backoff,
no redirect followed, a 4xx not asked again, each attempt bounded by its timeout, HTTPS to the
checked address with the URL's host as the TLS name."""

from __future__ import annotations

import shutil
import ssl
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from evalsvc.monitoring import webhook_targets, webhooks

from tests.webhook_receiver import Receiver
from tests.webhook_receiver import receiver as receiving

BODY = b'{"monitor_id":"m1","run_id":"r1","regressed":["polite"]}'
SECRET = "s3cret"


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with receiving("/hook?m=1") as server:
        yield server


def target_of(server: Receiver) -> webhook_targets.Target:
    return webhook_targets.check(server.url, allow_local=True)


def no_sleep(seconds: float) -> None:
    assert 0 < seconds <= webhooks.RETRY_CAP_SECONDS


def test_a_delivery_is_signed_and_posted_once(receiver: Receiver) -> None:
    delivery = webhooks.deliver(target_of(receiver), BODY, SECRET, sleep=no_sleep)

    assert delivery == webhooks.Delivery("delivered", 1, 200)
    [post] = receiver.posts
    assert (post.path, post.body) == ("/hook?m=1", BODY)
    assert post.headers["Content-Type"] == "application/json"
    assert post.signed_with(SECRET)


def test_a_server_error_is_asked_again_with_backoff_up_to_three_times(receiver: Receiver) -> None:
    receiver.answers = [503, 500]
    waits: list[float] = []
    delivery = webhooks.deliver(target_of(receiver), BODY, SECRET, sleep=waits.append)
    assert delivery == webhooks.Delivery("delivered", 3, 200)
    assert len(waits) == 2 and all(0 < w <= webhooks.RETRY_CAP_SECONDS for w in waits)

    receiver.posts.clear()
    receiver.answers = [503, 429, 500]
    failed = webhooks.deliver(target_of(receiver), BODY, SECRET, sleep=no_sleep)
    assert (failed.status, failed.attempts, failed.http_status) == ("failed", 3, 500)
    assert len(receiver.posts) == 3


@pytest.mark.parametrize("status", [301, 302, 307, 308, 400, 401, 404, 410])
def test_a_redirect_or_a_client_error_fails_at_once(receiver: Receiver, status: int) -> None:
    receiver.answers = [status]
    delivery = webhooks.deliver(target_of(receiver), BODY, SECRET, sleep=no_sleep)
    assert (delivery.status, delivery.attempts, delivery.http_status) == ("failed", 1, status)
    assert len(receiver.posts) == 1  # the redirect was not followed


def test_each_attempt_is_bounded_by_its_timeout(
    receiver: Receiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(webhooks, "TIMEOUT_SECONDS", 0.2)
    receiver.delay = 1.0  # it would answer 200, after the attempt's time
    delivery = webhooks.deliver(target_of(receiver), BODY, SECRET, sleep=no_sleep)
    assert (delivery.status, delivery.attempts, delivery.http_status) == ("failed", 3, None)
    assert delivery.error is not None and "timed out" in delivery.error


def test_a_receiver_that_is_not_there_fails_after_three_attempts() -> None:
    target = webhook_targets.check("http://127.0.0.1:9/hook", allow_local=True)
    delivery = webhooks.deliver(target, BODY, SECRET, sleep=no_sleep)
    assert (delivery.status, delivery.attempts, delivery.http_status) == ("failed", 3, None)
    assert delivery.error is not None and SECRET not in delivery.error


def _certificate(tmp: Path, name: str) -> tuple[Path, Path]:
    key, cert = tmp / f"{name}.key", tmp / f"{name}.pem"
    openssl = shutil.which("openssl")
    assert openssl is not None, "the tests make their certificate with openssl"
    subprocess.run(
        [
            openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
            "-subj", f"/CN={name}", "-addext", f"subjectAltName=DNS:{name}",
            "-keyout", str(key), "-out", str(cert),
        ],
        check=True,
        capture_output=True,
    )  # fmt: skip
    return key, cert


@pytest.mark.parametrize(("served_as", "delivered"), [("hooks.test", True), ("other.test", False)])
def test_https_goes_to_the_checked_address_and_verifies_the_urls_host(
    tmp_path: Path, served_as: str, delivered: bool
) -> None:
    key, cert = _certificate(tmp_path, served_as)
    tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    tls.load_cert_chain(cert, key)
    with receiving("/in", tls=tls) as server:
        # The name resolves (as checked) to the receiver: nothing resolves it again
        target = webhook_targets.Target("https", "hooks.test", server.port, "/in", ("127.0.0.1",))
        trusted = ssl.create_default_context(cafile=str(cert))
        delivery = webhooks.deliver(target, BODY, SECRET, context=trusted, sleep=no_sleep)
    if delivered:
        assert delivery == webhooks.Delivery("delivered", 1, 200)
        [post] = server.posts
        assert post.headers["Host"] == f"hooks.test:{server.port}" and post.body == BODY
    else:
        assert delivery.status == "failed" and delivery.http_status is None
        assert delivery.error is not None and "CERTIFICATE" in delivery.error.upper()
        assert server.posts == []
