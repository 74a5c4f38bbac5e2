"""Terminal claims: when the claim of the engine that drives a terminal has lapsed.

An engine that drives a terminal claims it in the store before its driver
starts (`Engine.attach_driver`); input through any other engine is refused while
the claim stands (`Calls`), and an attach elsewhere is refused beside it. A
claim ends with its engine's close, with its node, and when it lapses: its
process is gone from this machine (the same boot and pid namespace, where a pid
names one process: `engine.effects.processes`), or — a claim whose process
cannot be judged here (made on another machine, container or boot) — its lease
ran out by the store's clock.

The lease is `LEASE_S`, renewed every `RENEW_EVERY_S` by the driving engine
(in the background, never on a call's path). Thirty seconds: long enough that
an engine whose loop or store stalls for a few renewals (a long commit, a
PostgreSQL failover, a paused laptop waking) keeps its terminal, short enough
that when a machine dies its terminals are free again within half a minute, with
no manual step: an attach, or the next input, finds the lease run out. The
store's clock judges it (PostgreSQL's ``now()``; the machine's on SQLite, one
machine), so the machines' clocks need not agree.
"""

from __future__ import annotations

from engine.effects import processes
from engine.store.base import TerminalClaim

__all__ = ["LEASE_S", "RENEW_EVERY_S", "lapsed"]

#: How long a claim stands after its last renewal, by the store's clock (seconds).
LEASE_S = 30.0
#: How often the driving engine renews its claims (seconds): six renewals a lease,
#: so a few missed ones do not let it lapse.
RENEW_EVERY_S = 5.0


def lapsed(claim: TerminalClaim) -> bool:
    """Whether no process drives the terminal by ``claim`` any more: its process is
    gone from this machine, or, when its process cannot be judged here, its lease
    ran out (`TerminalClaim.expired`). A live process's claim never lapses here,
    whatever its lease: the process check is exact where it can be made."""
    if processes.judged(claim.process):
        return processes.gone(claim.process)
    return claim.expired
