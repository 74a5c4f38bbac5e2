"""Host patterns (SPEC §2): parsing, matching and coverage.

A pattern is an exact host name or ``*.`` plus a host name, matching exactly
one more label. Names compare case-insensitively with one trailing dot
dropped. ``*``, ``any``, IP literals, ports, schemes and paths are refused,
and so is a ``*.`` over a public suffix (``*.com``, ``*.co.uk``,
``*.workers.dev``): each is "any host" under that suffix, names anyone can
register. The public suffix list decides, both its ICANN and its private
sections, and — as its own algorithm says — a top-level name it does not
know counts as a suffix too (``*.lan``).

A host name that is not plain ASCII is first mapped by IDNA/UTS-46 (the
``idna`` package), exactly as a resolver or HTTP client would see it: a
full-width dot (``a。b.example.com``) is a real dot, so that name has two
labels before ``example.com`` and ``*.example.com`` does not match it. A
name UTS-46 refuses matches no pattern.
"""

from __future__ import annotations

import functools
import re

import idna
from publicsuffixlist import PublicSuffixList

__all__ = ["covers", "host_pattern_problem", "matches", "normalise_host"]

# Both matched with fullmatch: ``$`` would also match before a final newline.
_LABEL = re.compile(r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?")
# A top-level label starts with a letter: this refuses every IPv4 spelling
# (127.0.0.1, 2130706433, 0x7f.1, 0177.1) without listing them.
_TOP = re.compile(r"[a-z][a-z0-9-]*[a-z0-9]|[a-z]")


@functools.cache
def _suffixes() -> PublicSuffixList:
    # Built on first use, not at import (about 30 ms): only a wildcard
    # pattern's check needs it, and the command line starts without it.
    return PublicSuffixList()


def normalise_host(host: str) -> str:
    """The host as resolvers and clients see it: UTS-46 mapped, lower-case, no trailing dot.

    A name that UTS-46 refuses is returned lower-cased but still not ASCII,
    and `matches` never matches such a name.
    """
    if host.startswith("*.") and not host.isascii():
        # UTS-46 refuses '*' in a label: map the name the wildcard stands over.
        return "*." + normalise_host(host[2:])
    if not host.isascii():
        try:
            # uts46 maps full-width letters and dots, ideographic full stops
            # and case; non-transitional, as browsers do (IDNA 2008).
            host = idna.encode(host, uts46=True, transitional=False).decode("ascii")
        except (idna.IDNAError, UnicodeError, ValueError):
            return host.lower()
    host = host.lower()
    return host[:-1] if host.endswith(".") else host


def _name_problem(name: str) -> str | None:
    if not name:
        return "is empty"
    if len(name) > 253:
        return "is longer than 253 characters"
    labels = name.split(".")
    if any(not _LABEL.fullmatch(label) for label in labels):
        return "is not a host name (letters, digits and hyphens between dots)"
    if not _TOP.fullmatch(labels[-1]):
        return "is an IP address, not a host name"
    return None


def host_pattern_problem(pattern: object) -> str | None:
    """What is wrong with a host pattern, or None when it is valid."""
    if not isinstance(pattern, str):
        return "must be a string"
    raw = pattern.strip()
    low = raw.lower()
    if low in ("*", "any", "*.*") or low.startswith("*.*"):
        return "may not be any host: name the hosts"
    if "://" in raw:
        return "may not have a scheme: write only the host name"
    if "/" in raw:
        return "may not have a path: write only the host name"
    if "@" in raw:
        return "may not have user information"
    if ":" in raw or raw.startswith("["):
        return "may not have a port or be an IPv6 address"
    if raw != pattern or " " in raw:
        return "may not contain spaces"
    name = normalise_host(raw)
    wildcard = name.startswith("*.")
    if wildcard:
        name = name[2:]
    if "*" in name:
        return "may only start with '*.' (one level of subdomain)"
    problem = _name_problem(name)
    if problem is None and wildcard and _suffixes().is_public(name):
        return (f"may not be every site under the public suffix {name!r} (anyone can "
                f"register one there): name the sites, e.g. '*.yourdomain.{name}'")
    return problem


def matches(pattern: str, host: str) -> bool:
    """True when ``host`` is matched by ``pattern`` (one label for ``*.``)."""
    pattern, host = normalise_host(pattern), normalise_host(host)
    if not host.isascii() or any(not _LABEL.fullmatch(label) for label in host.split(".")):
        return False  # not a host name a pattern can name (see the module docstring)
    if pattern.startswith("*."):
        base = pattern[2:]
        if not host.endswith("." + base):
            return False
        head = host[: -len(base) - 1]
        return bool(head) and "." not in head
    return pattern == host


def covers(old: str, new: str) -> bool:
    """True when every host ``new`` matches is matched by ``old`` too."""
    old, new = normalise_host(old), normalise_host(new)
    if new.startswith("*."):
        return old == new
    return matches(old, new)
