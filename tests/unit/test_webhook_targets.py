"""Where a webhook may post (E8): https to public addresses only, checked on every address a
name resolves to (IPv4 and IPv6, mapped and translated forms too); http://127.0.0.1 only where
the operator allows local webhooks; and the body's HMAC-SHA256 signature."""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
from collections.abc import Sequence

import pytest
from evalsvc.core.errors import InvalidInput
from evalsvc.monitoring import webhook_targets
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
        "fec0::1",  # site-local, deprecated: not in the special-purpose registry
        "3fff::1",  # the documentation prefix of 2024
        "5f00::1",  # SRv6 segment identifiers
        "64:ff9b:1::a00:1",  # local-use NAT64
        "100:0:0:1::1",  # the dummy prefix
        "2001:4:112::1",  # AS112 anycast, globally reachable but refused
        "2620:4f:8000::1",
        "192.88.99.1",  # the deprecated 6to4 relay anycast
        "192.0.0.9",  # the PCP anycast address
        "192.31.196.1",
    ],
)
def test_a_host_resolving_to_any_address_that_is_not_public_is_refused(address: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        webhook_targets.check(
            "https://hooks.example.com/", resolve=resolver("93.184.216.34", address)
        )
    assert "not a public address" in caught.value.message


# The IANA special-purpose address registries (IPv4 and IPv6), entry by entry, with multicast and
# the deprecated IPv6 site-local block: what the table must hold, written out apart from it.
REGISTRIES = {
    *("0.0.0.0/8", "0.0.0.0/32", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8"),
    *("169.254.0.0/16", "172.16.0.0/12", "192.0.0.0/24", "192.0.0.0/29", "192.0.0.8/32"),
    *("192.0.0.9/32", "192.0.0.10/32", "192.0.0.170/32", "192.0.0.171/32", "192.0.2.0/24"),
    *("192.31.196.0/24", "192.52.193.0/24", "192.88.99.0/24", "192.168.0.0/16"),
    *("192.175.48.0/24", "198.18.0.0/15", "198.51.100.0/24", "203.0.113.0/24"),
    *("240.0.0.0/4", "255.255.255.255/32", "224.0.0.0/4"),
    *("::1/128", "::/128", "::ffff:0:0/96", "64:ff9b::/96", "64:ff9b:1::/48", "100::/64"),
    *("100:0:0:1::/64", "2001::/23", "2001::/32", "2001:1::1/128", "2001:1::2/128"),
    *("2001:1::3/128", "2001:2::/48", "2001:3::/32", "2001:4:112::/48", "2001:10::/28"),
    *("2001:20::/28", "2001:30::/28", "2001:db8::/32", "2002::/16", "2620:4f:8000::/48"),
    *("3fff::/20", "5f00::/16", "fc00::/7", "fe80::/10", "fec0::/10", "ff00::/8"),
}
# Not refused: each stands for the IPv4 address it carries, and is as public as that address.
EMBEDDING = {"::ffff:0:0/96", "64:ff9b::/96", "2002::/16"}


REFUSED = [block for block in webhook_targets.SPECIAL_BLOCKS if block.refused]


def address_of(version: int, n: int) -> webhook_targets.IPAddress:
    return ipaddress.IPv4Address(n) if version == 4 else ipaddress.IPv6Address(n)


def first_middle_last(network: webhook_targets.IPNetwork) -> list[webhook_targets.IPAddress]:
    first, size = int(network.network_address), network.num_addresses
    return [address_of(network.version, n) for n in (first, first + size // 2, first + size - 1)]


def just_outside(network: webhook_targets.IPNetwork) -> list[webhook_targets.IPAddress]:
    """The addresses next to `network` on either side, where there are any."""
    top = 2**32 - 1 if network.version == 4 else 2**128 - 1
    around = (int(network.network_address) - 1, int(network.broadcast_address) + 1)
    return [address_of(network.version, n) for n in around if 0 <= n <= top]


def refuses(address: webhook_targets.IPAddress) -> str:
    """The refusal `check` gives a host resolving to `address` (AssertionError if none)."""
    with pytest.raises(InvalidInput) as caught:
        webhook_targets.check("https://hooks.example.com/", resolve=resolver(str(address)))
    return caught.value.message


def test_the_table_holds_every_registry_entry_and_refuses_all_but_the_embedding_forms() -> None:
    blocks = {str(block.network): block for block in webhook_targets.SPECIAL_BLOCKS}
    assert len(blocks) == len(webhook_targets.SPECIAL_BLOCKS)  # no row twice
    assert set(blocks) == REGISTRIES
    for network, block in blocks.items():
        assert block.name and block.rfc.startswith("RFC ")
        assert block.refused == (network not in EMBEDDING)
        assert block.refused or (block.why_not and block.embeds is not None)


@pytest.mark.parametrize("block", REFUSED, ids=lambda block: str(block.network))
def test_every_refused_block_is_refused_at_its_first_middle_and_last_address_by_name(
    block: webhook_targets.Block,
) -> None:
    for address in first_middle_last(block.network):
        message = refuses(address)
        # Named by the most specific row holding it (a sub-block of 192.0.0.0/24 or 2001::/23).
        holding = [b for b in webhook_targets.SPECIAL_BLOCKS if address in b.network]
        named = max(holding, key=lambda b: b.network.prefixlen).name
        assert f"{address}, which is not a public address ({named})" in message


@pytest.mark.parametrize(
    "block",
    [block for block in webhook_targets.SPECIAL_BLOCKS if not block.refused],
    ids=lambda block: str(block.network),
)
def test_an_embedding_form_is_exactly_as_public_as_the_ipv4_address_it_carries(
    block: webhook_targets.Block,
) -> None:
    assert block.embeds is not None
    for address in first_middle_last(block.network):
        assert isinstance(address, ipaddress.IPv6Address)
        inner = block.embeds(address)
        assert webhook_targets.is_public(address) == webhook_targets.is_public(inner)
        if not webhook_targets.is_public(inner):
            assert f"({block.name} form of {inner}, " in refuses(address)
    # the first and last carry 0.0.0.0 and 255.255.255.255; the middle 128.0.0.0, public
    low, middle, high = first_middle_last(block.network)
    assert (webhook_targets.is_public(low), webhook_targets.is_public(high)) == (False, False)
    assert webhook_targets.is_public(middle)


def test_the_known_forms_carry_the_ipv4_address_where_their_rfcs_put_it() -> None:
    public = ipaddress.IPv4Address("93.184.216.34")
    for form in ("::ffff:93.184.216.34", "64:ff9b::5db8:d822", "2002:5db8:d822:1::1"):
        address = ipaddress.IPv6Address(form)
        assert webhook_targets.is_public(address), form
        block = next(b for b in webhook_targets.SPECIAL_BLOCKS if address in b.network)
        assert block.embeds is not None and block.embeds(address) == public


@pytest.mark.parametrize("block", REFUSED, ids=lambda block: str(block.network))
def test_the_addresses_just_outside_a_refused_block_are_accepted_where_public(
    block: webhook_targets.Block,
) -> None:
    for address in just_outside(block.network):
        in_a_row = any(address in b.network for b in webhook_targets.SPECIAL_BLOCKS)
        reserved = address.version == 6 and address not in ipaddress.ip_network("2000::/3")
        if in_a_row or reserved:
            continue  # not public either (or decided by the IPv4 address it carries)
        target = webhook_targets.check("https://hooks.example.com/", resolve=resolver(str(address)))
        assert target.addresses == (str(address),)


def test_the_neighbours_walked_include_these_public_addresses() -> None:
    # The walk above skips a neighbour in another row: these it does not skip, and accepts.
    neighbours = {str(a) for block in REFUSED for a in just_outside(block.network)}
    for text in (
        *("9.255.255.255", "11.0.0.0", "100.63.255.255", "100.128.0.0", "169.255.0.0"),
        *("172.32.0.0", "191.255.255.255", "192.0.1.255", "192.0.3.0", "192.88.100.0"),
        *("198.17.255.255", "198.20.0.0", "223.255.255.255", "2001:db9::", "2001:200::"),
        *("2620:4f:7fff:ffff:ffff:ffff:ffff:ffff", "2620:4f:8001::", "3fff:1000::"),
    ):
        assert text in neighbours
        assert webhook_targets.is_public(ipaddress.ip_address(text)), text


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
        # no refused row of the table holds it
        assert not any(
            block.refused and address in block.network for block in webhook_targets.SPECIAL_BLOCKS
        )
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
