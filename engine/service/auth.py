"""Who is calling the service (SPEC §10.1): bearer tokens, and the peer's process.

Tokens are random secrets; only their SHA-256 is stored, in the engine's
store (table ``service_tokens``), so every server on one store accepts them
and a stolen database reveals none. A token names one principal: the
operator, ``card:<id>`` or ``agent:<id>`` — the token decides who calls,
never the request body.

Looking a token up is a hash and a dict read: the hot call route does no
database read for it. A token revoked through another server on the same
store (or with its node) is refused at this server's next request: before a
turn of the loop trusts the cache, the service's `TokenStore.follow` has it
catch up with the store once (`Engine.catch_up`: one ``pragma data_version`` on
SQLite, one short query on PostgreSQL, when nothing changed), and the
store's change feed names the tokens revoked, which the cache drops
(`engine.store.tokenfeed.TokenFeed`). A token minted elsewhere is not cached
yet, so it is looked up. This server's own revocations apply at once. What
the feed cannot name (a row changed by hand on PostgreSQL, outside the
engine) is seen within `CACHE_SECONDS`: an entry is read again after that
long in any case. What outlives its request (an event stream, a wait) holds a
`Standing`, which is ended as soon as a catch-up names its token, and which
confirms the token again once its last confirmation is `CACHE_SECONDS` old.

The peer: on the Unix socket the kernel tells us the calling process
(``SO_PEERCRED``); on loopback TCP we find it through ``/proc/net/tcp``.
An operator token used from inside a coding agent's process tree is not a
person (SPEC §4.5), so consent actions from such a peer are refused; when
the peer cannot be told, they are refused too (fail closed).
"""

from __future__ import annotations

import asyncio
import errno
import hashlib
import hmac
import math
import os
import secrets
import socket
import struct
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from pathlib import Path

from engine.core.errors import StoreFailed
from engine.core.principal import Principal
from engine.effects.operator import peer_check
from engine.store.base import TokenTable
from engine.store.tokenfeed import TokenFeed
from engine.store.tokens import SQLiteTokens

__all__ = [
    "CACHE_SECONDS",
    "OUTAGE_MIN_SECONDS",
    "OUTAGE_SECONDS",
    "OUTAGE_TIMES",
    "Peer",
    "Standing",
    "TokenMemo",
    "TokenStore",
    "agent_verdict",
    "hash_token",
    "peer_of_socket",
    "peer_of_tcp",
    "pinned_pid",
    "write_secret_file",
]

#: How long a cached token is trusted before its row is read again, whatever the
#: change feed said: the bound for what the feed cannot name (a row changed by hand
#: on PostgreSQL). A revocation through any server is seen at once (`TokenStore.follow`).
CACHE_SECONDS = 2.0

#: How long a failed token check is remembered at most: meanwhile every check the
#: cache cannot answer fails closed at once (`StoreFailed`, 503) instead of asking
#: the store again. Checks run on the service's event loop, so while the database is
#: down each one would otherwise hold every other request (health included) for
#: as long as the store takes to give up.
OUTAGE_SECONDS = 2.0
#: A failed check is remembered for this many times as long as it held the loop
#: (within `OUTAGE_MIN_SECONDS` and `OUTAGE_SECONDS`): a check that failed at once
#: (a connection the restarting server dropped, a refused connection) is asked again
#: a moment later, so a restart of under a second is not two seconds of 503s, while
#: asking costs the loop at most a fifth of its time however the store fails.
OUTAGE_TIMES = 4.0
#: The shortest a failed check is remembered (`OUTAGE_TIMES`).
OUTAGE_MIN_SECONDS = 0.1


def hash_token(token: str) -> str:
    """Hex SHA-256 of a token: all the store keeps."""
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(frozen=True, slots=True)
class _Entry:
    id: str
    principal: Principal
    digest: str
    checked: float


def _new_token() -> tuple[str, str]:
    """A new token's id (``tok_``, what listings and revocations name) and its secret
    (``agt_``, 32 random bytes: only its hash is stored)."""
    return "tok_" + secrets.token_hex(8), "agt_" + secrets.token_urlsafe(32)


