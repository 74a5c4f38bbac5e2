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

Look-alike runs overlap (``vvv`` reads as ``wv`` and as ``vw``; ``rnn``, ``mn``), so
the skeleton does not fold runs into their letter, which depends on where one
starts; it writes each letter that reads as a run *as* that run (``m`` as ``rn``,
``w`` as ``vv``, ``d`` as ``cl``) and each look-alike digit as its letter. No
letter of a run is itself written otherwise, so every way of swapping look-alikes
in a name gives one skeleton: two names meet exactly when a person could read one
as the other by swapping look-alikes, however they overlap.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

__all__ = ["lookalike", "skeleton"]

# Separators read as one another, and a name with one reads as a name without:
# ``acme.standup``, ``acme-standup``, ``acme__standup``, ``acmestandup``.
_SEPARATORS = re.compile(r"[._\-\s]+")
# Each character that reads as something else, written as that: a digit as the letter
# it looks like, a letter that looks like a run of two as that run. None of what they
# are written as is itself in this table, so one pass writes a name in its one form.
_WRITTEN_AS = str.maketrans({"1": "l", "0": "o", "m": "rn", "w": "vv", "d": "cl"})


def skeleton(name: str) -> str:
    """What a person sees of ``name``: equal for two names they cannot tell apart (also
    when their look-alike runs overlap: ``vw``, ``wv`` and ``vvv`` are one skeleton)."""
    text = _SEPARATORS.sub("", unicodedata.normalize("NFKC", name).casefold())
    return text.translate(_WRITTEN_AS)


def lookalike(name: str, names: Iterable[str]) -> str | None:
    """The first of ``names`` (other than ``name`` itself) that a person cannot tell
    from ``name``, or None."""
    mine = skeleton(name)
    return next((other for other in names if other != name and skeleton(other) == mine), None)
