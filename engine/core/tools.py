"""Tools (SPEC §9): a tool call's state, its arguments' checks, the chain it carries.

Pure rules; the `Tools` service (`engine.services.tools`) applies them to the store.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from itertools import islice
from typing import Any

from engine.core.decision import Decision, refused_head
from engine.core.errors import with_code
from engine.core.manifest import check_json, json_path
from engine.core.text import named
from engine.core.toolschema import TooCostly, check_budget, schema_problems, tool_validator

__all__ = ["MAX_OPEN_TOOL_CALLS", "TOOL_CALL_COLUMNS", "TOOL_STATES", "ToolCall", "agent_side", "arg_path", "schema_problem",
           "tool_args_problem", "tool_chain"]

#: Every state of a tool call: open, then one resolution.
TOOL_STATES = ("open", "answered", "failed", "expired", "cancelled")

#: The most tool calls one agent has open at once; one more is ``QUEUE_FULL`` (reason
#: ``tool-calls``). Each open call is kept in memory with its arguments, and every
#: prompt a card makes is checked against each of its open calls (named or not):
#: unbounded, an agent's burst of calls slowed every operation of the engine.
MAX_OPEN_TOOL_CALLS = 256


@dataclass(slots=True)
class ToolCall:
    """One call of an agent to a card's tool, and how it ended."""

    id: str
    position: int
    workspace: str
    agent: str
    card: str
    package: str
    tool: str
    arrow: str | None
    args: dict[str, Any] = field(default_factory=dict)
    chain: list[str] = field(default_factory=list)  #: agent → card (→ …), ending with the card
    state: str = "open"
    t: float = 0.0
    deadline: float = 0.0  #: when it times out (engine clock)
    result: Any = None  #: the card's result, once ``answered``
    code: str | None = None  #: ``TOOL_ERROR``, ``TOOL_TIMEOUT``, or why it was cancelled
    reason: str | None = None
    message: str = ""
    ended: float | None = None

    @property
    def is_open(self) -> bool:
        """True until answered, failed, expired or cancelled."""
        return self.state == "open"

    def to_json(self) -> dict[str, Any]:
        """The agent's view: ``{"id", "state", "agent", "card", "tool"}`` and the
        ``result`` once answered, or the ``error`` (code, reason, message) once failed,
        expired or cancelled."""
        out: dict[str, Any] = {"id": self.id, "state": self.state, "agent": self.agent,
                               "card": self.card, "tool": self.tool}
        if self.state == "answered":
            out["result"] = self.result
        elif self.state != "open":
            out["error"] = {"code": self.code, "reason": self.reason, "message": self.message}
        return out

    def to_row(self) -> dict[str, Any]:
        """The row stored in the ``tool_calls`` table."""
        row = {name: getattr(self, name) for name in _FIELDS}
        row["args"] = json.dumps(self.args)
        row["chain"] = json.dumps(self.chain)
        row["result"] = json.dumps(self.result)
        return row

    def to_values(self, dumps: Callable[[Any], str] = json.dumps) -> tuple[Any, ...]:
        """`to_row`'s values in the order of `TOOL_CALL_COLUMNS` (what a save binds),
        without the dict.

        ``dumps`` writes the JSON columns: ``json.dumps`` or a function giving
        the very same text (the store's, whose encoder is set up once).
        """
        return (self.id, self.position, self.workspace, self.agent, self.card, self.package,
                self.tool, self.arrow, dumps(self.args), dumps(self.chain), self.state,
                self.t, self.deadline, dumps(self.result), self.code, self.reason,
                self.message, self.ended)

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> ToolCall:
        """Rebuild a tool call from its stored row."""
        data = dict(row)
        for name in ("args", "chain", "result"):
            data[name] = json.loads(data[name]) if data[name] is not None else None
        data["args"] = data["args"] or {}
        data["chain"] = data["chain"] or []
        return cls(**data)