class TokenStore:
    """Tokens kept hashed in the engine's store, with a cache for the hot route.

    Writes happen in a worker thread, on the table's own connections (see
    `engine.store.base.TokenTable`): the engine's group commit holds the
    write lock until its loop turns, so a write made on the loop's own thread
    could wait for itself.

    Args:
        table: the engine's database file (its migrations made the table), or
            the store's token table (`engine.store.base.Store.tokens`).
        clock: monotonic seconds, for the cache.
    """

    def __init__(self, table: str | Path | TokenTable, *,
                 clock: Callable[[], float] | None = None) -> None:
        self.table: TokenTable = SQLiteTokens(table) if isinstance(table, (str, Path)) else table
        self._clock = clock or time.monotonic
        self._cache: dict[str, _Entry] = {}
        #: The last failed check of the store: until when it is not asked again, and
        #: why (`OUTAGE_SECONDS`, `_failed`).
        self._outage: tuple[float, StoreFailed] | None = None
        #: Per token id, the `Standing`s of the streams open with it (`standing`).
        self._watchers: dict[str, set[asyncio.Future[None]]] = {}
        #: Catches up with the store (`follow`); None: nothing to catch up with.
        self._catch_up: Callable[[], None] | None = None
        self._feed: TokenFeed | None = None
        #: True while the cache has caught up with the store in this turn of the loop.
        self._caught_up = True
        #: Bumped when the store could not say which tokens changed: every `Standing`
        #: confirms its token again (`changed_elsewhere`).
        self.epoch = 0

    def follow(self, catch_up: Callable[[], None], feed: TokenFeed) -> None:
        """Learn of tokens revoked through other servers on the store before trusting the
        cache: ``catch_up`` (the engine's `Engine.catch_up`) runs once a turn of the loop,
        before the turn's first check answered from the cache, and the store's
        catch-up tells ``feed`` which tokens changed (`changed_elsewhere`).

        Once a turn suffices: a request whose token is checked in a turn was read
        at that turn's poll or before, so every revocation answered before its
        client sent it committed before the catch-up.
        """
        if self._feed is not None:  # followed again (another app on the same service)
            self._feed.unlisten(self.changed_elsewhere)
        self._catch_up, self._feed, self._caught_up = catch_up, feed, False
        feed.listen(self.changed_elsewhere)

    def close(self) -> None:
        """Close the table's connections (and stop following the store's feed)."""
        if self._feed is not None:
            self._feed.unlisten(self.changed_elsewhere)
            self._feed = None
        self.table.close()

    def changed_elsewhere(self, ids: Collection[str] | None) -> None:
        """The store's catch-up read that these tokens were revoked (or deleted) by
        another connection; None: it cannot tell which (it reloaded everything).
        They are dropped and their streams and waits end, as after `revoke`; for
        None the whole cache is dropped and every `Standing` confirms its token
        again before it goes on (fail closed)."""
        if ids is None:
            self._cache = {}
            self.epoch += 1
        else:
            self._revoked(ids)

    def _fresh(self) -> None:
        """Catch up with the store unless the cache did in this turn of the loop.

        Raises:
            StoreFailed: the store cannot be read (now, or `OUTAGE_SECONDS` ago).
        """
        catch_up = self._catch_up
        if self._caught_up or catch_up is None:
            return
        asked = self._clock()
        self._unless_outage(asked)
        try:
            catch_up()
        except StoreFailed as exc:
            self._failed(asked, exc)
            raise
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return  # no loop, no turns: every check catches up
        self._caught_up = True
        # Runs at the next turn before the requests its poll reads (the loop runs
        # what was scheduled before it adds what the poll found).
        loop.call_soon(self._turned)

    def _turned(self) -> None:
        self._caught_up = False

    def standing(self, token: str, token_id: str) -> Standing:
        """Whether ``token`` (of id ``token_id``, found by `lookup`) still stands, for
        what outlives the moment the request showed it: an open event stream, a wait.

        A request is checked once, as it comes; a stream goes on for as long as
        its client stays, and a wait for up to its timeout, so each must end
        when its token is revoked, not carry on reading as its card or hand
        over what it waited for (SPEC §10.1: a revoked token is unknown).
        """
        revoked: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._watchers.setdefault(token_id, set()).add(revoked)
        return Standing(self, token, token_id, revoked, self._clock)

    def unwatch(self, token_id: str, revoked: asyncio.Future[None]) -> None:
        """Stop watching for ``token_id``'s revocation with ``revoked`` (`Standing.close`)."""
        watchers = self._watchers.get(token_id)
        if watchers is not None:
            watchers.discard(revoked)
            if not watchers:
                del self._watchers[token_id]

    # ------------------------------------------------------------- lookup
    def lookup(self, token: str) -> tuple[str, Principal] | None:
        """The token's id and principal, or None for a token unknown or revoked.

        Raises:
            StoreFailed: the store cannot tell (the service answers 503).
        """
        entry = self._entry(token)
        return None if entry is None else (entry.id, entry.principal)

    def peek(self, token: str) -> tuple[str, Principal] | None:
        """`lookup`, but None also when the store cannot tell (`StoreFailed`): for a
        fast route choosing whether to take a request. The route it hands the request
        to instead authenticates it again and answers the failure (503 STORE_FAILED)."""
        try:
            return self.lookup(token)
        except StoreFailed:
            return None

    def confirmed(self, token: str) -> float | None:
        """When the store last said that ``token`` stands (on this store's clock), or
        None: it does not stand (unknown, or revoked here or by another server).

        Answered from the cache while its entry is younger than
        `CACHE_SECONDS`, else from the store, as `lookup` is.
        """
        entry = self._entry(token)
        return None if entry is None else entry.checked

    def _entry(self, token: str) -> _Entry | None:
        """The token's cache entry, once the cache caught up with the store in this turn
        (`follow`); read again from the store once `CACHE_SECONDS` old."""
        digest = hash_token(token)
        self._fresh()
        entry = self._cache.get(digest)
        now = self._clock()
        if entry is not None and now - entry.checked < CACHE_SECONDS:
            # The dict found it by digest; compare again in constant time so
            # no code path compares secrets with ==.
            if hmac.compare_digest(entry.digest, digest):
                return entry
        row = self._find(digest, now)
        if row is None or not hmac.compare_digest(row[2], digest):
            self._cache.pop(digest, None)
            return None
        entry = self._cache[digest] = _Entry(row[0], Principal.parse(row[1]), digest, now)
        if len(self._cache) > 100_000:  # bounded: drop the oldest half
            for key in list(self._cache)[:50_000]:
                del self._cache[key]
        return entry

    def _find(self, digest: str, now: float) -> tuple[str, str, str] | None:
        """The store's row for ``digest``; a store that failed less than
        `OUTAGE_SECONDS` ago is not asked again: the check fails at once.

        Raises:
            StoreFailed: the store cannot tell, now or a moment ago.
        """
        self._unless_outage(now)
        try:
            row = self.table.find(digest)
        except StoreFailed as exc:
            self._failed(now, exc)
            raise
        self._outage = None
        return row

    def _failed(self, asked: float, exc: StoreFailed) -> None:
        """Remember a failed check asked at ``asked``: the store is not asked again for
        `OUTAGE_TIMES` as long as it took (`OUTAGE_MIN_SECONDS` to `OUTAGE_SECONDS`),
        from when it gave up, not from when it was asked: the asking itself may have
        taken the pool's whole wait."""
        gave_up = self._clock()
        window = min(OUTAGE_SECONDS,
                     max(OUTAGE_MIN_SECONDS, OUTAGE_TIMES * (gave_up - asked)))
        self._outage = (gave_up + window, exc)

    def _unless_outage(self, now: float) -> None:
        """Raise at once while a failed check is remembered (`_failed`).

        Raises:
            StoreFailed: it is.
        """
        outage = self._outage
        if outage is not None and now < outage[0]:
            # When it is asked again, also as a number: the answer's Retry-After.
            raise StoreFailed(f"the store could not check tokens a moment ago and is asked "
                              f"again in {outage[0] - now:.1f} s: {outage[1]}",
                              reason="connection",
                              details={"retry_after": round(outage[0] - now, 3)})

    def recall(self, header: bytes, memo: TokenMemo) -> tuple[str, Principal] | None:
        """What `lookup` answers for the token in ``header`` (an ``Authorization``
        header's raw value), when ``memo`` (its connection's) can tell without
        decoding the header or hashing the token; else None: use `lookup`, then
        `remember`.

        A keep-alive connection sends the same header with every request. The
        memo answers when ``header`` is the one it last saw (compared in
        constant time) and the entry found then is still this store's entry
        for that token and fresh — exactly when `lookup` would answer from its
        cache. The cache catches up with the store first (once a turn: `follow`);
        a revocation, here or read from the feed, replaces the cache, and an
        entry older than `CACHE_SECONDS` is looked up again, so no revocation is
        seen later than through `lookup`.
        """
        entry = memo.entry
        if entry is None or not hmac.compare_digest(header, memo.header):
            return None
        if not self._caught_up:
            try:
                self._fresh()
            except StoreFailed:
                return None  # `lookup` fails it (503)
        if self._cache.get(entry.digest) is entry and \
                self._clock() - entry.checked < CACHE_SECONDS:
            return entry.id, entry.principal
        return None

    def remember(self, header: bytes, token: str, memo: TokenMemo) -> None:
        """Keep in ``memo`` what `lookup` just found for ``token``, sent as ``header``."""
        memo.header, memo.entry = header, self._cache.get(hash_token(token))

    def principal_of(self, token_id: str) -> str | None:
        """The principal a token id was minted for (revoked or not), or None."""
        return self.table.principal_of(token_id)

    # ------------------------------------------------------------- writes
    async def mint(self, principal: str) -> tuple[str, str]:
        """A new token for ``principal``; returns ``(id, token)``. Durable on return."""
        token_id, token = _new_token()
        await asyncio.to_thread(self.table.insert, token_id, hash_token(token), principal,
                                time.time())
        return token_id, token

    async def mint_within(self, principal: str, most: int) -> tuple[str, str] | int:
        """`mint`, unless ``principal`` holds ``most`` live tokens already: ``(id, token)``,
        or how many it holds (nothing minted). Counted and written in one write of the
        store (`TokenTable.insert_within`): the bound holds across servers.

        Raises:
            StoreFailed: the store could not be read or written.
        """
        token_id, token = _new_token()
        held = await asyncio.to_thread(self.table.insert_within, token_id, hash_token(token),
                                       principal, time.time(), most)
        return (token_id, token) if held is None else held

    def mint_sync(self, principal: str) -> tuple[str, str]:
        """`mint` for start-up, before the event loop serves anyone."""
        token_id, token = _new_token()
        self.table.insert(token_id, hash_token(token), principal, time.time())
        return token_id, token

    def forget(self, principal: str) -> None:
        """``principal``'s node was removed, and with it its tokens (in the store,
        in the same write: `engine.store.base.Store.revoke_tokens`): drop them
        from the cache and end the streams and waits open with them, as `revoke`
        does for one token."""
        self._revoked(set(self.table.ids_of(principal)))  # one read, whatever is open

    def revoked_elsewhere(self, token_id: str) -> None:
        """The store no longer has ``token_id`` (another server revoked it, or removed
        its node): every stream and wait open with it ends, as after `revoke`."""
        self._revoked((token_id,))

    def _revoked(self, ids: Collection[str]) -> None:
        """These tokens were revoked in the store: dropped from the cache and, before
        the revocation is answered, no stream or wait open with one of them writes
        or hands over anything more (`Standing.revoked`)."""
        self._cache = {k: v for k, v in self._cache.items() if v.id not in ids}
        for token_id in ids:
            for revoked in list(self._watchers.pop(token_id, ())):
                if not revoked.done():
                    revoked.set_result(None)

    def revoke_sync(self, token_id: str) -> bool:
        """`revoke` for start-up, before the event loop serves anyone."""
        done = self.table.revoke(token_id, time.time())
        if done:
            self._revoked((token_id,))
        return done

    async def revoke(self, token_id: str) -> bool:
        """Revoke a token by id; False when no live token has that id."""
        done = await asyncio.to_thread(self.table.revoke, token_id, time.time())
        if done:
            self._revoked((token_id,))
        return done


