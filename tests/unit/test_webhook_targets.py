"""Where a webhook may post (E8): https to public addresses only, checked on every address a
name resolves to (IPv4 and IPv6, mapped and translated forms too); http://127.0.0.1 only where
the operator allows local webhooks; and the body's HMAC-SHA256 signature."""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
from collections.abc import Sequence

import pytest
from evalsvc import webhook_targets
from evalsvc.errors import InvalidInput
from hypothesis import given, settings
from hypothesis import strategies as st


def resolver(*addresses: str) -> webhook_targets.Resolver:
    def resolve(host: str, port: int) -> Sequence[str]:
        return list(addresses)

    return resolve


def test_the_signature_is_the_hex_hmac_sha256_of_the_body() -> None:
    body = b'{"monitor_id":"m1","regressed":["polite"]}'
    expected = hmac.new(b"s3cret", body, hashlib.sha256).hexdigest()
    assert webhook_targets.sign(body, "s3cret") == f"sha256={expected}"
    assert webhook_targets.verify(body, "s3cret", f"sha256={expected}")
    assert not webhook_targets.verify(body + b" ", "s3cret", f"sha256={expected}")
    assert not webhook_targets.verify(body, "other", f"sha256={expected}")


def test_a_public_https_target_keeps_every_address_to_connect_to() -> None:
    target = webhook_targets.check(
        "https://hooks.example.com:8443/in?x=1",
        resolve=resolver("93.184.216.34", "2606:2800:220:1:248:1893:25c8:1946", "93.184.216.34"),
    )
    assert (target.host, target.port, target.path) == ("hooks.example.com", 8443, "/in?x=1")
    assert target.addresses == ("93.184.216.34", "2606:2800:220:1:248:1893:25c8:1946")


@pytest.mark.parametrize(
    "address",
    [
        "127.0.0.1",
        "10.1.2.3",
        "172.16.0.1",
        "192.168.1.1",
        "169.254.169.254",  # the instance metadata address
        "100.64.0.1",  # shared address space
        "0.0.0.0",  # noqa: S104 (an address refused, not bound)
        "224.0.0.1",
        "240.0.0.1",
        "255.255.255.255",
        "::1",
        "::",
        "fe80::1",
        "fc00::1",
        "fd00:ec2::254",  # the instance metadata address over IPv6
        "::ffff:10.0.0.1",  # IPv4-mapped
        "::ffff:169.254.169.254",
        "64:ff9b::a9fe:a9fe",  # NAT64 of 169.254.169.254
        "2002:a00:1::1",  # 6to4 of 10.0.0.1
        "2001:0:4136:e378:8000:63bf:3fff:fdd2",  # Teredo
        "ff02::1",
    ],
)
def test_a_host_resolving_to_any_address_that_is_not_public_is_refused(address: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        webhook_targets.check(
            "https://hooks.example.com/", resolve=resolver("93.184.216.34", address)
        )
    assert "not a public address" in caught.value.message


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("http://hooks.example.com/", "only https"),
        ("ftp://hooks.example.com/", "only https"),
        ("hooks.example.com/in", "only https"),
        ("https:///in", "no host"),
        ("https://user:pw@hooks.example.com/", "credentials"),
        ("https://hooks.example.com:99999/", "not a URL"),
        ("https://hooks.example.com/a b", "spaces or control"),
        ("https://hooks.example.com/\n", "spaces or control"),
        ("https://" + "a" * 2000 + ".com/", "longer than"),
        ("http://127.0.0.1:8080/hook", "only https"),  # local webhooks not allowed here
        ("https://127.0.0.1/hook", "not a public address"),
        ("https://[::1]/hook", "not a public address"),
        ("https://hooks.example.com/caf\u00e9", "outside ASCII"),
        ("https://h\u00f6oks.example.com/in", "outside ASCII"),
    ],
)
def test_a_bad_url_is_refused_saying_why(url: str, says: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        # Only an address literal is ever resolved here: to itself, as the system would
        webhook_targets.check(url, resolve=lambda host, port: [host])
    assert says in caught.value.message


def test_a_name_that_does_not_resolve_is_refused() -> None:
    def fails(host: str, port: int) -> Sequence[str]:
        raise OSError("no such name")

    with pytest.raises(InvalidInput) as caught:
        webhook_targets.check("https://nowhere.invalid/", resolve=fails)
    assert "does not resolve" in caught.value.message
    with pytest.raises(InvalidInput):
        webhook_targets.check("https://empty.example/", resolve=resolver())


def test_local_webhooks_reach_127_0_0_1_over_http_only_where_allowed() -> None:
    target = webhook_targets.check("http://127.0.0.1:8765/hook", allow_local=True)
    assert (target.scheme, target.port, target.addresses) == ("http", 8765, ("127.0.0.1",))
    for url in ("http://localhost:8765/", "http://10.0.0.1/", "http://[::1]/"):
        with pytest.raises(InvalidInput):
            webhook_targets.check(url, allow_local=True, resolve=resolver("127.0.0.1"))


@settings(max_examples=300)
@given(st.ip_addresses())
def test_is_public_agrees_with_the_address_registries(address: webhook_targets.IPAddress) -> None:
    public = webhook_targets.is_public(address)
    if public:
        assert address.is_global and not address.is_multicast
        if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
            assert address.ipv4_mapped.is_global
    if address.is_private or address.is_loopback or address.is_link_local:
        assert not public


@settings(max_examples=300)
@given(st.text(max_size=300))
def test_any_text_is_a_target_or_a_400(url: str) -> None:
    try:
        target = webhook_targets.check(url, resolve=resolver("93.184.216.34"))
    except InvalidInput as error:
        assert error.message.startswith("webhook_url ")
        return
    assert target.scheme == "https" and target.addresses == ("93.184.216.34",)
    # what is accepted can be sent: http.client writes the request line and Host in ASCII
    assert target.host.isascii() and target.path.isascii()