_FIELDS = tuple(f.name for f in fields(ToolCall))
#: The columns of a stored tool call: its fields, in the order `ToolCall.to_values`
#: gives them.
TOOL_CALL_COLUMNS: tuple[str, ...] = _FIELDS


def agent_side(decision: Decision, agent: str, tool: Any) -> Decision:
    """The refusal told from the calling agent's side (it is the agent that reads it)."""
    head = refused_head(decision)
    if decision.target != agent or not decision.message.startswith(head):
        return decision
    card = named(decision.card) if decision.card else "?"
    pkg = f" ({named(decision.package)})" if decision.package else ""
    return decision.with_(message=with_code(
        decision.code or "", f"agent {named(agent)} may not call {card}.{named(tool)}{pkg}")
        + decision.message[len(head):])


def arg_path(path: Any) -> str:
    out = "args"
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else f".{part}"
    return out


#: Validators by their schema's id, with the schema (kept alive, so that its id is
#: not reused while it is here): a tool's schema is checked for every call.
_VALIDATORS: dict[int, tuple[dict[str, Any], Any]] = {}
#: The most schemas `_validator` keeps (then it starts again).
_VALIDATORS_KEPT = 256


def _validator(schema: dict[str, Any]) -> Any:
    """A validator of ``schema``, made once for each schema object, or the first of
    its `schema_problems` when it has any.

    A manifest's schemas are never changed once validated (a new manifest
    brings new objects), and a validator holds no state of a validation.
    """
    found = _VALIDATORS.get(id(schema))
    if found is not None and found[0] is schema:
        return found[1]
    unsafe = schema_problems(schema)
    # A schema stored before the engine refused it at offer: no call is checked
    # against it (fail closed).
    validator: Any = unsafe[0] if unsafe else tool_validator(schema)
    if len(_VALIDATORS) >= _VALIDATORS_KEPT:
        _VALIDATORS.clear()
    _VALIDATORS[id(schema)] = (schema, validator)
    return validator


#: The steps (`check_budget`) checking any arguments may take, and the more for each
#: byte of their JSON: a legitimate check is linear in the arguments, about one step
#: for each few bytes; one past this is a schema that makes it more.
_STEPS_BASE = 50_000
_STEPS_PER_BYTE = 4
#: The most steps any check may take, whatever the arguments' size: the check runs on
#: the service's event loop, before the agent's rate limit (SPEC §9), and every other
#: client waits while it does. A step is about 1 µs (1.5 where ``anyOf`` builds a
#: branch's errors), so this holds the loop a few tenths of a second at most, where
#: 4 steps a byte let 256 KiB of arguments hold it 10 s. It passes every realistic call
#: (tests/unit/test_tool_args_check_time_is_bounded.py): 20,000 rows of a checked
#: object are 180,000 steps, 5,000 items under ``anyOf`` 40,000.
_STEPS_MOST = 250_000

#: How many of the ways arguments fail their schema `schema_problem` reads.
_ERRORS_READ = 64


class _Earlier:
    """A path ordered so that an earlier sibling ranks higher under ``max``.

    jsonschema's own relevance puts the path itself in its key meaning "prefer
    earlier siblings", but ``best_match`` takes the ``max``, so of 64 bad items
    it named the last (``args.tags[63]``) where a person looks for the first.
    (Its descent into a branch's errors takes the ``min`` and is left as is.)
    """

    __slots__ = ("key",)

    def __init__(self, path: Any) -> None:
        # Kinds apart, so an index never meets a name in a comparison.
        self.key = tuple((0, p) if isinstance(p, int) else (1, str(p)) for p in path)

    def __lt__(self, other: _Earlier) -> bool:
        return self.key > other.key

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Earlier) and self.key == other.key

    __hash__ = None  # type: ignore[assignment]


def _top_relevance(error: Any) -> tuple[Any, ...]:
    """jsonschema's `relevance` for the top-level choice, the earliest sibling first."""
    from jsonschema.exceptions import relevance

    return (relevance(error)[0], _Earlier(error.path), *relevance(error)[2:])


