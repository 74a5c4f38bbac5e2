"""JSON Schemas of what programs exchange with arrowgate, from pydantic models.

The models describe the JSON forms of SPEC §1 (nodes and arrows, as a client
writes them), §2 (manifests: `engine.core.manifest.Manifest` itself), §5 (a
`Decision`) and the log export (a decision record of ``arrowgate.decision/1``).
They validate nothing inside the engine, which has its own checks; they are the
published contract, so the README, the committed ``schemas/*.json`` and, later,
the HTTP service's OpenAPI document all come from one place.

``arrowgate docs schemas --out schemas`` writes the files; a test fails when
the committed ones differ from what this module generates.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from engine.core.catalogue import PERMISSIONS
from engine.core.manifest import MAX_HOSTS, MAX_PORTS, MAX_TOOLS, Manifest, Tool

__all__ = [
    "AgentNode",
    "ArrowModel",
    "CardNode",
    "DecisionModel",
    "DecisionRecord",
    "Layout",
    "NodeModel",
    "NoteNode",
    "StickyNode",
    "TaskboardNode",
    "TerminalNode",
    "TodoNode",
    "schemas",
    "write_schemas",
]

_DRAFT = "https://json-schema.org/draft/2020-12/schema"


class _Closed(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class Layout(_Closed):
    """Where a node sits on a drawn canvas (kept from JSON Canvas)."""

    x: float
    y: float
    width: float
    height: float
    color: str | None = Field(None, description="a JSON Canvas colour: '1'..'6' or '#rrggbb'")


class _Node(_Closed):
    id: str = Field(min_length=1, description="unique in the app (all workspaces)")
    layout: Layout | None = None


class CardNode(_Node):
    """An instance of an installed package (a custom card)."""

    type: Literal["card"]
    package: str = Field(min_length=1, description="the package name")
    visible: bool = Field(True, description="on screen now (optional permissions need it)")
    background: bool = Field(False, description="keeps running while its workspace is hidden")


class NoteNode(_Node):
    """A built-in note card."""

    type: Literal["note"]
    text: str = ""


class StickyNode(_Node):
    """A built-in sticky card."""

    type: Literal["sticky"]
    text: str = ""


class TodoItem(_Closed):
    """One checklist item of a todo card."""

    id: str
    text: str
    done: bool = False


class TodoNode(_Node):
    """A built-in todo card: a checklist."""

    type: Literal["todo"]
    items: list[TodoItem] = []


class Task(_Closed):
    """One task of a taskboard card."""

    id: str
    text: str
    column: str = "todo"


class TaskboardNode(_Node):
    """A built-in taskboard card."""

    type: Literal["taskboard"]
    tasks: list[Task] = []


class AgentNode(_Node):
    """An AI agent."""

    type: Literal["agent"]
    name: str = ""
    tool: str = Field("", description="e.g. claude-code, codex")
    status: Literal["working", "waiting", "finished"] = "waiting"
    dangerous: bool = Field(False, description="every prompt to it waits for a person's OK")
    command: list[Annotated[str, Field(min_length=1)]] | None = Field(
        None, min_length=1,
        description="the program a CommandAgent driver runs per prompt ({prompt} is replaced)")


class TerminalNode(_Node):
    """A terminal."""

    type: Literal["terminal"]
    name: str = ""
    shell: Literal["bash", "powershell", "cmd"] = "bash"
    status: Literal["working", "waiting", "finished"] = "waiting"


#: A node of any type, told apart by ``type``.
NodeModel = Annotated[CardNode | NoteNode | StickyNode | TodoNode | TaskboardNode | AgentNode
                      | TerminalNode, Field(discriminator="type")]


class ArrowModel(_Closed):
    """An arrow: consent between two nodes; with ports it carries data one way."""

    id: str = Field(min_length=1)
    from_: str = Field(alias="from", min_length=1, description="a node id")
    to: str = Field(min_length=1, description="a node id in the same workspace")
    from_port: str | None = Field(None, description="an output port of 'from' (port arrows)")
    to_port: str | None = Field(None, description="an input port of 'to' (port arrows)")


class DecisionModel(_Closed):
    """What the engine decided on a call (`Decision.to_json`)."""

    outcome: Literal["ok", "queued", "held", "denied", "rate-limited"]
    call: str
    card: str | None
    package: str | None
    target: str | None
    permission: str | None
    code: str | None = Field(description="e.g. PERMISSION_DENIED; null when allowed")
    reason: str | None
    arrow: str | None = Field(description="the arrow that allowed (or would carry) the call")
    message: str
    retry_after: float | None = Field(None, description="seconds, for RATE_LIMITED")
    prompt: str | None = Field(None, description="the prompt's id, for an accepted prompt")
    value: Any = Field(None, description="what the call returned (see the call table)")


class _Open(BaseModel):
    # Records gain fields over time (never lose or rename them): readers must
    # accept fields they do not know.
    model_config = ConfigDict(extra="allow")


class RecordInput(_Open):
    """What was asked, on which arrow."""

    card: str | None
    package: str | None
    version: str | None = Field(description="the package's content hash")
    call: str
    target: str | None
    arrow: str | None
    payload: str | None = Field(description="prompt text, command, path, url …")
    chain: list[str] | None = Field(description="the causal chain of a prompt")
    payload_bytes: int | None = Field(
        default=None, description="full UTF-8 length of a refused call's payload when the "
                                  "row keeps only its first 4 KiB (then hashed after the 16 "
                                  "fields, with payload_sha256)")
    payload_sha256: str | None = Field(
        default=None, pattern="^[0-9a-f]{64}$",
        description="SHA-256 of that full payload")


class RecordResult(_Open):
    """What was decided."""

    outcome: str = Field(description="ok, queued, held, denied, rate-limited, approved, "
                                     "rejected, expired, cancelled, suppressed")
    code: str | None
    reason: str | None
    approver: str | None
    prompt: str | None


class RecordChain(_Open):
    """The row's place in the hash chain."""

    prev: str = Field(pattern="^[0-9a-f]{64}$")
    hash: str = Field(pattern="^[0-9a-f]{64}$")


