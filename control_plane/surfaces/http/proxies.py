"""Which address a request comes from: its peer, or, behind a proxy the server trusts, the
address that proxy forwarded in ``X-Forwarded-For``.

Any client can send ``X-Forwarded-For``, so the header is believed only when the peer is one of
the configured proxies (``KG_API_TRUSTED_PROXIES``: addresses or networks; none by default, when
the header is ignored). Then the list is read from the right, past every trusted proxy, to the
first address a trusted proxy vouched for: a client cannot choose its own address (and so its own
rate-limit key) by sending a header of its own, because its entries lie left of what the proxy
appended. That address must be an IP address; anything else is a 400 naming the header (a proxy
forwards addresses, never text). An address is returned in one spelling (``normalised``), since
it becomes a rate-limit key: lower-case and compressed, without brackets or an IPv6 zone (``%eth0``:
it names an interface of the host that saw the address, not another client), an IPv4 address
mapped into IPv6 as plain IPv4; a peer that is no IP address (a Unix socket, a test client) is
kept as it is, cut to 64 characters. The server's own proxy handling must be off (``kg serve`` turns
it off; with uvicorn, pass ``--no-proxy-headers``): uvicorn trusts the header from loopback by
default. All pure, over the peer and the header's value.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from typing import Final

from control_plane.settings import Network
from data_plane.errors import InputError

__all__ = ["HEADER", "client_address", "normalised"]

HEADER: Final = "X-Forwarded-For"
# Far more than any chain of proxies forwards; a longer header is refused rather than parsed.
_MAX_HEADER: Final = 1024


# What is kept of a peer that is not an IP address.
_MAX_PEER: Final = 64


def _address(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    bare = text.strip().removeprefix("[").removesuffix("]").partition("%")[0]
    try:
        ip = ipaddress.ip_address(bare)
    except ValueError:
        return None
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    return ip


def normalised(address: str) -> str:
    """One spelling per address (see the module docstring): ``[2001:DB8::1]``, ``2001:db8:0::1``
    and ``2001:db8::1%eth0`` are ``2001:db8::1``; ``::ffff:10.0.0.1`` is ``10.0.0.1``."""
    ip = _address(address)
    return str(ip) if ip is not None else address[:_MAX_PEER]


def _trusted(address: str | None, proxies: Iterable[Network]) -> bool:
    ip = None if address is None else _address(address)
    return ip is not None and any(ip in network for network in proxies)


def client_address(peer: str | None, forwarded_for: str | None, proxies: tuple[Network, ...]) -> str:
    """The address a request comes from (see the module docstring); ``peer`` is the socket's
    (None: unknown), ``forwarded_for`` the header's value (None: not sent)."""
    if forwarded_for is None or not _trusted(peer, proxies):
        return normalised(peer) if peer else "unknown"
    if len(forwarded_for) > _MAX_HEADER:
        raise InputError(
            f"header {HEADER} is {len(forwarded_for)} characters long; at most {_MAX_HEADER} are read",
            field=HEADER,
        )
    hops = [hop.strip() for hop in forwarded_for.split(",")]
    for hop in reversed(hops):
        ip = _address(hop)
        if ip is None:
            raise InputError(f"header {HEADER}: {hop[:60]!r} is not an IP address", field=HEADER)
        if not any(ip in network for network in proxies):
            return str(ip)
    return str(_address(hops[0]))
