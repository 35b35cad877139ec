"""Where a monitor's webhook may post (E8), and how its body is signed.

A tenant names the URL, so the service must not be made to post into its own network, nor to
an address that is not one host's: only `https` URLs without credentials, to a host whose every
address (IPv4 and IPv6, after DNS resolution) is public. The rule is SPECIAL_BLOCKS below, a
table of the IANA IPv4 and IPv6 special-purpose address registries with multicast and the
deprecated IPv6 site-local block added, walked for every address (is_public says what it
decides). The caller connects to the addresses checked here, never resolving again, so a name
that changes its answer between the check and the post gains nothing. Where the operator
allows it (EVALSVC_ALLOW_LOCAL_WEBHOOKS=1: the local server), `http://127.0.0.1` is allowed
too, and nothing else that is not public.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import socket
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

from evalsvc.core.errors import InvalidInput

MAX_URL_CHARS = 2_000
SIGNATURE_HEADER = "X-Evalsvc-Signature"

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network
Resolver = Callable[[str, int], Sequence[str]]


def _last_32_bits(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address:
    return ipaddress.IPv4Address(int(address) & 0xFFFF_FFFF)


def _bits_16_to_48(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address:
    return ipaddress.IPv4Address((int(address) >> 80) & 0xFFFF_FFFF)


@dataclass(frozen=True, slots=True)
class Block:
    """One row of SPECIAL_BLOCKS: a block of addresses, the name a refusal gives it, the RFC
    that set it aside, and whether an address in it is refused. A row not refused says why
    not: its addresses stand for an IPv4 address (`embeds` finds it), and are as public as
    that address is."""

    network: IPNetwork
    name: str
    rfc: str
    refused: bool = True
    why_not: str = ""
    embeds: Callable[[ipaddress.IPv6Address], ipaddress.IPv4Address] | None = None


def _row(block: str, name: str, rfc: str) -> Block:
    return Block(ipaddress.ip_network(block), name, rfc)


def _embedding(
    block: str,
    name: str,
    rfc: str,
    embeds: Callable[[ipaddress.IPv6Address], ipaddress.IPv4Address],
) -> Block:
    why = "it stands for the IPv4 address it embeds, which is checked in its place"
    return Block(ipaddress.ip_network(block), name, rfc, False, why, embeds)


# The rule: an address in a refused row is not public, whatever the registry's "Globally
# Reachable" column says. The rows it marks reachable are refused on purpose: anycast service
# addresses (PCP, TURN, DNS-SD registration, AMT, AS112) are answered by the nearest server
# offering the service, which may be one inside the network the post would leave from (a PCP
# server is that network's own gateway), and none is a tenant's receiver; ORCHIDv2 and drone
# entity tags are identifiers no host is reached at over plain IP; 192.88.99.0/24 reaches
# whichever deprecated 6to4 relay is nearest. The three rows not refused (IPv4-mapped, the
# NAT64 well-known prefix, 6to4) are decided by the IPv4 address they carry. Teredo is refused
# outright: the IPv4 address in it is obfuscated and the packet goes through a relay. Nested
# rows (192.0.0.0/24, 2001::/23) are all refused; the most specific names a refusal.
SPECIAL_BLOCKS: tuple[Block, ...] = (
    # IANA IPv4 special-purpose address registry
    _row("0.0.0.0/8", "'this network'", "RFC 791"),
    _row("0.0.0.0/32", "'this host on this network'", "RFC 1122"),
    _row("10.0.0.0/8", "private-use", "RFC 1918"),
    _row("100.64.0.0/10", "shared address space", "RFC 6598"),
    _row("127.0.0.0/8", "loopback", "RFC 1122"),
    _row("169.254.0.0/16", "link-local (the instance metadata address among them)", "RFC 3927"),
    _row("172.16.0.0/12", "private-use", "RFC 1918"),
    _row("192.0.0.0/24", "IETF protocol assignments", "RFC 6890"),
    _row("192.0.0.0/29", "IPv4 service continuity prefix", "RFC 7335"),
    _row("192.0.0.8/32", "IPv4 dummy address", "RFC 7600"),
    _row("192.0.0.9/32", "Port Control Protocol anycast", "RFC 7723"),  # reachable: refused
    _row("192.0.0.10/32", "TURN anycast", "RFC 8155"),  # reachable: refused
    _row("192.0.0.170/32", "NAT64/DNS64 discovery", "RFC 8880"),
    _row("192.0.0.171/32", "NAT64/DNS64 discovery", "RFC 8880"),
    _row("192.0.2.0/24", "documentation (TEST-NET-1)", "RFC 5737"),
    _row("192.31.196.0/24", "AS112 anycast DNS", "RFC 7535"),  # reachable: refused
    _row("192.52.193.0/24", "AMT relay anycast", "RFC 7450"),  # reachable: refused
    _row("192.88.99.0/24", "deprecated 6to4 relay anycast", "RFC 7526"),
    _row("192.168.0.0/16", "private-use", "RFC 1918"),
    _row("192.175.48.0/24", "AS112 anycast DNS (direct delegation)", "RFC 7534"),  # reachable
    _row("198.18.0.0/15", "benchmarking", "RFC 2544"),
    _row("198.51.100.0/24", "documentation (TEST-NET-2)", "RFC 5737"),
    _row("203.0.113.0/24", "documentation (TEST-NET-3)", "RFC 5737"),
    _row("240.0.0.0/4", "reserved", "RFC 1112"),
    _row("255.255.255.255/32", "limited broadcast", "RFC 919"),
    # and the IPv4 multicast address space
    _row("224.0.0.0/4", "multicast", "RFC 5771"),
    # IANA IPv6 special-purpose address registry
    _row("::1/128", "loopback", "RFC 4291"),
    _row("::/128", "unspecified", "RFC 4291"),
    _embedding("::ffff:0:0/96", "IPv4-mapped", "RFC 4291", _last_32_bits),
    _embedding("64:ff9b::/96", "NAT64 (well-known prefix)", "RFC 6052", _last_32_bits),
    _row("64:ff9b:1::/48", "NAT64 (local-use prefix)", "RFC 8215"),
    _row("100::/64", "discard-only", "RFC 6666"),
    _row("100:0:0:1::/64", "dummy IPv6 prefix", "RFC 9780"),
    _row("2001::/23", "IETF protocol assignments", "RFC 2928"),
    _row("2001::/32", "Teredo", "RFC 4380"),
    _row("2001:1::1/128", "Port Control Protocol anycast", "RFC 7723"),  # reachable: refused
    _row("2001:1::2/128", "TURN anycast", "RFC 8155"),  # reachable: refused
    _row("2001:1::3/128", "DNS-SD service registration anycast", "RFC 9665"),  # reachable
    _row("2001:2::/48", "benchmarking", "RFC 5180"),
    _row("2001:3::/32", "AMT relay anycast", "RFC 7450"),  # reachable: refused
    _row("2001:4:112::/48", "AS112 anycast DNS", "RFC 7535"),  # reachable: refused
    _row("2001:10::/28", "deprecated ORCHID", "RFC 4843"),
    _row("2001:20::/28", "ORCHIDv2 identifiers", "RFC 7343"),  # reachable: refused
    _row("2001:30::/28", "drone remote ID entity tags", "RFC 9374"),  # reachable: refused
    _row("2001:db8::/32", "documentation", "RFC 3849"),
    _embedding("2002::/16", "6to4", "RFC 3056", _bits_16_to_48),
    _row("2620:4f:8000::/48", "AS112 anycast DNS (direct delegation)", "RFC 7534"),  # reachable
    _row("3fff::/20", "documentation", "RFC 9637"),
    _row("5f00::/16", "SRv6 segment identifiers", "RFC 9602"),
    _row("fc00::/7", "unique-local", "RFC 4193"),
    _row("fe80::/10", "link-local", "RFC 4291"),
    # not in the registry: deprecated site-local, and multicast
    _row("fec0::/10", "deprecated site-local", "RFC 3879"),
    _row("ff00::/8", "multicast", "RFC 4291"),
)
# The only IPv6 block the IANA assigns for global unicast; the rest is reserved (or a row).
_GLOBAL_UNICAST = ipaddress.ip_network("2000::/3")


def sign(body: bytes, secret: str) -> str:
    """The signature header's value: `sha256=` and the hex HMAC-SHA256 of `body`."""
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def verify(body: bytes, secret: str, header: str) -> bool:
    """Whether `header` is the signature of `body` with `secret` (in constant time)."""
    return hmac.compare_digest(sign(body, secret), header)


