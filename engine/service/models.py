"""Request and response bodies of the service (SPEC §10.1), as pydantic models.

Requests are strict: unknown fields are refused (``extra="forbid"``) and
types are not coerced, so a client's mistake is a 400 that names the field
rather than a guess. Responses describe what the routes send; the hot routes
write their JSON by hand and these models only document them (OpenAPI).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "ApproveBody",
    "ArrowBody",
    "BatchBody",
    "BatchResult",
    "CallBody",
    "DecisionOut",
    "DiffOut",
    "EmitBody",
    "EmitResult",
    "GrantBody",
    "HealthOut",
    "HoldOut",
    "HoldApproveBody",
    "InstallBody",
    "NodeBody",
    "NodePatch",
    "OfferBody",
    "PackageOut",
    "Problem",
    "PromptOut",
    "TokenBody",
    "TokenOut",
    "WorkspaceBody",
    "WorkspaceOut",
]

_STRICT = ConfigDict(extra="forbid", strict=True)
#: Identifiers of nodes, arrows, workspaces: short printable strings.
Id = Field(min_length=1, max_length=256)


class _In(BaseModel):
    model_config = _STRICT


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


class NodePatch(_In):
    """Fields of a node that may change (SPEC §1); the engine checks them per type."""

    package: str | None = None
    visible: bool | None = None
    background: bool | None = None
    text: str | None = None
    items: list[Any] | None = None
    tasks: list[Any] | None = None
    name: str | None = None
    tool: str | None = None
    status: str | None = None
    dangerous: bool | None = None
    shell: str | None = None
    command: list[str] | None = None
    layout: dict[str, float] | None = None


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
    """A package offered or updated: its state and content hash."""

    package: str
    state: Literal["available", "pending"]
    hash: str


class InstallBody(_In):
    """Install: which permissions the person accepted, and the review they saw."""

    grant: Literal["required", "all"] | list[str] = "required"
    review_hash: str | None = Field(default=None, max_length=128)


class GrantBody(_In):
    """Grant or revoke one permission."""

    permission: str = Field(min_length=1, max_length=64)


class ApproveBody(_In):
    """Approve a package's pending version: the hash of the review the person saw."""

    review_hash: str = Field(min_length=1, max_length=128)


class DiffOut(BaseModel):
    """A pending version's diff (SPEC §4.4)."""

    package: str
    pending_hash: str
    widened: list[str]
    narrowed: list[str]
    lines: list[str]


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
    deadline: float | None


class HoldApproveBody(_In):
    """An approval names the SHA-256 of the prompt text the person was shown."""

    text_sha256: str = Field(pattern=r"^[0-9a-fA-F]{64}$")


class HealthOut(BaseModel):
    """The service is up."""

    status: Literal["ok"]
    version: str


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
