"""The `Store` interface: every operation the services need from a store.

The services never write SQL: they call the store's named operations inside
a write (`Store.write`), and the store decides how each becomes rows. One
implementation exists per backend: `engine.store.sqlite.SQLiteStore` (one
SQLite file, WAL, group commit) today, PostgreSQL next (`engine.store.pg`).

The contract every implementation keeps:

- **Writes happen inside `write`.** Every table method that changes
  something is called by a service inside ``with store.write(): …``; the
  writes of one operation become durable together when the batch commits,
  or not at all. A write that fails rolls back the operation's part of the
  batch, calls the ``reload`` hook (see `bind`), and raises `StoreFailed`.
- **Reads see the operation's own writes** (``next_*_position``, `meta`,
  `tool_call`): numbers handed out inside a write are unique across every
  process on the store.
- **`load` is the whole state.** Everything a decision reads is in the
  `State` it returns; nothing else is cached outside it but the secrets
  (`secrets`) and the log's tail, and `load` refreshes both.
- **Hash chains are appended under the store's write lock**, so two writers
  never fork the arrow log or the consent history.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

if TYPE_CHECKING:
    from canvas.model import Arrow, Node, Workspace
    from engine.core.budget import Bucket
    from engine.core.elsewhere import Moves
    from engine.core.events import Event
    from engine.core.limits import SteadyClock, Suppressed
    from engine.core.prompts import Prompt
    from engine.core.state import PackageState, State
    from engine.core.tools import ToolCall
    from engine.store.history import HistoryVerification, Replaced
    from engine.store.log import Verification
    from engine.store.tokenfeed import TokenFeed

__all__ = ["History", "Log", "Refresh", "Secrets", "Store", "TerminalClaim", "TokenRow",
           "TokenTable", "Transactional"]

#: A change to apply to the engine's state in place, with its time (a catch-up);
#: it notes in the `Moves` given how what it applied moved, as it applies it (so
#: that what was applied before a failure is known too).
Refresh = Callable[["State", "SteadyClock", "Moves"], None]


class TokenRow(NamedTuple):
    """A service token as `TokenTable.listing` tells it: never its secret."""

    id: str  #: the token's id (``tok_…``), what revoking it names
    principal: str  #: ``operator``, ``card:<id>`` or ``agent:<id>``
    made: float  #: when it was minted (epoch seconds)
    revoked: float | None  #: when it was revoked, or None while it stands

    @staticmethod
    def query(*, live_only: bool) -> str:
        """The SELECT both stores list tokens with, oldest first (`read` each row)."""
        where = " where revoked is null" if live_only else ""
        return f"select id, principal, t, revoked from service_tokens{where} order by t, id"

    @classmethod
    def read(cls, row: Sequence[Any]) -> TokenRow:
        """A row of `query`."""
        return cls(str(row[0]), str(row[1]), float(row[2]),
                   None if row[3] is None else float(row[3]))


class TerminalClaim(NamedTuple):
    """Which engine drives a terminal with a real driver (`Store.claim_terminal`)."""

    #: The engine as a person reads it: its machine, process and a random part.
    engine: str
    #: Its process as `engine.effects.processes.identity` names it, to tell whether it
    #: is gone (None: it could not be named, and only its lease can tell).
    process: str | None
    #: Whether its lease ran out by the store's clock, as read (`Store.terminal_driver`).
    expired: bool = False

    @classmethod
    def read(cls, row: Sequence[Any]) -> TerminalClaim:
        """The claim in a row ``(engine, process, lease ran out)`` of either store (a
        process that is no text, as a hand-edited row may hold, is an unnamed one)."""
        return cls(str(row[0]), row[1] if isinstance(row[1], str) else None, bool(row[2]))


class Transactional(Protocol):
    """What `engine.store.transactions.consistent` needs to run an operation durably."""

    @property
    def depth(self) -> int:
        """Nesting of `Store.write` in the running operation (0: none open)."""
        ...

    def durably(self, fn: Callable[..., Awaitable[Any]], args: tuple[Any, ...],
                kwargs: dict[str, Any], *, locked: bool) -> Awaitable[Any]:
        """Run an operation, then wait until everything it wrote is committed.

        With ``locked``, hold the write lock for the whole operation (the
        retry after a decision raced another process). An implementation
        that found, on taking the lock, that another process committed since
        the operation decided may raise the exception (`Stale`) that makes
        it run again with ``locked=True`` (`run_durably` does that).
        """
        ...

    def flush(self) -> None:
        """Commit the open batch now, unless it is pinned or being written."""
        ...


class Log(Protocol):
    """The arrow log (SPEC §8) as the services append to it and the app reads it."""

    def append_fields(self, values: list[Any],
                      extra: tuple[Any, ...] | None = None) -> tuple[str, str]:
        """Append a row given as its `engine.store.log.FIELDS` in order, inside a write.

        ``seq`` (``values[0]``) is assigned here and the list updated in
        place to the row as hashed; ``extra`` are its ``EXTRA_FIELDS``.
        Returns the new row's (prev, hash).
        """
        ...

    def rows(self, *, arrow: str | None = None, card: str | None = None,
             package: str | None = None, outcome: str | None = None,
             call: str | None = None, since: float | None = None,
             until: float | None = None, limit: int | None = None,
             after: int | None = None) -> list[dict[str, Any]]:
        """Rows in sequence order, filtered by any of the given fields; ``after``: only
        rows numbered above it, ``limit``: at most that many (a page)."""
        ...

    def last(self) -> tuple[int, str] | None:
        """(seq, hash) of the newest row; None while the log is empty."""
        ...


class History(Protocol):
    """The consent history (SPEC §8): who changed consent, or tried to."""

    def record(self, t: float, principal: str, action: str, subject: dict[str, Any], *,
               accepted: bool, code: str | None = None, reason: str | None = None,
               detail: str = "") -> None:
        """Append one entry, inside a write and after its grant changes."""
        ...

    def entries(self, *, package: str | None = None, after: int = 0,
                limit: int | None = None) -> list[dict[str, Any]]:
        """Entries oldest first, optionally those about one package, only those
        numbered above ``after`` (a reader that kept the older ones reads only the new),
        and at most ``limit`` of them (a page: the rest is not read)."""
        ...

    def latest(self, limit: int, *, package: str | None = None) -> list[dict[str, Any]]:
        """The newest ``limit`` entries, newest first, optionally those about one
        package: read from the history's end (along an index of packages), the older
        ones not read at all, however long the history (a screen showing its end)."""
        ...

    def count(self, *, package: str | None = None) -> int:
        """How many entries the history holds, or how many are about one package."""
        ...

    def verify(self) -> HistoryVerification:
        """Check the chain and the grants against its newest entry."""
        ...

    def newest(self) -> int:
        """The newest entry's number (0: none yet)."""
        ...

    def replaced_nodes(self, after: int) -> Replaced:
        """The nodes removed, or given another package, by an entry recorded (accepted)
        after entry ``after``: so a reader can tell a node removed and added again
        with its id, or a card made another package's, from the one it knew,
        whichever process did it. Every node, after an entry it cannot read."""
        ...

    def remade(self, node: str, after: int) -> float | None:
        """When the node now under id ``node`` was made, by an entry recorded
        (accepted) after entry ``after``: the time of the newest ``node.add`` of
        that id, or ``node.set`` giving it another package — or just after a
        ``node.remove`` of it newer than those (a node under the id now was made by
        hand since); None when no such entry follows ``after``. An entry it cannot
        read counts as one (its time): what came before it is then not the node's
        (fail closed)."""
        ...