@dataclass(frozen=True, slots=True)
class Target:
    """A URL checked for posting: its scheme, host (for the TLS name and Host header), port,
    path with query, and the addresses to connect to."""

    scheme: str
    host: str
    port: int
    path: str
    addresses: tuple[str, ...]


def _bad(url: str, why: str) -> InvalidInput:
    return InvalidInput(f"webhook_url {url[:120]!r} cannot be used: {why}")


def why_not_public(address: IPAddress) -> str | None:
    """None when `address` is public; else what kind of address it is (a row's name).

    In order: the most specific row of SPECIAL_BLOCKS holding it decides (refused, or its
    embedded IPv4 address is asked in turn); an IPv6 address outside 2000::/3 is not public;
    and neither is one the standard library does not count global (a second opinion: the
    table above is the rule, this only ever refuses more)."""
    found: Block | None = None
    for block in SPECIAL_BLOCKS:  # some 50 rows: a walk, bounded on any input
        if address in block.network and (
            found is None or block.network.prefixlen > found.network.prefixlen
        ):
            found = block
    if (
        found is not None
        and found.embeds is not None
        and isinstance(address, ipaddress.IPv6Address)
    ):
        inner = found.embeds(address)
        why = why_not_public(inner)
        return None if why is None else f"{found.name} form of {inner}, {why}"
    if found is not None and found.refused:
        return found.name
    if isinstance(address, ipaddress.IPv6Address) and address not in _GLOBAL_UNICAST:
        return "reserved IPv6 (outside 2000::/3)"
    if not address.is_global:
        return "not globally reachable"
    return None


