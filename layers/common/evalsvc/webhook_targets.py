"""Where a monitor's webhook may post (E8), and how its body is signed.

A tenant names the URL, so the service must not be made to post into its own network: only
`https` URLs without credentials, to a host whose every address (IPv4 and IPv6, after DNS
resolution) is public. Private, loopback, link-local (the instance metadata address among
them), shared (100.64/10), multicast, reserved and unspecified addresses are refused, and so is
an IPv6 address that maps, embeds or translates one of those (::ffff:a.b.c.d, 64:ff9b::/96,
2002::/16). The caller connects to the addresses checked here, never resolving again, so a name
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

from evalsvc.errors import InvalidInput

MAX_URL_CHARS = 2_000
SIGNATURE_HEADER = "X-Evalsvc-Signature"

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
Resolver = Callable[[str, int], Sequence[str]]

_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_6TO4 = ipaddress.ip_network("2002::/16")


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


def is_public(address: IPAddress) -> bool:
    """Whether `address` is on the public internet (and so is any address it stands for)."""
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return is_public(address.ipv4_mapped)
        if address in _NAT64:
            return is_public(ipaddress.IPv4Address(int(address) & 0xFFFFFFFF))
        if address in _6TO4 and address.sixtofour is not None:
            return is_public(address.sixtofour)
        if address.teredo is not None:
            return False
    return address.is_global and not (
        address.is_multicast or address.is_reserved or address.is_unspecified
    )


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
        if not is_public(address):
            raise _bad(url, f"its host resolves to {address}, which is not a public address")
        addresses.append(str(address))
    if not addresses:
        raise _bad(url, f"its host {host[:80]!r} resolves to no address")
    return Target(parts.scheme, host, port, path, tuple(addresses))
