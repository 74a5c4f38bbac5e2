"""Which process a record in the store names, and whether it is gone, where that can be told.

An engine that drives a terminal claims it in the store (`Engine.attach_driver`),
and input through any other engine is refused there. A process killed before
it closes its engine leaves its claim behind. Whether that process is gone can
be told only from where its pid means the same process: the same kernel boot
(``/proc/sys/kernel/random/boot_id``) and the same pid namespace (containers
have their own). There a process is named exactly by its pid and its start time
(``/proc/PID/stat``), which a pid reused by another process does not share.
A record made anywhere else — another machine, container or boot, or a system
without ``/proc`` — cannot be judged here (`judged`): the claim's lease judges it
instead (`engine.services.claims`).
"""

from __future__ import annotations

import functools
import os

__all__ = ["alive", "gone", "identity", "judged"]


@functools.cache
def _place() -> str | None:
    """This process's boot and pid namespace, or None where they cannot be read.

    Cached: neither changes while a process runs.
    """
    try:
        with open("/proc/sys/kernel/random/boot_id", encoding="ascii") as f:
            boot = f.read().strip()
        namespace = os.readlink("/proc/self/ns/pid")
    except (OSError, UnicodeDecodeError):
        return None
    return f"{boot} {namespace}" if boot and " " not in boot + namespace else None


def _started(pid: int) -> str | None:
    """When process ``pid`` started (clock ticks since boot), or None: no such process
    (or one that has exited and waits to be reaped, a zombie)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return None
    # "pid (comm) state ppid ...": comm may hold spaces and parentheses, so the
    # fields are counted after its last ")"; the start time is the 22nd field.
    fields = stat[stat.rfind(b")") + 2:].split()
    if len(fields) < 20 or fields[0] == b"Z":
        return None
    return fields[19].decode("ascii", "replace")


def identity() -> str | None:
    """This process, as a record in the store names it: boot, pid namespace, pid and
    start time; None where they cannot be read (then nothing can judge it gone)."""
    place, started = _place(), _started(os.getpid())
    return None if place is None or started is None else f"{place} {os.getpid()} {started}"


def _named(named: str | None) -> tuple[int, str] | None:
    """The pid and start time of process ``named`` (an `identity`) when it was made in
    this boot and pid namespace, where its pid can be judged; else None (another
    place, None, a malformed name)."""
    place = _place()
    if named is None or place is None:
        return None
    head, _, rest = named.rpartition(" ")  # "<place> <pid>" and the start time
    where, _, pid = head.rpartition(" ")
    if where != place or not (pid.isascii() and pid.isdigit() and len(pid) <= 10) or not rest:
        return None
    return int(pid), rest


def judged(named: str | None) -> bool:
    """Whether the process ``named`` (an `identity`) can be judged here: it was made in
    this boot and pid namespace. Elsewhere only its claim's lease tells it alive
    (`engine.services.claims`)."""
    return _named(named) is not None


def gone(named: str | None) -> bool:
    """True only when the process ``named`` (an `identity`) surely no longer runs: it
    was made in this boot and pid namespace, and no running process has its pid and
    start time. Anything else — None, another place, a malformed name — is False."""
    here = _named(named)
    return here is not None and _started(here[0]) != here[1]


def alive(named: str | None) -> bool:
    """True only when the process ``named`` (an `identity`) surely still runs: it was
    made in this boot and pid namespace, and a running process has its pid and start
    time. One that cannot be judged (another place, None) is False: not known alive."""
    here = _named(named)
    return here is not None and _started(here[0]) == here[1]
