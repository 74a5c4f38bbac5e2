"""Which addresses a card's fetch may never reach (SPEC §8.1).

An explicit list of refused networks, not ``ipaddress.is_global`` /
``is_private``: on Python 3.11 those call multicast, ``::127.0.0.1`` and the
NAT64 forms global. IPv6 addresses that carry an IPv4 address (mapped,
compatible, NAT64, 6to4, Teredo) are refused when the IPv4 address is.

The IPv6 list follows the IANA IPv6 Special-Purpose Address Registry,
including what Python's ``ipaddress`` does not know: the SIIT
IPv4-translated range ``::ffff:0:0:0/96``, the documentation range
``3fff::/20`` (RFC 9637), SRv6 SIDs ``5f00::/16`` (RFC 9602), the local-use
NAT64 prefix ``64:ff9b:1::/48`` (RFC 8215) and the dummy prefix
``100:0:0:1::/64`` (RFC 9780). The deprecated IPv4-compatible ``::/96`` and
the SIIT range are refused whole: no public host is reached that way.
"""

from __future__ import annotations

import ipaddress

__all__ = ["METADATA_ADDRESSES", "METADATA_HOSTS", "REFUSED_NETWORKS", "address_refused"]

_V4 = [
    "0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16",
    "172.16.0.0/12", "192.0.0.0/24", "192.0.2.0/24", "192.88.99.0/24", "192.168.0.0/16",
    "198.18.0.0/15", "198.51.100.0/24", "203.0.113.0/24", "224.0.0.0/4", "240.0.0.0/4",
    "255.255.255.255/32",
]
_V6 = [
    "::/96", "::ffff:0:0:0/96", "fc00::/7", "fe80::/10", "fec0::/10", "ff00::/8",
    "2001:db8::/32", "3fff::/20", "5f00::/16", "64:ff9b:1::/48", "100::/64", "100:0:0:1::/64",
    "2001::/23",
]
#: Every network a card's fetch may never reach.
REFUSED_NETWORKS = tuple(ipaddress.ip_network(n) for n in _V4 + _V6)
#: Cloud metadata addresses and names, refused whatever they resolve to.
METADATA_ADDRESSES = frozenset({"169.254.169.254", "fd00:ec2::254", "100.100.100.200"})
METADATA_HOSTS = frozenset({"metadata.google.internal", "metadata", "instance-data"})


def _embedded_v4(ip: ipaddress.IPv6Address) -> list[ipaddress.IPv4Address]:
    """IPv4 addresses an IPv6 address carries: mapped, compatible, NAT64, 6to4, Teredo."""
    out = []
    if ip.ipv4_mapped is not None:
        out.append(ip.ipv4_mapped)
    packed = int(ip)
    if packed >> 32 == 0 and packed > 1:  # IPv4-compatible ::a.b.c.d
        out.append(ipaddress.IPv4Address(packed & 0xFFFFFFFF))
    if ip in ipaddress.ip_network("64:ff9b::/96") or ip in ipaddress.ip_network("64:ff9b:1::/48"):
        out.append(ipaddress.IPv4Address(packed & 0xFFFFFFFF))
    if ip.sixtofour is not None:
        out.append(ip.sixtofour)
    if ip.teredo is not None:
        out.extend(ip.teredo)
    return out


def address_refused(address: str) -> bool:
    """True when a fetch may not connect to this address."""
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return True  # not an address: fail closed
    if str(ip) in METADATA_ADDRESSES:
        return True
    if any(ip in net for net in REFUSED_NETWORKS if net.version == ip.version):
        return True
    if isinstance(ip, ipaddress.IPv6Address):
        return any(address_refused(str(v4)) for v4 in _embedded_v4(ip))
    return False