def schema_problem(schema: dict[str, Any], args: dict[str, Any], *,
                   size: int | None = None) -> tuple[str, str] | None:
    """The most relevant way ``args`` fails the tool's input schema, with its path, or None.

    ``size`` is the bytes of the arguments' JSON (measured when not given): the
    check may take steps in proportion to it, and fails past them.

    Fails closed: when the arguments cannot be checked at all (the schema is refused,
    checking raised, or it took more than its steps), that is the problem, at ``args``.
    """
    from jsonschema.exceptions import best_match

    try:
        validator = _validator(schema)
        if isinstance(validator, tuple):
            where, what = validator
            return "args", (f"cannot be checked: the tool's input schema is refused "
                            f"({json_path(('input', *where))}: {what})")
        # The first errors only: an agent's array of 30,000 wrong items is 30,000
        # errors, each an object jsonschema builds, on the service's loop; which of
        # the first few is most relevant names the argument as well.
        if size is None:
            size = len(json.dumps(args).encode("utf-8"))
        with check_budget(min(_STEPS_BASE + _STEPS_PER_BYTE * size, _STEPS_MOST)):
            top = max(islice(validator.iter_errors(args), _ERRORS_READ), key=_top_relevance,
                      default=None)
            # `best_match` of the one chosen: its descent into an anyOf's or oneOf's
            # branches (which ranks by the opposite order) stays jsonschema's.
            error = best_match([top]) if top is not None else None
    except TooCostly as exc:
        return "args", (f"are too costly to check against the tool's schema ({exc} for "
                        f"{size} bytes of arguments: its references or lists multiply "
                        "the work)")
    except Exception as exc:  # noqa: BLE001
        # Whatever a hostile schema or argument makes jsonschema raise (a
        # RecursionError, an OverflowError, a referencing error, one of a version
        # to come) is this call's refusal, logged like any other: never a 500.
        text = str(exc)
        text = text if len(text) <= 120 else text[:119] + "…"
        return "args", (f"cannot be checked against the tool's schema "
                        f"({type(exc).__name__}: {text})")
    if error is None:
        return None
    path = list(error.absolute_path)
    if error.validator == "required" and isinstance(error.instance, dict):
        # Name the missing property itself, not the object that lacks it.
        wanted = error.validator_value if isinstance(error.validator_value, list) else []
        missing = next((k for k in wanted if k not in error.instance), None)
        if missing is not None:
            return arg_path([*path, missing]), "is required"
    if error.validator == "additionalProperties" and isinstance(error.instance, dict):
        return arg_path(path), error.message
    return arg_path(path), error.message


def tool_args_problem(schema: dict[str, Any] | None, args: Any,
                      max_payload: int) -> tuple[str, str] | None:
    """Why a tool call's arguments are refused, as (path, what), or None (SPEC §9).

    Plain JSON of bounded depth, at most ``max_payload`` bytes, and valid
    against the tool's ``input`` schema; a tool without one takes none.
    """
    if args is None:
        args = {}
    if not isinstance(args, dict):
        return "args", "must be an object"
    bad = check_json(args)
    if bad is not None:
        return "args" + bad[0].removeprefix("$"), bad[1]
    size = len(json.dumps(args).encode("utf-8"))
    if size > max_payload:
        return "args", f"is {size} bytes, more than max_payload ({max_payload})"
    if schema is None:
        if args:
            return arg_path([sorted(args)[0]]), "is not an argument of this tool " \
                                               "(it takes none)"
        return None
    return schema_problem(schema, args, size=size)


def tool_chain(current: object, agent: str, card: str) -> list[str]:
    """The causal chain a tool call carries: the agent's own chain (or the agent), then the card."""
    head = list(current) if isinstance(current, (list, tuple)) and current \
        and current[-1] == agent else [agent]
    return [*head, card]