class Secrets(Protocol):
    """Secrets an operator stored, each for one host (SPEC §8.2)."""

    def lookup(self, name: str) -> tuple[str, str] | None:
        """(host, value) of a secret, for the guarded fetch only."""
        ...

    def is_set(self, name: str) -> bool:
        """All a card may learn about a secret."""
        ...

    def put(self, name: str, host: str, value: str, t: float) -> None:
        """Store (or replace) a secret for ``host``, inside a write."""
        ...

    def delete(self, name: str) -> None:
        """Remove a secret, inside a write."""
        ...


class TokenTable(Protocol):
    """The HTTP service's bearer tokens, kept as SHA-256 digests (SPEC §10.1).

    Used by `engine.service.auth.TokenStore` from a worker thread while the
    engine's own batch may hold the write lock, so an implementation works on
    connections of its own and commits each change before returning.
    """

    def find(self, digest: str) -> tuple[str, str, str] | None:
        """(id, principal, digest) of the live token with this digest, or None."""
        ...

    def principal_of(self, token_id: str) -> str | None:
        """The principal a token id was minted for (revoked or not), or None."""
        ...

    def ids_of(self, principal: str) -> list[str]:
        """The ids of the tokens minted for ``principal`` (revoked or not)."""
        ...

    def insert(self, token_id: str, digest: str, principal: str, t: float) -> None:
        """Add a token, durably."""
        ...

    def insert_within(self, token_id: str, digest: str, principal: str, t: float,
                      most: int) -> int | None:
        """Add a token, durably, unless ``principal`` holds ``most`` live tokens already:
        None when added, else the live tokens it holds (nothing added).

        The count and the insert are one write, serialized with every other
        `insert_within` for ``principal`` on the store (any process), so the bound
        holds however many servers mint at once.
        """
        ...

    def revoke(self, token_id: str, t: float) -> bool:
        """Revoke a live token durably; False when no live token has that id."""
        ...

    def listing(self, *, live_only: bool = True) -> list[TokenRow]:
        """Every token (only the live ones with ``live_only``), oldest first: never a
        secret, which the table does not hold."""
        ...

    def close(self) -> None:
        """Close the table's connections."""
        ...


