"""Package names a person cannot tell apart (README, decisions).

Grants are given to a package by its name (SPEC §4.1), and every review, revoke
and log line names it: two installed packages ``acme.standup`` and
``acme-standup`` would make each of those ambiguous to the person who reads
them. A name's `skeleton` is what a person sees of it; two names of one
skeleton are look-alikes, and the engine refuses the second (`lookalike`).

A package name is ``[a-z0-9._-]`` (SPEC §2), so case and other scripts cannot
occur in one; what is left is its separators and the ASCII letters and digits
that read as others in common terminal fonts (after Unicode TR 39's confusables
among ASCII: ``rn`` as ``m``, ``vv`` as ``w``, ``cl`` as ``d``, ``1`` as ``l``,
``0`` as ``o``). The skeleton still folds case and compatibility forms first,
so it holds for any text it is given.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

__all__ = ["lookalike", "skeleton"]

# Separators read as one another, and a name with one reads as a name without:
# ``acme.standup``, ``acme-standup``, ``acme__standup``, ``acmestandup``.
_SEPARATORS = re.compile(r"[._\-\s]+")
# Letters (runs) that read as another, each replaced by the one it reads as. The
# digits first: a run made with one (``c1`` for ``cl``) must fold as the letters do.
_READ_AS = (("1", "l"), ("0", "o"), ("rn", "m"), ("vv", "w"), ("cl", "d"))


def skeleton(name: str) -> str:
    """What a person sees of ``name``: equal for two names they cannot tell apart."""
    text = _SEPARATORS.sub("", unicodedata.normalize("NFKC", name).casefold())
    for seen, read in _READ_AS:
        text = text.replace(seen, read)
    return text


def lookalike(name: str, names: Iterable[str]) -> str | None:
    """The first of ``names`` (other than ``name`` itself) that a person cannot tell
    from ``name``, or None."""
    mine = skeleton(name)
    return next((other for other in names if other != name and skeleton(other) == mine), None)
