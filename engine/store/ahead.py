"""What a store a newer arrowgate migrated is told: both versions, and to upgrade.

A store's schema version is the number of steps of its chain of migrations it
has (SQLite's `engine.store.migrations`, PostgreSQL's `engine.store.pg.schema`:
each chain numbers its own). A store whose ledger holds every step this code
knows and more after them was migrated by a newer arrowgate: the user upgraded
one machine and opened the store from another, or went back to an older
install. What helps is the two versions side by side and what to do, in the
same words on both stores. A ledger that names a step this code never had
anywhere else (in the middle of the chain, a branch's build) is another schema,
and upgrading would not help: `ahead_of_code` tells the two apart.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["ahead_of_code", "ahead_text", "arrowgate_version"]


def arrowgate_version() -> str:
    """The installed arrowgate's version (``unknown`` in a checkout never installed):
    what ``arrowgate --version`` prints, ``arrowgate mcp`` tells its client and a
    store's refusal names."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("arrowgate")
    except PackageNotFoundError:
        return "unknown"


def ahead_of_code(recorded: Sequence[str], known: Sequence[str]) -> bool:
    """Whether a ledger recording ``recorded`` (its chain's steps, in the order recorded)
    is a newer arrowgate's: every step of ``known``, and more. (The order is not asked:
    SQLite records the steps it adopted from the sets before the chains merged when it
    adopts them, after others.)"""
    return len(set(recorded)) > len(known) and set(known) <= set(recorded)


def ahead_text(recorded: Sequence[str], known: Sequence[str]) -> str:
    """Why a store `ahead_of_code` is refused: its schema version and this code's, each
    with its newest step's name, this arrowgate's version, and what to do."""
    mine = (f"{len(known)} ({known[-1]})" if known else "0")
    extra = [name for name in recorded if name not in set(known)]
    return (f"it has migrations this engine does not know ({', '.join(extra)}): a newer "
            f"engine migrated it. The store is at schema version {len(set(recorded))} "
            f"({recorded[-1]}), and this arrowgate ({arrowgate_version()}) reads up to "
            f"schema version {mine}: upgrade arrowgate (to the version that migrated it, "
            "or later) to open it. Nothing was written to it")