class Standing:
    """Whether the token a stream or a wait was begun with still stands
    (`TokenStore.standing`); a context manager that stops watching at its end.

    ``revoked`` is done as soon as this server revokes the token, before the
    revocation is answered, as soon as the store's catch-up names it (revoked
    through another server: `TokenStore.changed_elsewhere`, at this server's next
    request or check), and as soon as `holds` or `stands` finds that the store no
    longer has it. `holds` asks the token cache now; `stands`, cheap enough to
    ask before every event, asks it only once the token's standing was last
    confirmed `CACHE_SECONDS` ago, or the store could not say which tokens
    changed since (`fresh_for` says when to ask next). `close` stops watching.
    """

    __slots__ = ("revoked", "_clock", "_confirmed", "_epoch", "_store", "_token", "_token_id")

    def __init__(self, store: TokenStore, token: str, token_id: str,
                 revoked: asyncio.Future[None], clock: Callable[[], float]) -> None:
        self._store, self._token, self._token_id = store, token, token_id
        self.revoked = revoked
        self._clock = clock
        #: When the store last said the token stands (never yet: the first
        #: `stands` asks the token cache), and the cache's `TokenStore.epoch` then.
        self._confirmed = -math.inf
        self._epoch = store.epoch

    @property
    def token_id(self) -> str:
        """The id of the token watched (never the token itself)."""
        return self._token_id

    def __repr__(self) -> str:  # never the token
        return f"<Standing revoked={self.revoked.done()}>"

    def holds(self) -> bool:
        """True while the token is neither revoked here nor unknown to the store (asked
        now, through the token cache); a token the store no longer has is revoked here
        too, ending every stream and wait open with it."""
        if self.revoked.done():
            return False
        confirmed = self._store.confirmed(self._token)
        if confirmed is None:
            self._store.revoked_elsewhere(self._token_id)
            return False
        self._confirmed, self._epoch = confirmed, self._store.epoch
        return True

    def stands(self) -> bool:
        """`holds`, asking the token cache only when the token's standing was last
        confirmed `CACHE_SECONDS` ago or more, or the store could not say which
        tokens changed since (else a clock read): before each event a stream sends."""
        if self.revoked.done():
            return False
        if self._clock() - self._confirmed < CACHE_SECONDS and \
                self._epoch == self._store.epoch:
            return True
        try:
            return self.holds()
        except StoreFailed:
            # The store cannot tell now (an outage): no event goes out on a token not
            # confirmed, and the stream ends without a traceback (asked from a commit's
            # event delivery too, which must not fail); its client's reconnection is
            # answered 503 until the store is back.
            return False

    def fresh_for(self) -> float:
        """Seconds until `stands` asks the token cache again (0: at its next call)."""
        if self._epoch != self._store.epoch:
            return 0.0
        return max(0.0, self._confirmed + CACHE_SECONDS - self._clock())

    def close(self) -> None:
        """Stop watching (the stream or the wait ended). ``revoked`` is left as it is:
        cancelling it would cost its callbacks a turn of the loop, on a tool call's
        way (issue 17), for nobody (its owner has stopped waiting on it)."""
        self._store.unwatch(self._token_id, self.revoked)

    def __enter__(self) -> Standing:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()