class DecisionRecord(_Open):
    """One line of ``arrowgate log export`` (schema ``arrowgate.decision/1``)."""

    schema_: Literal["arrowgate.decision/1"] = Field(alias="schema")
    decision_id: str = Field(description="<seq>-<first 16 hex of the row hash>")
    seq: int = Field(ge=1)
    timestamp: float | None = Field(description="seconds since the epoch; null only on a row "
                                                "altered by hand (see unreadable)")
    workspace: str | None
    input: RecordInput
    result: RecordResult
    chain: RecordChain


def _manifest_schema() -> dict[str, Any]:
    schema = Manifest.model_json_schema()
    # The model checks names against the catalogue in code; say it in the schema.
    schema["properties"]["permissions"]["propertyNames"] = {"enum": list(PERMISSIONS)}
    # A tool is a bare name or an object (SPEC §2), which the engine reads before
    # the model sees the names: say both here.
    tool = Tool.model_json_schema()
    tool["properties"]["name"]["pattern"] = _TOOL_NAME
    schema["properties"]["tools"]["items"] = {"anyOf": [{"type": "string", "pattern": _TOOL_NAME},
                                                        tool]}
    # The bounds the engine holds a manifest to (`engine.core.manifest`, README decisions).
    schema["properties"]["tools"]["maxItems"] = MAX_TOOLS
    for side in ("inputs", "outputs"):
        schema["$defs"]["Ports"]["properties"][side]["maxItems"] = MAX_PORTS
    schema["$defs"]["PermissionDecl"]["properties"]["hosts"]["anyOf"][0]["maxItems"] = MAX_HOSTS
    return schema


#: A tool's name (SPEC §2).
_TOOL_NAME = "^[a-z][a-z0-9_]{0,63}$"


def schemas() -> dict[str, dict[str, Any]]:
    """Every published schema, by file name."""
    out = {
        "manifest.json": _manifest_schema(),
        "node.json": TypeAdapter(NodeModel).json_schema(),
        "arrow.json": ArrowModel.model_json_schema(),
        "decision.json": DecisionModel.model_json_schema(),
        "decision-record.json": DecisionRecord.model_json_schema(),
    }
    for name, schema in out.items():
        schema["$schema"] = _DRAFT
        schema.setdefault("title", name.removesuffix(".json"))
    return out


def render(schema: dict[str, Any]) -> str:
    """A schema as its committed file's text."""
    return json.dumps(schema, indent=2, sort_keys=True) + "\n"


def write_schemas(folder: Path) -> list[Path]:
    """Write every schema into ``folder`` (created if missing); returns the paths."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, schema in schemas().items():
        path = folder / name
        path.write_text(render(schema))
        paths.append(path)
    return paths
