"""The events a card's stream carries (SPEC §3), as schemas of the OpenAPI document.

``GET /v1/events`` is Server-Sent Events: each message's ``data`` is
``{"type", "data"}``, one of the `CardEvent` variants below. OpenAPI 3.1 has
no way to say what a stream's messages hold, so the variants are components
of the document (``CardEvent``, a union told apart by ``type``) that the
events route names (``x-message-schema``); generators such as
openapi-typescript make types of every component, so a canvas app reads an
event's fields typed, not guessed.

Every event the engine publishes is checked against these schemas by the test
suite (tests/conftest.py: `check_event`), so a field added to an event and not
here, or changed, fails the tests rather than leaving the document wrong.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

__all__ = ["CARD_EVENT", "CardEvent", "check_event", "event_schemas"]


class _Data(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class PermissionsChangedData(_Data):
    """The package's grants changed (a grant, a revoke, an approval)."""

    package: str
    granted: list[str] = Field(description="every permission the package holds now")


class PermissionsRequestData(_Data):
    """The person's answer to the card's request for an optional permission."""

    permission: str
    granted: bool


class PromptHeldData(_Data):
    """A prompt of the card held for a person (the agent is in dangerous mode)."""

    prompt: str
    agent: str
    arrow: str | None
    text: str = Field(description="the whole prompt text, as the person is shown it")
    deadline: float | None = Field(description="when the hold expires (the engine's clock)")


class PromptResolvedData(_Data):
    """A held or queued prompt of the card was approved, rejected, expired or cancelled."""

    prompt: str
    state: str
    code: str | None
    reason: str | None


class AgentStatusData(_Data):
    """An agent or terminal of the card's workspace changed status."""

    agent: str
    workspace: str
    status: str


class AgentTurnData(_Data):
    """An agent of the card's workspace was given a prompt, or replied."""

    agent: str
    workspace: str
    state: Literal["delivered", "replied"]
    prompt: str | None = None


class AgentChangedData(_Data):
    """An agent or terminal of the card's workspace was added, changed or removed."""

    agent: str
    workspace: str
    kind: str
    change: str


class AgentOutputData(_Data):
    """Live output of an agent or terminal the card watches (``agents.onOutput``)."""

    node: str
    text: str
    workspace: str | None


class PortDataData(_Data):
    """Data on a port arrow into the card."""

    port: str
    data: Any
    source: str
    arrow: str


class ToolCallData(_Data):
    """An agent calls one of the card's tools: answer it once (SPEC §9)."""

    id: str
    agent: str
    tool: str
    args: dict[str, Any] | None
    chain: list[str] = Field(description="the causal chain, the calling agent first")


class ToolResolvedData(_Data):
    """A tool call of the card ended: answered, failed, expired or cancelled."""

    id: str
    state: str
    code: str | None


class FsChangedData(_Data):
    """A file the card watches changed."""

    watch: str
    workspace: str
    package: str
    path: str
    change: str


class FsWatchEndedData(_Data):
    """The card's file watch ended."""

    watch: str
    workspace: str
    package: str
    reason: str


class EventsDroppedData(_Data):
    """Events were missed: the client fell behind, or resumed from an id the stream
    no longer holds (or never gave); the stream goes on from now."""

    count: int | None = Field(description="how many, when known")
    reason: str | None = None


class PermissionsChangedEvent(_Data):
    """``permissions.changed``."""

    type: Literal["permissions.changed"]
    data: PermissionsChangedData


class PermissionsRequestEvent(_Data):
    """``permissions.request``."""

    type: Literal["permissions.request"]
    data: PermissionsRequestData


class PromptHeldEvent(_Data):
    """``prompt.held``."""

    type: Literal["prompt.held"]
    data: PromptHeldData


class PromptResolvedEvent(_Data):
    """``prompt.resolved``."""

    type: Literal["prompt.resolved"]
    data: PromptResolvedData


class AgentStatusEvent(_Data):
    """``agents.status``."""

    type: Literal["agents.status"]
    data: AgentStatusData


class AgentTurnEvent(_Data):
    """``agents.turn``."""

    type: Literal["agents.turn"]
    data: AgentTurnData


class AgentChangedEvent(_Data):
    """``agents.changed``."""

    type: Literal["agents.changed"]
    data: AgentChangedData


class AgentOutputEvent(_Data):
    """``agents.onOutput``."""

    type: Literal["agents.onOutput"]
    data: AgentOutputData


class PortDataEvent(_Data):
    """``port.data``."""

    type: Literal["port.data"]
    data: PortDataData


class ToolCallEvent(_Data):
    """``tool.call``."""

    type: Literal["tool.call"]
    data: ToolCallData


class ToolResolvedEvent(_Data):
    """``tool.resolved``."""

    type: Literal["tool.resolved"]
    data: ToolResolvedData


class FsChangedEvent(_Data):
    """``fs.changed``."""

    type: Literal["fs.changed"]
    data: FsChangedData


class FsWatchEndedEvent(_Data):
    """``fs.watch.ended``."""

    type: Literal["fs.watch.ended"]
    data: FsWatchEndedData


class EventsDroppedEvent(_Data):
    """``events.dropped``."""

    type: Literal["events.dropped"]
    data: EventsDroppedData


#: One message of a card's stream: the variants, told apart by ``type``.
CardEvent = Annotated[
    PermissionsChangedEvent
    | PermissionsRequestEvent
    | PromptHeldEvent
    | PromptResolvedEvent
    | AgentStatusEvent
    | AgentTurnEvent
    | AgentChangedEvent
    | AgentOutputEvent
    | PortDataEvent
    | ToolCallEvent
    | ToolResolvedEvent
    | FsChangedEvent
    | FsWatchEndedEvent
    | EventsDroppedEvent,
    Field(discriminator="type"),
]

#: Validates a message (``{"type", "data"}``) against its variant.
CARD_EVENT: TypeAdapter[CardEvent] = TypeAdapter(CardEvent)


def check_event(type_: str, data: dict[str, Any]) -> None:
    """Raise `pydantic.ValidationError` when ``data`` is not what ``type_``'s schema says."""
    CARD_EVENT.validate_python({"type": type_, "data": data})


def event_schemas() -> dict[str, Any]:
    """The components: ``CardEvent`` (the union) and each variant and data model."""
    schema = CARD_EVENT.json_schema(ref_template="#/components/schemas/{model}")
    components: dict[str, Any] = dict(schema.pop("$defs", {}))
    schema["description"] = ("One message of GET /v1/events: the data of an SSE message "
                             "(its `event:` is the same `type`).")
    schema["title"] = "CardEvent"
    components["CardEvent"] = schema
    return components