class TokenMemo:
    """One connection's last ``Authorization`` header and the token cache's entry it
    was found to be (`TokenStore.recall`)."""

    __slots__ = ("header", "entry")

    def __init__(self) -> None:
        self.header = b""
        self.entry: _Entry | None = None


def write_secret_file(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` with mode 0600 from the start (never readable by others)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + f".{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    try:
        os.write(fd, text.encode())
        os.fsync(fd)
    finally:
        os.close(fd)
    os.chmod(tmp, 0o600)
    os.replace(tmp, path)


# ------------------------------------------------------------------ peers
@dataclass(frozen=True, slots=True)
class Peer:
    """The process on the other end of a connection (pid None: cannot tell).

    ``pin``, for a Unix socket on a kernel that can tell: a new pidfd of the very
    process that connected (`pinned_pid` reads what pid it has now: -1 once it
    exited), so that the check judges that process, not another given its pid since.
    """

    pid: int | None
    uid: int | None = None
    pin: Callable[[], int] | None = field(default=None, compare=False, repr=False)


#: ``SO_PEERPIDFD`` (Linux 6.5+): a pidfd of the process that connected a Unix socket.
_SO_PEERPIDFD = getattr(socket, "SO_PEERPIDFD", 77)


def peer_of_socket(sock: socket.socket | None) -> Peer:
    """The peer of a Unix socket connection, from ``SO_PEERCRED``, pinned by
    ``SO_PEERPIDFD`` where the kernel has it (else, on older kernels, the pid alone)."""
    if sock is None or not hasattr(socket, "SO_PEERCRED"):
        return Peer(None)
    try:
        raw = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    except OSError:
        return Peer(None)
    pid, uid, _gid = struct.unpack("3i", raw)
    if pid <= 0:
        return Peer(None, uid)
    try:
        os.close(sock.getsockopt(socket.SOL_SOCKET, _SO_PEERPIDFD))
    except OSError as exc:
        if exc.errno in (errno.ENOPROTOOPT, errno.EOPNOTSUPP):
            return Peer(pid, uid)  # a kernel before 6.5: the pid is all it tells
        return Peer(None, uid)  # the process that connected is gone already

    def pin() -> int:
        return int(sock.getsockopt(socket.SOL_SOCKET, _SO_PEERPIDFD))

    return Peer(pid, uid, pin)


def pinned_pid(pidfd: int) -> int | None:
    """The pid a pidfd's process has now: -1 once it exited; None when it cannot be read."""
    try:
        with open(f"/proc/self/fdinfo/{pidfd}", encoding="ascii", errors="replace") as info:
            for line in info:
                name, _, value = line.partition(":")
                if name == "Pid":
                    return int(value)
    except (OSError, ValueError):
        return None
    return None


def _hex_addr(host: str, port: int) -> str | None:
    """An address as ``/proc/net/tcp{,6}`` prints it."""
    try:
        packed = socket.inet_pton(socket.AF_INET, host)
        return "%08X:%04X" % (struct.unpack("=I", packed)[0], port)
    except OSError:
        pass
    try:
        packed = socket.inet_pton(socket.AF_INET6, host)
    except OSError:
        return None
    words = struct.unpack("=4I", packed)
    return "".join("%08X" % w for w in words) + ":%04X" % port


def peer_of_tcp(client: tuple[str, int], server: tuple[str, int],
                proc: Path = Path("/proc")) -> Peer:
    """The local process holding the client end of a loopback TCP connection.

    Finds the socket's inode in ``/proc/net/tcp`` (and ``tcp6``), then the
    process with a descriptor on it. Only processes of our own user can be
    seen, which is enough: a process of another user is not the operator.
    """
    local, remote = _hex_addr(*client), _hex_addr(*server)
    if local is None or remote is None:
        return Peer(None)
    inode = None
    for name in ("tcp", "tcp6"):
        try:
            lines = (proc / "net" / name).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            parts = line.split()
            if len(parts) > 9 and parts[1] == local and parts[2] == remote:
                inode, uid = parts[9], int(parts[7])
                break
        if inode:
            break
    if not inode or inode == "0":
        return Peer(None)
    target = f"socket:[{inode}]"
    try:
        pids = [p for p in os.listdir(proc) if p.isdigit()]
    except OSError:
        return Peer(None)
    for pid in pids:
        fd_dir = proc / pid / "fd"
        try:
            for fd in os.listdir(fd_dir):
                try:
                    if os.readlink(fd_dir / fd) == target:
                        return Peer(int(pid), uid)
                except OSError:
                    continue
        except OSError:
            continue
    return Peer(None)


def agent_verdict(peer: Peer) -> str | None:
    """Why the peer may not give consent, or None when it may (SPEC §4.5).

    Uses `engine.effects.operator.peer_check` on the peer's environment and
    process tree (the peer itself included). Whether the peer has a terminal
    does not apply: the service is reached through a token, not a keyboard.
    """
    if peer.pid is None:
        return "cannot tell which process is calling, so cannot rule out an agent"
    if peer.uid is not None and peer.uid != os.getuid():
        return f"the calling process belongs to another user (uid {peer.uid})"
    pid = peer.pid
    if peer.pin is None:
        return _judged(pid)
    # The process that connected, held while it is judged: its pid names it only while
    # it runs (an agent's child that connected, handed the connection over and exited
    # leaves a pid that another process — a person's — may have by now).
    try:
        pidfd = peer.pin()
    except OSError:
        return _gone(pid)
    try:
        if pinned_pid(pidfd) != pid:
            return _gone(pid)
        why = _judged(pid)
        # Still running once judged: the process read under its pid was that one.
        return why if pinned_pid(pidfd) == pid else _gone(pid)
    finally:
        os.close(pidfd)


def _judged(pid: int) -> str | None:
    """`peer_check`'s refusal of process ``pid``, or None when it passes."""
    # A canvas app's window has no terminal: only its tree is judged (and the
    # process itself, which may be an agent making the request).
    check = peer_check(pid, require_terminal=False)
    return None if check.ok else f"the calling process (pid {pid}) is refused: {check.reason}"


def _gone(pid: int) -> str:
    return (f"the process that connected (pid {pid}) has exited: its connection is another "
            "process's now, which cannot be told, so cannot rule out an agent")