def is_public(address: IPAddress) -> bool:
    """Whether `address` is on the public internet (and so is any address it stands for)."""
    return why_not_public(address) is None


def _system_resolver(host: str, port: int) -> list[str]:
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return [str(info[4][0]) for info in infos]


def check(url: str, *, allow_local: bool = False, resolve: Resolver = _system_resolver) -> Target:
    """The target `url` names, with its addresses; InvalidInput saying why it cannot be used."""
    if len(url) > MAX_URL_CHARS:
        raise _bad(url, f"it is longer than {MAX_URL_CHARS} characters")
    if any(ord(c) < 33 or ord(c) == 127 for c in url):
        raise _bad(url, "it holds spaces or control characters")
    if not url.isascii():
        raise _bad(
            url,
            "it holds characters outside ASCII: write the host in its IDNA form (xn--...) and "
            "percent-encode the path",
        )
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as error:
        raise _bad(url, f"it is not a URL ({error})") from None
    host = parts.hostname or ""
    if parts.username is not None or parts.password is not None:
        raise _bad(url, "it holds credentials; use webhook_secret to authenticate")
    local = allow_local and parts.scheme == "http" and host == "127.0.0.1"
    if parts.scheme != "https" and not local:
        raise _bad(url, "only https URLs are posted to")
    if not host:
        raise _bad(url, "it names no host")
    port = port or (443 if parts.scheme == "https" else 80)
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    if local:
        return Target(parts.scheme, host, port, path, ("127.0.0.1",))
    try:
        found = resolve(host, port)
    except (OSError, UnicodeError):
        raise _bad(url, f"its host {host[:80]!r} does not resolve") from None
    addresses: list[str] = []
    for text in dict.fromkeys(found):
        address = ipaddress.ip_address(text.split("%", 1)[0])
        why = why_not_public(address)
        if why is not None:
            raise _bad(
                url, f"its host resolves to {address}, which is not a public address ({why})"
            )
        addresses.append(str(address))
    if not addresses:
        raise _bad(url, f"its host {host[:80]!r} resolves to no address")
    return Target(parts.scheme, host, port, path, tuple(addresses))
