"""Webhook targets: which addresses the sandbox sends events to.

A webhook URL (``PUT /sandbox/webhook``, a session's ``callbackUrl``) makes the sandbox
open a connection where its caller says; on a team host anyone with the public demo
keys is that caller. So:

1. An address written in another spelling (``2130706434``, ``0x7f.1``, ``127.1``,
   ``::ffff:169.254.169.254``) is read as the address it is (`normalise_url`), and
   the URL is kept in the usual dotted form: what is checked is what is contacted.
2. Unspecified (``0.0.0.0/8``, ``::``), link-local (``169.254.0.0/16`` where cloud
   metadata services answer, ``fe80::/10``) and non-unicast (multicast, reserved,
   broadcast) addresses are refused, always.
3. Loopback is allowed: a developer's ``workbench listen`` runs there.
4. Every other non-public address (``10/8``, ``172.16/12``, ``192.168/16``,
   ``100.64/10``, ``fc00::/7`` ...) only when the operator allows it
   (``workbench sandbox --allow-private-webhooks``, `SandboxConfig.webhook_allow_private`).
5. A host name is checked at delivery, after it is resolved: every address it
   resolves to must pass, and the connection goes to the address checked
   (`resolve_target`), so a name that changes its answer between check and connect
   (DNS rebinding) reaches nothing else.
"""

from __future__ import annotations

import asyncio
import ipaddress
import re
import socket
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from workbench.sandbox.errors import ServiceError

if TYPE_CHECKING:
    import httpx2

__all__ = [
    "TargetRefused",
    "check_url",
    "normalise_url",
    "refusal",
    "resolve_target",
    "webhook_target",
]

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

#: The forms the C library's ``inet_aton`` reads as an IPv4 address: one to four parts,
#: each decimal, octal (leading 0) or hexadecimal (0x).
_LEGACY_IPV4 = re.compile(r"^(0x[0-9a-f]*|[0-9]+)(\.(0x[0-9a-f]*|[0-9]+)){0,3}$", re.IGNORECASE)
_THIS_NETWORK = ipaddress.ip_network("0.0.0.0/8")
_PRIVATE_HINT = "workbench sandbox --allow-private-webhooks"


class TargetRefused(ValueError):
    """A webhook target whose address the sandbox does not send to; the message names the rule."""


def _literal(host: str) -> IPAddress | None:
    """The address ``host`` spells, in any spelling, or ``None`` for a name."""
    host = host.strip("[]").rstrip(".")
    try:
        address = ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        if not _LEGACY_IPV4.match(host):
            return None
        try:
            return ipaddress.IPv4Address(socket.inet_aton(host))
        except OSError:
            return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def refusal(address: IPAddress, *, allow_private: bool) -> str | None:
    """Why the sandbox does not send to ``address``, or ``None`` when it does."""
    if address.is_unspecified or address in _THIS_NETWORK:
        return f"{address} is an unspecified address (0.0.0.0/8, ::): not a webhook target"
    if address.is_link_local:
        return (
            f"{address} is a link-local address (169.254.0.0/16, fe80::/10, where cloud "
            "metadata services answer): not a webhook target"
        )
    if address.is_loopback:
        return None
    if (
        address.is_multicast
        or address.is_reserved
        or address == ipaddress.IPv4Address("255.255.255.255")
    ):
        return f"{address} is not a unicast address: not a webhook target"
    if not address.is_global and not allow_private:
        return (
            f"{address} is a private address (10/8, 172.16/12, 192.168/16, fc00::/7 and "
            f"the other non-public ranges), refused unless the operator allows them "
            f"({_PRIVATE_HINT})"
        )
    return None


def _url(text: str) -> httpx2.URL:
    """``text`` parsed as httpx2 parses it (imported with the first webhook target)."""
    import httpx2

    return httpx2.URL(text)


def normalise_url(url: str) -> str:
    """``url`` with a host spelled as an address in another form rewritten in the usual one."""
    parsed = _url(url)
    address = _literal(parsed.host)
    if address is None or str(address) == parsed.host:
        return url
    return str(parsed.copy_with(host=str(address)))


def check_url(url: str, *, allow_private: bool) -> str:
    """The normalised ``url`` when its host may be sent to (a name is checked at delivery).

    Raises:
        TargetRefused: the host is an address of a refused kind; the message names the rule.
    """
    normal = normalise_url(url)
    address = _literal(_url(normal).host)
    if address is not None:
        reason = refusal(address, allow_private=allow_private)
        if reason:
            raise TargetRefused(reason)
    return normal


def webhook_target(field: str, url: str | None, *, allow_private: bool) -> str | None:
    """A request's webhook URL, normalised (`check_url`); ``None`` stays ``None``.

    Raises:
        ServiceError: SVC-VAL-4001 naming the field and the rule its address breaks.
    """
    if url is None:
        return None
    try:
        return check_url(url, allow_private=allow_private)
    except TargetRefused as exc:
        raise ServiceError("SVC-VAL-4001", f"{field}: {exc}") from None


async def resolve_target(url: str, *, allow_private: bool) -> tuple[str, str]:
    """The address to connect to for ``url``: ``(url with that address as host, host name)``.

    The name is resolved once, every address it resolves to is checked, and the first
    is used, so the connection reaches the address that was checked.

    Raises:
        TargetRefused: the host is, or resolves to, an address of a refused kind.
        OSError: the name does not resolve.
        ValueError: the URL does not parse.
    """
    parts = urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    target = _url(url)
    host = target.host
    address = _literal(host)
    found: list[IPAddress | None] = [address]
    if address is None:
        infos = await asyncio.get_running_loop().getaddrinfo(
            host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP
        )
        found = [_literal(str(info[4][0])) for info in infos]
    addresses = [a for a in found if a is not None]
    if not addresses:
        raise OSError(f"{host} resolves to no address")
    for each in addresses:
        reason = refusal(each, allow_private=allow_private)
        if reason:
            raise TargetRefused(reason)
    return str(target.copy_with(host=str(addresses[0]))), host
