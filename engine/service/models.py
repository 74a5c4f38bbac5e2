"""Request and response bodies of the service (SPEC §10.1), as pydantic models.

Requests are strict: unknown fields are refused (``extra="forbid"``) and
types are not coerced, so a client's mistake is a 400 that names the field
rather than a guess. Responses describe what the routes send; the hot routes
write their JSON by hand and these models only document them (OpenAPI).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator
from pydantic.json_schema import SkipJsonSchema

__all__ = ["ApproveBody", "ArrowBody", "ArrowOut", "BatchBody", "BatchResult", "CallBody",
           "DecisionOut", "DeclineBody", "DiffOut", "EmitBody", "EmitResult", "GrantBody",
           "GrantsOut", "HealthOut", "HistoryEntry", "HistoryOut", "HoldApproveBody", "HoldOut",
           "InstallBody", "InstallOut", "Layout", "LogOut", "LogRowOut", "NoBody", "NodeBody",
           "NodeOut", "NodePatch", "OfferBody", "PackageOut", "Ports", "Problem", "PromptOut", "ReachOut",
           "ReachStep", "ReachTarget", "ReviewFacts", "ReviewOut", "RevokeBody", "RevokeOut",
           "TokenBody", "TokenOut",
           "VerifyOut", "WorkspaceBody", "WorkspaceOut"]

_STRICT = ConfigDict(extra="forbid", strict=True)
#: Identifiers of nodes, arrows, workspaces: short printable strings.
Id = Field(min_length=1, max_length=256)


class _In(BaseModel):
    model_config = _STRICT


class NoBody(_In):
    """The body of a route that takes none: absent, or ``{}`` (what some clients send for
    none). A field in it is refused like any unknown field (400), so that nothing a
    client meant to say, such as a ``confirmed`` or a reason, is dropped unread while
    the request is carried out."""


class TokenBody(_In):
    """Mint a token for a card or an agent (operator only)."""

    principal: str = Field(pattern=r"^(card|agent):[^\s]{1,256}$",
                           description='"card:<id>" or "agent:<id>"')


class TokenOut(BaseModel):
    """A minted token: the secret is shown once, only its SHA-256 is stored."""

    id: str
    token: str
    principal: str


class WorkspaceBody(_In):
    """A workspace: id, absolute project folder, settings (SPEC §1)."""

    id: str = Id
    folder: str = Field(min_length=1, max_length=4096)
    settings: dict[str, Any] | None = None


class WorkspaceOut(BaseModel):
    """A workspace as the engine holds it."""

    id: str
    folder: str
    settings: dict[str, Any]


class Layout(_In):
    """Where a node sits on a drawn canvas (JSON Canvas 1.0): its box, and its colour
    (a preset ``"1"``–``"6"`` or ``"#rrggbb"``)."""

    x: float
    y: float
    width: float
    height: float
    color: Annotated[str, Field(max_length=32)] | SkipJsonSchema[None] = None

    @field_validator("color", mode="before")
    @classmethod
    def _color_is_text(cls, value: object) -> object:
        if value is None:  # the document offers no null: a colour left out is none
            raise ValueError("a colour is text (leave it out for none)")
        return value


class NodePatch(_In):
    """Fields of a node that may change (SPEC §1); the engine checks them per type.

    Each is optional and none is nullable: a field left out is unchanged (in
    a new node, its default). The document offers no ``null`` (the service
    would refuse it in a change: a field's wrong type), so no client generated
    from it sends one.
    """

    package: str | SkipJsonSchema[None] = None
    visible: bool | SkipJsonSchema[None] = None
    background: bool | SkipJsonSchema[None] = None
    text: str | SkipJsonSchema[None] = None
    items: list[Any] | SkipJsonSchema[None] = None
    tasks: list[Any] | SkipJsonSchema[None] = None
    name: str | SkipJsonSchema[None] = None
    tool: str | SkipJsonSchema[None] = None
    status: str | SkipJsonSchema[None] = None
    dangerous: bool | SkipJsonSchema[None] = None
    shell: str | SkipJsonSchema[None] = None
    command: list[str] | SkipJsonSchema[None] = None
    layout: Layout | SkipJsonSchema[None] = None


class NodeBody(NodePatch):
    """A node of SPEC §1: ``{"id", "type", ...the type's fields}``."""

    id: str = Id
    type: Literal["card", "note", "todo", "taskboard", "sticky", "agent", "terminal"]


class ArrowBody(_In):
    """An arrow of SPEC §1; with ports it carries data one way only."""

    model_config = ConfigDict(extra="forbid", strict=True, populate_by_name=False)

    id: str = Id
    from_: str = Field(alias="from", min_length=1, max_length=256)
    to: str = Field(min_length=1, max_length=256)
    from_port: str | None = Field(default=None, max_length=64)
    to_port: str | None = Field(default=None, max_length=64)


class OfferBody(_In):
    """Offer a package: its manifest and its files (path → text)."""

    manifest: dict[str, Any]
    files: dict[str, str] = Field(default_factory=dict)


class PackageOut(BaseModel):
    """A package offered or updated: its state and content hash (``installed``: the files
    of the version installed, so nothing waits for approval)."""

    package: str
    state: Literal["available", "pending", "installed"]
    hash: str


class InstallBody(_In):
    """Install: which permissions the person accepted, and the review they saw."""

    grant: Literal["required", "all"] | list[str] = "required"
    review_hash: str | None = Field(default=None, max_length=128)


class GrantBody(_In):
    """Grant one permission: for the version the person saw, when ``review_hash`` names it
    (the review's ``hash``); another version installed since is ``stale``. Without it the
    body is SPEC §10.1's ``{"permission"}``, granted for the version installed now."""

    permission: str = Field(min_length=1, max_length=64)
    review_hash: str | None = Field(default=None, min_length=1, max_length=128)


class RevokeBody(_In):
    """Revoke one permission (narrowing: no version to name)."""

    permission: str = Field(min_length=1, max_length=64)


class ApproveBody(_In):
    """Approve a package's pending version: the hash of the review the person saw."""

    review_hash: str = Field(min_length=1, max_length=128)


class DeclineBody(_In):
    """Decline: for an installed package's pending update, the hash of the version the
    person saw (its diff's ``pending_hash``); another one pending now is ``stale``."""

    pending_hash: str | None = Field(default=None, max_length=128)


class DiffOut(BaseModel):
    """A pending version's diff (SPEC §4.4)."""

    package: str
    pending_hash: str
    widened: list[str]
    narrowed: list[str]
    #: tools and ports added or removed: not widening, shown to the person approving
    changed: list[str] = []
    lines: list[str]


# ----------------------------------------------------------------- answers
# What the routes answer, for the published document (and the clients generated
# from it): the routes write their JSON directly, so these describe it and are
# not run. A field that may be left out is optional; one that may be null says so.

_Absent = SkipJsonSchema[None]

#: A row or entry altered by hand (`engine.store.decoding`): shown, never a 500.
_UNREADABLE = ("only on a row altered by hand (POST /v1/log/verify names it): each field whose "
               "stored value does not decode, as its stored text; the field itself is then "
               "shown empty (null, or {})")


class NodeOut(BaseModel):
    """A node (SPEC §1): its id, type and the fields of its type, and what the engine
    keeps of it at run time (an agent's ``status``, ``screen`` and ``chain``, ...)."""

    model_config = ConfigDict(extra="allow")

    id: str
    type: Literal["card", "note", "todo", "taskboard", "sticky", "agent", "terminal"]
    package: str | _Absent = None
    visible: bool | _Absent = None
    background: bool | _Absent = None
    text: str | _Absent = None
    items: list[Any] | _Absent = None
    tasks: list[Any] | _Absent = None
    name: str | _Absent = None
    tool: str | _Absent = None
    status: str | _Absent = None
    dangerous: bool | _Absent = None
    shell: str | _Absent = None
    command: list[str] | _Absent = None
    layout: Layout | _Absent = None
    screen: str | _Absent = None
    chain: list[str] | _Absent = None


class ArrowOut(BaseModel):
    """An arrow (SPEC §1); the ports only on a port arrow."""

    model_config = ConfigDict(populate_by_name=True)

    id: str
    from_: str = Field(alias="from")
    to: str
    from_port: str | None | _Absent = None
    to_port: str | None | _Absent = None


class Ports(BaseModel):
    """How many input and output ports a package's cards have."""

    inputs: int
    outputs: int


class ReviewFacts(BaseModel):
    """What an install review shows (SPEC §4.1), as the replay cases match it."""

    package: str
    version: str
    hash: str = Field(description="the review's content hash: what `review_hash` names")
    high: list[str]
    medium: list[str]
    low: list[str]
    optional: list[str]
    tools: list[str]
    ports: Ports


class ReviewOut(ReviewFacts):
    """The install review, with the lines a person reads."""

    lines: list[str]
    text: str


class InstallOut(ReviewFacts):
    """An install's answer: the review it was, whether it installed, and what is granted."""

    installed: bool
    granted: list[str] | _Absent = None


class GrantsOut(BaseModel):
    """A package's grants after a grant."""

    package: str
    granted: list[str]


class RevokeOut(GrantsOut):
    """A package's grants after a revoke, and whether it revoked anything."""

    revoked: bool = Field(description="false: the permission was not granted, and nothing "
                                      "changed")


class LogRowOut(BaseModel):
    """A row of the arrow log (SPEC §8), as stored: null where a column has no value."""

    seq: int
    t: float
    workspace: str | None
    arrow: str | None
    card: str | None
    package: str | None
    version: str | None
    call: str | None
    target: str | None
    payload: str | None
    chain: list[str] | None
    outcome: str | None
    code: str | None
    reason: str | None
    approver: str | None
    prompt: str | None
    prev: str
    hash: str
    payload_bytes: int | None | _Absent = None
    payload_sha256: str | None | _Absent = None
    unreadable: dict[str, str] | _Absent = Field(default=None, description=_UNREADABLE)


class LogOut(BaseModel):
    """Arrow log rows in order, one page of them."""

    rows: list[LogRowOut]
    #: The ``after`` of the next page while more rows may follow; null at the log's end.
    next: int | None = Field(description="pass as `after` for the next page while more rows "
                             "may follow; null once this page reached the log's end")


class VerifyOut(BaseModel):
    """The log's hash chain and anchor checked: the first bad row and what is wrong."""

    ok: bool
    rows: int
    first_bad: int | None
    problem: str | None


class ReachStep(BaseModel):
    """One step of a path: from a node to the next, by an arrow and a grant."""

    model_config = ConfigDict(populate_by_name=True)

    from_: str = Field(alias="from")
    to: str
    action: str
    arrow: str | None
    grant: str | None


class ReachTarget(BaseModel):
    """Something a card can cause, and the path it rests on."""

    node: str
    kind: str
    action: str
    direct: bool
    dangerous: bool
    label: str
    path: list[ReachStep]


class ReachOut(BaseModel):
    """Everything one card can cause, directly and transitively."""

    card: str
    package: str
    targets: list[ReachTarget]
    dangerous_agents: list[str]


class HistoryEntry(BaseModel):
    """An entry of the consent history (SPEC §8): who changed consent, or tried to."""

    model_config = ConfigDict(extra="allow")

    seq: int
    t: float
    principal: str
    action: str
    subject: dict[str, Any]
    accepted: bool
    code: str | None
    reason: str | None
    detail: str | None
    prev: str | None
    hash: str | None
    grants: str | None
    unreadable: dict[str, str] | _Absent = Field(default=None, description=_UNREADABLE)


class HistoryOut(BaseModel):
    """A page of the consent history, oldest first."""

    entries: list[HistoryEntry]
    #: The ``after`` of the next page while more entries may follow; null at the end.
    next: int | None = Field(description="pass as `after` for the next page while more "
                             "entries may follow; null once this page reached the history's "
                             "end")


class CallBody(_In):
    """A card's call (SPEC §5)."""

    card: str = Id
    call: str = Field(min_length=1, max_length=128)
    target: str | None = Field(default=None, max_length=256)
    args: dict[str, Any] | None = None
    context: str | None = Field(default=None, max_length=256)


class BatchBody(_In):
    """Many calls in one round trip; each is decided as if sent alone, in order."""

    calls: list[CallBody] = Field(max_length=10_000)


class DecisionOut(BaseModel):
    """The Decision on a call: a refusal is a 200 with ``outcome`` denied or rate-limited."""

    outcome: Literal["ok", "queued", "held", "denied", "rate-limited"]
    call: str
    card: str | None
    package: str | None
    target: str | None
    permission: str | None
    code: str | None
    reason: str | None
    arrow: str | None
    message: str
    retry_after: float | None = None
    prompt: str | None = None
    value: Any = None


class BatchResult(BaseModel):
    """The decisions of a batch, in the order of its calls."""

    decisions: list[DecisionOut]


class EmitBody(_In):
    """A card puts data on one of its output ports."""

    card: str = Id
    port: str = Field(min_length=1, max_length=64)
    data: Any = None
    context: str | None = Field(default=None, max_length=256)


class EmitResult(BaseModel):
    """The decision for each port arrow, by arrow id (``""``: the emit itself was refused)."""

    decisions: dict[str, DecisionOut]


class PromptOut(BaseModel):
    """A prompt and its state on the arrow (SPEC §6, §7)."""

    id: str
    card: str
    package: str
    agent: str
    arrow: str | None
    state: str
    text_sha256: str
    #: A held prompt's: when it expires unanswered by the clock of the engine's machine
    #: (while the engine's time stands still ahead of that clock, SPEC §6, its reading
    #: plus the seconds left, not the stored deadline on the engine's time).
    deadline: float | None
    code: str | None
    reason: str | None
    message: str


class HoldOut(BaseModel):
    """A held prompt waiting for a person (SPEC §7): the whole text and its digest."""

    id: str
    card: str
    package: str
    arrow: str | None
    agent: str
    text: str
    text_sha256: str
    #: When it expires unanswered by the clock of the engine's machine (as `PromptOut`'s).
    deadline: float | None


class HoldApproveBody(_In):
    """An approval names the SHA-256 of the prompt text the person was shown."""

    text_sha256: str = Field(pattern=r"^[0-9a-fA-F]{64}$")


class HealthOut(BaseModel):
    """The service is up; asked ``ready``, its store answers too."""

    status: Literal["ok"]
    version: str = Field(description="the API's version (the /v1 routes), e.g. 1.0.0")
    arrowgate_version: str = Field(description=(
        "the version of the arrowgate serving (`arrowgate --version`'s; `unknown` from a "
        "checkout never installed): which build answers, where `version` is the API's"))
    store: Literal["ok"] | None = Field(
        None, description="present when asked ready=true: the store answered")


class Problem(BaseModel):
    """An error (RFC 9457 ``application/problem+json``) with the engine's fields."""

    model_config = ConfigDict(extra="allow")

    type: str = "about:blank"
    title: str
    status: int
    detail: str
    code: str
    reason: str | None = None
    permission: str | None = None
    message: str