class Store(Transactional, Protocol):
    """Everything the engine's services read from and write to their store.

    Built by the `Engine` façade (or given to it), bound to the engine's
    hooks once (`bind`), loaded (`load`) at open and whenever another
    process committed or a write failed.
    """

    # ------------------------------------------------------------ lifecycle
    @property
    def file(self) -> str | None:
        """The database file (the anchor and the drivers' home are beside it), or None."""
        ...

    @property
    def rows_at_commit(self) -> bool:
        """True when an operation's rate events, prompt rows and node data (`update_node`)
        wait in memory until its batch commits, as its log rows do (SQLite): an
        accepted prompt then runs no statement and needs no savepoint (`write`)."""
        ...

    @property
    def log_rows_at_commit(self) -> bool:
        """True when a write's log rows wait in memory until its batch commits
        (SQLite), so that a write whose one statement is not a log row may be
        a one-statement write (`write`); False when each is inserted at once
        (PostgreSQL): such a write is then two statements."""
        ...

    def bind(self, *, reload: Callable[[bool], None],
             committed: Callable[[list[Event]], None],
             refresh: Callable[[Refresh], None] | None = None) -> None:
        """The engine's hooks: rebuild the state from the store; a batch committed.

        ``reload`` is called after a failed write was rolled back (with False)
        and when another process's commit was noticed and cannot be applied one
        by one (with True: what moved is told, `engine.core.elsewhere`);
        ``refresh`` is given what to apply to the state in place when it can
        (the catch-up: only what the other process changed; what it applied
        returns how it moved), and without it every commit noticed reloads;
        ``committed`` gets each committed batch's events, in order.
        """
        ...

    def load(self, clock: SteadyClock) -> State:
        """The state as the store holds it now (refreshing the secrets and the log's tail).

        Raises the clock's floor to the newest time the store recorded first
        (SPEC §6), then loads what that floor still reaches.
        """
        ...

    def close(self) -> None:
        """Close the store's connections (call `pin_and_flush` first)."""
        ...

    # --------------------------------------------------------- transactions
    def write(self, *, one_statement: bool = False) -> AbstractContextManager[None]:
        """The writes of one operation, joining the open batch (group commit).

        ``one_statement``: the operation writes a single statement and changes
        no memory before it succeeds, so no savepoint is needed.
        """
        ...

    def open_settled(self, *, wait: bool = True) -> bool:
        """Open the batch the next `write` joins, unless one is open, for a write that
        records what already happened (an effect carried out); whether that batch is
        to be committed as the write ends (then `flush`).

        Another process's commit since the state was loaded is caught up with,
        and never makes the operation `engine.store.transactions.Stale`: that
        would make its decision again, and the effect behind it with it. The
        batch is not pinned; it commits as any other.

        The write lock another session or program holds is waited for on the
        loop, at most what is left of the store's bound; without ``wait``, one
        short try, then `engine.store.transactions.Busy` (the caller waits off
        the loop and tries again: `engine.services.context.Context.settle_off_loop`).

        Such a write takes the lock whatever waits for it, operations of this engine
        included (`engine.store.transactions.LockLine`): a batch it opens past them
        is committed as it ends (True), so no operation made after them joins it and
        goes before them (a call after a revoke that waits, under the grant revoked).
        """
        ...

    def emit(self, event: Event) -> None:
        """Add an event to the open batch: delivered once the batch has committed."""
        ...

    def flush(self) -> None:
        """Commit the open batch now (group commit), then deliver its events."""
        ...

    def pin_and_flush(self) -> None:
        """Commit what is pending, even a batch a locked retry holds (at close)."""
        ...

    def hold_commits(self, hold: Callable[[], float | None] | None) -> None:
        """Let group commits wait a little for requests a server expects.

        ``hold()`` answers None (commit now), 0 (ask again at the next turn of
        the loop) or the seconds to wait; a commit waits at most about a
        millisecond (`engine.store.transactions.schedule_flush`). None: commit
        at the next turn, as without a server.
        """
        ...

    def sync(self) -> None:
        """Catch up with what other processes committed (calls the ``reload`` hook)."""
        ...

    def changes(self, interval: float = 0.1, *,
                check: Callable[[], None] | None = None) -> AsyncIterator[int]:
        """Yield the store's revision whenever another process commits a change;
        ``check`` is called before each look, and what it raises ends the iteration."""
        ...

    @property
    def commits(self) -> int:
        """Write transactions committed: with group commit, fewer than operations."""
        ...

    @property
    def reloads(self) -> int:
        """How often another process's commit made us reload the whole state."""
        ...

    @property
    def catchups(self) -> int:
        """How often another process's changes were applied one by one instead of a reload."""
        ...

    @property
    def revision(self) -> int:
        """Bumped by every committed batch and every reload (live views watch it)."""
        ...

    @property
    def history_edits(self) -> int:
        """Bumped by every catch-up that took in a row of the consent history updated or
        deleted outside the engine (`engine.store.loading.Touched.records`): what was
        read of the history may have changed under its numbers."""
        ...

    # ------------------------------------------------- chains and secrets
    @property
    def log(self) -> Log:
        """The arrow log."""
        ...

    @property
    def history(self) -> History:
        """The consent history."""
        ...

    @property
    def secrets(self) -> Secrets:
        """The operator's secrets."""
        ...

    def verify_log(self) -> Verification:
        """Check the arrow log's chain, its anchor, and the consent history."""
        ...

    # ------------------------------------------------------ rate windows
    def count_rate_event(self, card: str, key: str, t: float) -> None:
        """Record an accepted call in ``card``'s window ``key`` at ``t``."""
        ...

    def forget_rate_events(self, card: str) -> None:
        """Drop every rate event of a removed card."""
        ...

    def move_rate_events(self, card: str, heir: str) -> None:
        """Count a removed spawn root's rate events as its heir's (the new root)."""
        ...

    # ------------------------------------------- pending suppressed summaries
    @property
    def batch(self) -> object | None:
        """The open write batch, if any. It holds the store's write lock until it
        ends, so what was read in it stays true for as long as it is open."""
        ...

    def pending_summary(self, key: str | None) -> Suppressed | None:
        """The pending summary of suppressed refusals of budget ``key`` (`engine.store.pending`),
        as the operations so far left it; None when there is none."""
        ...

    def save_pending_summary(self, key: str | None, held: Suppressed) -> None:
        """Insert or replace the pending summary of budget ``key`` (inside a write)."""
        ...

    def drop_pending_summary(self, key: str | None) -> None:
        """Delete the pending summary of budget ``key`` (inside a write: its row is written)."""
        ...

    # ------------------------------------------------------- prompt budgets
    def budget_bucket(self, workspace: str) -> Bucket:
        """The prompt budget's bucket of ``workspace`` (`engine.core.budget`), inside a
        write: read under the write lock once a batch, then the same object for the
        rest of the batch (the lock keeps it true); an empty bucket when none is stored."""
        ...

    def save_budget_bucket(self, workspace: str, bucket: Bucket) -> None:
        """Keep ``bucket`` as ``workspace``'s (inside a write): written once a batch, as
        it stands when the batch commits, however often it is saved."""
        ...

    # ---------------------------------------------------- terminal drivers
    def terminal_driver(self, node: str) -> TerminalClaim | None:
        """The claim of the engine that drives terminal ``node`` with a real driver, or
        None: read inside the write that would type into it, under the write lock."""
        ...

    def claim_terminal(self, node: str, claim: TerminalClaim, t: float, lease: float) -> None:
        """Record that ``claim``'s engine drives terminal ``node`` from ``t`` (inside a
        write), in place of any engine that did, its lease running ``lease`` seconds
        from now by the store's clock."""
        ...

    def renew_terminals(self, engine: str, lease: float) -> set[str]:
        """Renew every claim of ``engine`` for ``lease`` seconds from now by the store's
        clock (inside a write); returns the terminals it still claims."""
        ...

    def drop_own_claim(self, node: str, engine: str) -> None:
        """Delete terminal ``node``'s claim if it is ``engine``'s (inside a write: its
        driver did not start)."""
        ...

    def drop_terminal_claim(self, node: str) -> None:
        """Delete terminal ``node``'s claim (inside a write: its process is gone)."""
        ...

    def release_terminals(self, engine: str) -> None:
        """Delete every claim of ``engine`` (inside a write: it closes)."""
        ...

    # ------------------------------------------------------------ prompts
    def next_prompt_position(self) -> int:
        """The position the next prompt takes (unique across processes, inside a write)."""
        ...

    def save_prompt(self, prompt: Prompt) -> None:
        """Insert or replace a prompt as it now stands."""
        ...

    def prompt(self, prompt_id: str) -> Prompt | None:
        """A prompt by id as its row stands (this engine's own writes included), or None:
        what memory no longer keeps (`engine.core.prompt_memory`)."""
        ...

    def prompts(self, *, state: str | None = None, arrow: str | None = None,
                newest: int | None = None) -> list[Prompt]:
        """Stored prompts in ``state`` on ``arrow`` (None: any), in order of arrival
        (this engine's own writes included); only the ``newest`` of them when given."""
        ...

    # --------------------------------------------------------- tool calls
    def next_tool_call_position(self) -> int:
        """The position the next tool call takes (unique across processes, inside a write)."""
        ...

    def save_tool_call(self, tc: ToolCall) -> None:
        """Insert or replace a tool call as it now stands."""
        ...

    def tool_call(self, call_id: str) -> ToolCall | None:
        """A tool call by id, open or resolved, or None."""
        ...

    # -------------------------------------------------- packages, grants
    def save_package(self, pkg: PackageState) -> None:
        """Insert or replace a package: its state, manifests and digests."""
        ...

    def delete_package(self, name: str) -> None:
        """Remove an offered package (never one with grants: the service checks)."""
        ...

    def set_grants(self, package: str, permissions: Iterable[str], *, t: float,
                   by: str) -> None:
        """Make the package's granted permissions exactly ``permissions``, granted by ``by``."""
        ...

    # -------------------------------------------------------------- usage
    def save_usage(self, workspace: str, tokens: int, cost: float) -> None:
        """Set a workspace's token usage and cost totals."""
        ...

    # ------------------------------------------------------------- canvas
    def save_workspace(self, ws: Workspace) -> None:
        """Insert or replace a workspace."""
        ...

    def save_node(self, node: Node) -> None:
        """Insert a node (after every other) or replace its data in place."""
        ...

    def update_node(self, node: Node) -> None:
        """Replace the data of a node the store holds (its id, type and workspace as
        stored); what `save_node` does for such a node, and it may wait for the commit."""
        ...

    def delete_node(self, node_id: str) -> None:
        """Delete a node, its arrows and its terminal claim."""
        ...

    def revoke_tokens(self, principal: str, t: float) -> None:
        """Revoke, in the open write, every live service token of ``principal``
        (``card:<id>`` or ``agent:<id>``) at ``t``: its node is removed, and a
        token must never act as a later node given the same id."""
        ...

    def save_arrow(self, arrow: Arrow) -> None:
        """Insert an arrow."""
        ...

    def delete_arrow(self, arrow_id: str) -> None:
        """Delete an arrow."""
        ...

    # --------------------------------------------------------------- meta
    def set_meta(self, key: str, value: str) -> None:
        """Insert or replace a value of the store's key-value table."""
        ...

    def meta(self, key: str) -> str | None:
        """A value of the store's key-value table, or None."""
        ...

    # ------------------------------------------------------------- tokens
    def tokens(self) -> TokenTable:
        """The service's token table, on connections of its own (see `TokenTable`)."""
        ...

    @property
    def token_feed(self) -> TokenFeed:
        """Where the store's catch-up (`sync`, a batch's opening) tells the service's
        token caches which tokens other connections revoked (`TokenFeed`)."""
        ...
