"""The engine's in-memory state: what every decision reads.

The store is the truth; this is loaded from it at open and changed only
after the write that records a change has committed (or rebuilt from the
store when a write fails).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from canvas.graph import Canvas
from canvas.model import Node, Workspace
from engine.core.catalogue import CALLS, PERMISSIONS, implied_by
from engine.core.limits import RateCounters
from engine.core.manifest import Manifest
from engine.core.prompt_memory import PromptMemory
from engine.core.prompts import PromptIndex
from engine.core.text import SHOWN
from engine.core.tools import ToolCall

__all__ = ["CACHE_LIMIT", "PackageState", "State"]

#: Remembered decisions kept at most, before the cache starts afresh.
CACHE_LIMIT = 100_000


#: Each permission name as the catalogue's own string object (the one a call's
#: `CallSpec.permission` is): a set of declared names holding these answers
#: ``permission in declared`` at the first comparison, by identity, where an
#: equal string read from a manifest is compared byte by byte.
_NAMES: dict[str, str] = {**{name: name for name in PERMISSIONS},
                          **{spec.permission: spec.permission for spec in CALLS.values()}}


@dataclass(slots=True)
class PackageState:
    """A package: offered (available) or installed, maybe with a pending version."""

    name: str
    installed: bool
    raw: dict[str, Any]  #: the approved (or offered) manifest as given
    digests: dict[str, str]
    hash: str
    manifest: Manifest | None = None  #: the approved manifest, once installed
    pending_raw: dict[str, Any] | None = None
    pending_digests: dict[str, str] | None = None
    pending_hash: str | None = None
    pending: Manifest | None = None
    #: The permission names `declared_by` declares (its ``permissions``' keys),
    #: set with it by `set_manifest`. The decision's checks 4–5 read these
    #: while ``declared_by is manifest``, and the manifest itself otherwise
    #: (a manifest set any other way): every attribute read of a pydantic
    #: model goes through its slow ``__getattr__`` hook, which cost a
    #: twentieth of a decision made right after a consent change.
    declared: frozenset[str] = field(default=frozenset(), init=False, repr=False,
                                     compare=False)
    declared_by: Manifest | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.manifest is not None:
            self.set_manifest(self.manifest)

    def set_manifest(self, manifest: Manifest) -> None:
        """Make ``manifest`` the approved one, with the names it declares."""
        self.manifest = manifest
        names = _NAMES
        self.declared = frozenset([names.get(name, name) for name in manifest.permissions])
        self.declared_by = manifest

    @property
    def is_pending(self) -> bool:
        """True while a changed version waits for approval."""
        return self.pending_hash is not None


@dataclass(slots=True)
class State:
    """Everything a decision reads, in memory."""

    workspaces: dict[str, Workspace] = field(default_factory=dict)
    canvas: Canvas = field(default_factory=Canvas)
    packages: dict[str, PackageState] = field(default_factory=dict)
    grants: dict[str, set[str]] = field(default_factory=dict)
    counters: RateCounters = field(default_factory=RateCounters)
    #: The prompts in play and the newest finished ones, by id; older finished
    #: ones are only in the store (`engine.core.prompt_memory`).
    prompts: PromptMemory = field(default_factory=PromptMemory)
    #: The prompts still in play, by agent (kept by the engine's `_save_prompt`).
    open_prompts: PromptIndex = field(default_factory=PromptIndex)
    usage: dict[str, tuple[int, float]] = field(default_factory=dict)
    #: Open tool calls by id (SPEC §9); resolved ones are only in the store.
    tool_calls: dict[str, ToolCall] = field(default_factory=dict)
    #: The refusal budget keys with a pending summary in the store (SPEC §8 "Bounds";
    #: `engine.store.pending`), as far as this engine knows: read at a load, a key
    #: another engine's summary was created under added by the catch-up, and this
    #: engine's own added and dropped by its `Recorder`. Not a decision's input: a key
    #: here makes the card's next row be preceded by its ``suppressed`` row (a key
    #: whose summary another engine has written meanwhile costs one read).
    suppressed: set[str | None] = field(default_factory=set)
    #: Bumped by every change of grants, packages or workspace settings
    #: (`bump`); with the canvas's own revision it keys the decision cache.
    consent_rev: int = 0
    #: The decision cache and the fields below it belong to the decision path
    #: (`engine.core.checks.decide` reads them and starts the cache in line on
    #: every call after a change, where a method call cost a tenth of the
    #: step); anything else reaches the cache through `decision_cache`.
    cache: dict[tuple[str, str, str | None], Any] = field(default_factory=dict)
    #: The `consent_rev` and canvas revision the cache was started at: two
    #: ints compared apart, as `decide` does on every call (a tuple built
    #: and compared there cost more than the rest of a remembered answer).
    cache_consent: int = -1
    cache_canvas: int = -1
    #: The smallest ``max_payload`` of any workspace, set with the cache: a
    #: string no longer fits every workspace's bound (the fast path's test).
    payload_floor: int = 0
    #: The longest target id the fast path keeps in the cache: the smaller of
    #: `payload_floor` and `engine.core.text.SHOWN` (set with the cache).
    target_bound: int = 0
    #: The smallest ``hop_limit`` of any workspace, set with `payload_floor`:
    #: while it is at least 1, a prompt outside any tool call (one hop) passes
    #: the loop guard in every workspace without its own being looked up.
    hop_floor: int = 0
    #: The workspaces `payload_floor`, `target_bound` and `hop_floor` were
    #: worked out from (a copy: `State.workspaces` is changed in place); none
    #: at first, as the three fields' defaults say.
    floor_of: dict[str, Workspace] = field(default_factory=dict)

    def bump(self) -> None:
        """Grants, a package or settings changed: forget remembered decisions."""
        self.consent_rev += 1

    def consent_key(self) -> tuple[int, int]:
        """Moves on with every change a decision's checks 1–9 read."""
        return (self.consent_rev, self.canvas.revision)

    def decision_cache(self) -> dict[tuple[str, str, str | None], Any]:
        """Remembered checks 1–9, valid for the current `consent_key` only."""
        if (self.cache_consent != self.consent_rev
                or self.cache_canvas != self.canvas.revision
                or len(self.cache) >= CACHE_LIMIT):
            return self.restart_cache()
        return self.cache

    def restart_cache(self) -> dict[tuple[str, str, str | None], Any]:
        """Forget every remembered decision and start an empty cache for the current key.

        Also sets the smallest ``max_payload`` and ``hop_limit`` of any
        workspace when the workspaces changed (settings may have changed with
        the key). Called by `decision_cache`, and by `decide` when it finds
        the key moved on and the workspaces changed (it starts the cache
        itself otherwise).
        """
        # Start afresh rather than evict: the bound only keeps memory in check.
        cache: dict[tuple[str, str, str | None], Any] = {}
        self.cache = cache
        self.cache_consent = self.consent_rev
        self.cache_canvas = self.canvas.revision
        # The floor moves only with the workspaces, which most consent
        # changes (a grant, a revoke, an install) leave as they were: it is
        # worked out again only when they differ from the copy it was worked
        # out from. Workspaces are immutable, so the comparison is by
        # identity, item by item, unless one was replaced (then by value).
        if self.workspaces != self.floor_of:
            # A loop, not min() over a generator.
            floor = hops = -1
            for workspace in self.workspaces.values():
                settings = workspace.settings
                size = settings.max_payload
                if floor < 0 or size < floor:
                    floor = size
                if hops < 0 or settings.hop_limit < hops:
                    hops = settings.hop_limit
            self.payload_floor = floor = floor if floor > 0 else 0
            self.target_bound = floor if floor < SHOWN else SHOWN
            self.hop_floor = hops if hops > 0 else 0
            self.floor_of = dict(self.workspaces)
        return cache

    def declares(self, package: PackageState, permission: str) -> bool:
        """The approved manifest declares ``permission`` or one that implies it."""
        assert package.manifest is not None
        return not implied_by(permission).isdisjoint(package.manifest.permissions)

    def granted(self, package: str, permission: str) -> bool:
        """``permission`` is granted to ``package``, directly or by implication."""
        return not implied_by(permission).isdisjoint(self.grants.get(package, ()))

    def card_ports(self, node: Node) -> tuple[frozenset[str], frozenset[str]] | None:
        """Ports a card's installed manifest declares (for the canvas)."""
        pkg = self.packages.get(node.data.get("package") or "")
        if pkg is None:
            return None
        manifest = pkg.manifest or pkg.pending
        if manifest is None:
            return None
        return frozenset(manifest.ports.inputs), frozenset(manifest.ports.outputs)

    def undelivered(self, agent: str) -> int:
        """An agent's prompts not yet delivered: queued, and held (SPEC §6's queue of 20:
        a held prompt passed check 11, the queue, before check 12 held it, and waits
        for a person as a queued one waits for the agent)."""
        return self.open_prompts.undelivered(agent)

    def open_tool_calls(self, card: str) -> list[ToolCall]:
        """The open tool calls a prompt of ``card`` is checked against (SPEC §9), oldest
        first, each with its causal ``chain``: those of every card of its package on its
        canvas, its own and its copies' among them.

        What the loop guard reads for every prompt a card makes, naming a context or not.
        The package's cards run one code and can tell each other to prompt out of band
        (a copy the card spawned, a second card the person placed): a guard of the card's
        own calls alone would be sidestepped by the card asking another to prompt for
        it (README: decisions).
        """
        node = self.canvas.node(card)
        package = node.data.get("package") if node is not None else None
        if type(package) is not str:
            return sorted((tc for tc in self.tool_calls.values()
                           if tc.card == card and tc.is_open), key=lambda tc: tc.position)
        workspace = node.workspace if node is not None else None
        return sorted((tc for tc in self.tool_calls.values()
                       if tc.is_open and tc.package == package and tc.workspace == workspace),
                      key=lambda tc: tc.position)

    def open_tool_calls_of_agent(self, agent: str) -> int:
        """How many tool calls ``agent`` has open (SPEC §9), of every card."""
        return sum(1 for tc in self.tool_calls.values() if tc.agent == agent and tc.is_open)

    def workspace_of(self, node: Node) -> Workspace:
        """The node's workspace."""
        return self.workspaces[node.workspace]
