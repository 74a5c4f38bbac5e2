"""Conformance case files (FORMAT.md): read and validate a whole case, then write its files.

A case is validated completely before anything is created for it: the JSON,
every top-level field, every step (pydantic models, strict types), the
references between steps (``step``, ``hold``, ``context``, ``review``), the
``bind`` names and every ``"$NAME"`` use, time that never goes backwards and
numbers that are finite, and a ``files`` map that cannot leave the case's
folder. Every problem is reported with the file, the step (index and ``do``)
and the field, in words a person who writes cases can act on.

The files are then written by `write_files` relative to an opened directory
descriptor (``O_NOFOLLOW | O_CREAT | O_EXCL``, folders with ``mkdir(dir_fd=)``),
never by joining path strings, so nothing lands outside the folder even when
a symbolic link was planted on the way.
"""

from __future__ import annotations

import json
import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from canvas import CanvasError, Node, WorkspaceSettings
from canvas.model import is_finite_number
from engine.core.errors import CaseInvalid
from engine.core.hosts import normalise_host
from engine.core.jsoncount import TooManyValues, refuse_many_values
from engine.core.text import clipped, is_unicode, visible
from engine.core.uniquekeys import DuplicateKey, NumberTooLong, loads_unique
from engine.effects.netguard import normal_url
from engine.effects.userfile import MAX_USER_FILE, FileRefused, read_user_text

__all__ = ["BIND_REF", "CaseFile", "CaseFiles", "STEP_MODELS", "bind_refs", "load_case",
           "step_problems", "write_files"]

#: The largest case file read (a case is a few kilobytes; this is a bound, not a goal).
MAX_CASE_BYTES = MAX_USER_FILE
#: The most JSON values a case file may hold, counted on its text before it is read
#: (`engine.core.jsoncount`): a text of empty objects within `MAX_CASE_BYTES` would
#: build five million of them, held while every one is checked. A case at its step
#: bound of a hundred values a step, with its `MAX_CASE_FILES` files, holds 220,000;
#: the conformance cases, at most 400.
MAX_CASE_VALUES = 1 << 18
#: The deepest a case's values nest (an object or array is a level). The replay
#: walks values recursively (binding ``$NAME`` references, matching results),
#: so a deeper value is refused here, by step and field, rather than failing
#: the whole replay part-way; no engine call takes values half this deep.
MAX_CASE_DEPTH = 64
#: The most ``files`` a case writes (as a package folder's `MAX_PACKAGE_FILES`): each is
#: written before the first step, so a case of a million would take minutes to start.
MAX_CASE_FILES = 10_000
#: The most steps a case plays: a replay reads as much as its steps ask (each
#: ``history`` step the whole consent history so far), so more would keep a
#: person's replay busy for minutes.
MAX_CASE_STEPS = 2_000
#: The longest target a case's link may have, in bytes of UTF-8: a path's (PATH_MAX
#: less its NUL), past which the link cannot be made when the case is set up.
MAX_LINK_TARGET = 4095
#: Problems listed for one invalid case before the rest are only counted.
_MAX_PROBLEMS = 20
#: A bind name, and a string that is exactly a use of one: ``$NAME`` or ``$NAME.key``.
_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
BIND_REF = re.compile(rf"\$({_NAME})(?:\.(.+))?", re.DOTALL)

_Seconds = Annotated[float, Field(ge=0, allow_inf_nan=False)]


class _Model(BaseModel):
    # Strict: "1" is not a number and 1 is not true; unknown fields are mistakes.
    model_config = ConfigDict(extra="forbid", strict=True)


def _not_null(value: Any) -> Any:
    """A field that may be left out but not given as ``null``: null says nothing the
    replay can check (only ``result`` may expect the value null)."""
    if value is None:
        raise ValueError("must not be null (leave the field out instead)")
    return value


class Expect(_Model):
    """What a step must give (FORMAT.md, Expectations)."""

    ok: bool | None = None
    error: str | None = None
    reason: str | None = None
    permission: str | None = None
    held: bool | None = None
    state: str | None = None
    result: Any = None
    deliveries: dict[str, Expect] | None = None
    count: Annotated[int, Field(ge=0)] | None = None
    outcomes: list[str] | None = None
    retry_after: _Seconds | None = None

    _present = field_validator("ok", "error", "reason", "permission", "held", "state",
                               "deliveries", "count", "outcomes", "retry_after",
                               mode="before")(_not_null)


class Step(_Model):
    """Fields every step may carry."""

    do: str
    t: _Seconds | None = None
    id: str | None = None
    by: str = "operator"
    expect: Expect | None = None
    bind: Annotated[str, Field(pattern=rf"^{_NAME}$")] | None = None

    # Absent t is the previous step's time; null is a mistake, not a third way.
    _present = field_validator("t", mode="before")(_not_null)


class CallStep(Step):
    """``call``: a card makes a call."""

    card: str
    call: str
    target: str | None = None
    args: dict[str, Any] | None = None
    context: str | None = None


class EmitStep(Step):
    """``emit``: a card puts data on an output port."""

    card: str
    port: str
    data: Any
    context: str | None = None


class ToolStep(Step):
    """``tool``: an agent calls a card's tool, with ``args`` checked by its input schema."""

    agent: str
    card: str
    tool: str
    args: dict[str, Any] | None = None


class ToolAnswerStep(Step):
    """``tool.answer``: the card answers a ``tool`` step's call with a result or an error."""

    call: str
    result: Any = None
    error: str | None = None


class EventsStep(Step):
    """``events``: what a card has taken since its previous ``events`` step."""

    card: str


class InstallStep(Step):
    """``install``: the review, then the person's answer."""

    package: str
    grant: Any = "required"
    accept: bool = True

    @field_validator("grant", mode="before")
    @classmethod
    def _grant(cls, value: Any) -> Any:
        return _check_grant(value)


class PackageStep(Step):
    """``review``: the install review of a package."""

    package: str


class PermissionStep(Step):
    """``grant`` and ``revoke``."""

    package: str
    permission: str


class RequestStep(Step):
    """``request``: a card asks for an optional permission."""

    card: str
    permission: str
    answer: Literal["allow", "deny"]


class UpdateStep(Step):
    """``update``: new files and/or a new manifest arrive."""

    package: str
    manifest: Any = None
    files: dict[str, str] | None = None


class ApproveStep(Step):
    """``approve``: approve the pending version."""

    package: str
    review: str | None = None


class ArrowAddStep(Step):
    """``arrow.add``: the arrow object is the engine's to judge (INVALID_ARROW)."""

    arrow: dict[str, Any]


class NodeAddStep(Step):
    """``node.add``: the node object is the engine's to judge (INVALID_NODE)."""

    node: dict[str, Any]


class RemoveStep(Step):
    """``arrow.remove`` and ``node.remove``: ``id`` names the arrow or node."""

    id: str


class NodeSetStep(Step):
    """``node.set``: ``id`` names the node."""

    id: str
    fields: dict[str, Any]


class HoldStep(Step):
    """``hold.approve`` and ``hold.reject``."""

    hold: str


class AgentReplyStep(Step):
    """``agent.reply``."""

    agent: str
    text: str


class TerminalOutputStep(Step):
    """``terminal.output``."""

    terminal: str
    text: str
    exit: int | None = None


class AwaitStep(Step):
    """``await``: the outcome of an earlier call or emit."""

    step: str


class LogStep(Step):
    """``log``: the arrow log, filtered."""

    arrow: str | None = None
    card: str | None = None


#: The model of each ``do`` this replay plays.
STEP_MODELS: dict[str, type[Step]] = {
    "call": CallStep, "emit": EmitStep, "tool": ToolStep, "tool.answer": ToolAnswerStep,
    "events": EventsStep,
    "history": Step, "install": InstallStep, "review": PackageStep,
    "grant": PermissionStep, "revoke": PermissionStep, "request": RequestStep,
    "update": UpdateStep, "approve": ApproveStep, "arrow.add": ArrowAddStep,
    "arrow.remove": RemoveStep, "node.add": NodeAddStep, "node.remove": RemoveStep,
    "node.set": NodeSetStep, "hold.approve": HoldStep, "hold.reject": HoldStep,
    "agent.reply": AgentReplyStep, "terminal.output": TerminalOutputStep,
    "await": AwaitStep, "log": LogStep, "log.verify": Step, "restart": Step,
}
# In these steps ``id`` names a node or an arrow, not the step (FORMAT.md).
_ID_NAMES_A_THING = frozenset({"node.remove", "node.set", "arrow.remove"})
# Per do, the fields that refer to an earlier step by its id, and the kinds
# of step they may name.
_PROMPTING = ("a call or emit", frozenset({"call", "emit"}))
_REFS: dict[str, dict[str, tuple[str, frozenset[str]]]] = {
    "await": {"step": ("a call, emit or tool", frozenset({"call", "emit", "tool"}))},
    "tool.answer": {"call": ("a tool", frozenset({"tool"}))},
    "hold.approve": {"hold": _PROMPTING},
    "hold.reject": {"hold": _PROMPTING},
    "call": {"context": ("a tool", frozenset({"tool"}))},
    "emit": {"context": ("a tool", frozenset({"tool"}))},
    "approve": {"review": ("an update", frozenset({"update"}))},
}
class HttpAnswer(_Model):
    """How the case's network answers one URL."""

    status: Annotated[int, Field(ge=100, le=599)] = 200
    body: str = ""
    location: str | None = None
    #: Virtual seconds the answer takes; beyond ``fetch_timeout`` the fetch fails.
    delay: _Seconds = 0.0


class PackageSpec(_Model):
    """A package the case offers, with its grant (FORMAT.md ``packages``)."""

    # Any JSON: a case may carry an invalid manifest to test that installing it
    # is refused (it is validated at install, not when the case loads).
    manifest: Any
    files: dict[str, str] = Field(default_factory=dict)
    grant: Any = None

    @field_validator("grant", mode="before")
    @classmethod
    def _grant(cls, value: Any) -> Any:
        # Absent means offered, not installed; null is a mistake, not a third way.
        return _check_grant(value)


class ArrowSpec(_Model):
    """An arrow of the case's canvas (SPEC §1)."""

    id: Annotated[str, Field(min_length=1)]
    from_: Annotated[str, Field(alias="from")]
    to: str
    from_port: str | None = None
    to_port: str | None = None


class CaseFile(_Model):
    """The top level of a case (FORMAT.md); steps are validated one by one."""

    name: str = ""
    about: str = ""
    settings: dict[str, Any] = Field(default_factory=dict)
    files: dict[str, Any] = Field(default_factory=dict)
    dns: dict[str, list[str]] = Field(default_factory=dict)
    http: dict[str, HttpAnswer] = Field(default_factory=dict)
    packages: dict[str, PackageSpec] = Field(default_factory=dict)
    nodes: list[dict[str, Any]] = Field(default_factory=list)
    arrows: list[ArrowSpec] = Field(default_factory=list)
    steps: list[Any]

    @field_validator("settings")
    @classmethod
    def _settings(cls, value: dict[str, Any]) -> dict[str, Any]:
        # The engine's own rules (type, finiteness, range), so a case can set
        # nothing a workspace would refuse, and is refused before it runs.
        try:
            WorkspaceSettings.from_dict(value)
        except CanvasError as exc:
            raise ValueError(str(exc)) from None
        return value


def _check_grant(value: Any) -> Any:
    if value in ("required", "all"):
        return value
    if isinstance(value, list) and all(isinstance(p, str) for p in value):
        return value
    raise ValueError('must be "required", "all" or a list of permission names (leave '
                     'grant out to offer a package without installing it)')


# --------------------------------------------------------------------------- files


@dataclass(frozen=True, slots=True)
class CaseFiles:
    """The case's ``files``, checked: (path components, text or symlink target) in order."""

    entries: tuple[tuple[tuple[str, ...], str, bool], ...] = ()  #: (parts, content, is_link)


def _check_files(files: dict[str, Any]) -> tuple[CaseFiles, list[tuple[str, str]]]:
    """Check every key and value; (the entries, problems as (field, what is wrong))."""
    problems: list[tuple[str, str]] = []
    entries: list[tuple[tuple[str, ...], str, bool]] = []
    seen: dict[tuple[str, ...], str] = {}
    if len(files) > MAX_CASE_FILES:
        # Before any name is looked at: the count alone makes the case unplayable.
        return CaseFiles(()), [("files", f"holds {len(files)} files; a case writes at most "
                                         f"{MAX_CASE_FILES}")]
    for key, value in files.items():
        where = f"files.{key}"
        if not key or "\0" in key:
            problems.append((where, "a file name must be a non-empty path without NUL"))
            continue
        if key.startswith("/"):
            problems.append((where, "is absolute; files keys are relative to the case's "
                                    "folder"))
            continue
        raw_parts = key.split("/")
        if ".." in raw_parts:
            problems.append((where, "has a '..' component, which would leave the case's "
                                    "folder"))
            continue
        parts = tuple(p for p in raw_parts if p not in ("", "."))
        if not parts:
            problems.append((where, "names the case's folder itself, not a file in it"))
            continue
        if not is_unicode(key):
            problems.append((where, "is not valid Unicode (a lone surrogate)"))
            continue
        if any(len(p.encode("utf-8")) > 255 for p in parts) or len(parts) > 64:
            # Found now, not half-way through writing the case's files.
            problems.append((where, "has a name longer than 255 bytes or more than 64 "
                                    "folders"))
            continue
        if parts in seen:
            problems.append((where, f"names the same file as {seen[parts]!r}"))
            continue
        seen[parts] = key
        if isinstance(value, str):
            if not is_unicode(value):
                problems.append((where, "the text is not valid Unicode (a lone surrogate)"))
                continue
            entries.append((parts, value, False))
        elif isinstance(value, dict) and set(value) == {"symlink"} \
                and isinstance(value["symlink"], str) and value["symlink"] \
                and "\0" not in value["symlink"] and is_unicode(value["symlink"]):
            if len(value["symlink"].encode("utf-8")) > MAX_LINK_TARGET:
                problems.append((where, f"the link's target is longer than {MAX_LINK_TARGET} "
                                        "bytes"))
                continue
            entries.append((parts, value["symlink"], True))
        else:
            problems.append((where, 'must be the file\'s text or {"symlink": "target"}'))
    # A file is written into folders made for it: never through a link the case
    # makes (it could point anywhere), nor into a path that is itself a file.
    kinds = {parts: is_link for parts, _content, is_link in entries}
    for parts, _content, _is_link in entries:
        for depth in range(1, len(parts)):
            prefix = parts[:depth]
            if prefix in kinds:
                what = "a symbolic link" if kinds[prefix] else "a file"
                problems.append((f"files.{seen[parts]}",
                                 f"would be written through {seen[prefix]!r}, which is "
                                 f"{what} in this case; that could leave the case's folder"))
                break
    return CaseFiles(tuple(entries)), problems


def write_files(folder: Path, files: CaseFiles) -> None:
    """Write a checked ``files`` map into ``folder``, which must be a fresh, empty folder.

    Every file is created relative to an opened directory (``O_NOFOLLOW``,
    ``O_EXCL``); folders on the way are made with ``mkdir(dir_fd=)`` and
    opened with ``O_NOFOLLOW``, so a symbolic link anywhere on the way is an
    error, never followed.

    Raises:
        OSError: a file could not be made (nothing is ever written outside).
    """
    nofollow_dir = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
    root = os.open(folder, nofollow_dir)
    try:
        for parts, content, is_link in files.entries:
            parent = os.dup(root)
            try:
                for name in parts[:-1]:
                    try:
                        os.mkdir(name, 0o755, dir_fd=parent)
                    except FileExistsError:
                        pass  # made for an earlier file; opened without following below
                    child = os.open(name, nofollow_dir, dir_fd=parent)
                    os.close(parent)
                    parent = child
                if is_link:
                    # The target is kept as written: the engine must refuse to follow it.
                    os.symlink(content, parts[-1], dir_fd=parent)
                    continue
                fd = os.open(parts[-1], os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
                             | os.O_CLOEXEC, 0o644, dir_fd=parent)
                with os.fdopen(fd, "wb") as out:
                    out.write(content.encode("utf-8"))
            finally:
                os.close(parent)
    finally:
        os.close(root)


# --------------------------------------------------------------------------- steps


def bind_refs(value: Any) -> list[tuple[str, str | None]]:
    """Every ``"$NAME"`` / ``"$NAME.key"`` string in ``value``: (name, key or None)."""
    found: list[tuple[str, str | None]] = []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            match = BIND_REF.fullmatch(item)
            if match:
                found.append((match.group(1), match.group(2)))
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return found


#: Fields of a step never replaced by bound values: what the step is and binds.
NOT_BOUND = frozenset({"do", "bind"})


def step_problems(do: str, step: dict[str, Any]) -> list[tuple[str, str]]:
    """The step's own problems (types, fields), as (field, what is wrong)."""
    model = STEP_MODELS.get(do)
    if model is None:
        return [("do", f"unknown do {do!r} (one of: {', '.join(sorted(STEP_MODELS))})")]
    if do == "tool.answer" and ("result" in step) == ("error" in step):
        return [("result", "a tool.answer has a result or an error, not both and not neither")]
    try:
        model.model_validate(step)
    except ValidationError as exc:
        return [_pydantic_problem(error, do) for error in exc.errors()]
    return []


_PLAIN = {
    "missing": "is required",
    "string_type": "must be a string",
    "bool_type": "must be true or false",
    "int_type": "must be a whole number",
    "float_type": "must be a number",
    "finite_number": "must be a finite number",
    "dict_type": "must be an object",
    "list_type": "must be a list",
    "model_type": "must be an object",
}


def _pydantic_problem(error: Any, kind: str) -> tuple[str, str]:
    where = "".join(f"[{part}]" if isinstance(part, int) else f".{part}"
                    for part in error["loc"]).lstrip(".") or "(the whole object)"
    kind_of = error["type"]
    if kind_of == "extra_forbidden":
        return where, f"is not a field of {kind}"
    text = _PLAIN.get(kind_of) or str(error["msg"]).replace("Input should be", "must be")
    text = text.removeprefix("Value error, ")
    if kind_of != "missing":
        try:
            shown = json.dumps(error.get("input"), default=repr)
        except (RecursionError, ValueError):
            shown = type(error.get("input")).__name__
        text += f" (got {shown[:60] + '…' if len(shown) > 60 else shown})"
    return where, text


# --------------------------------------------------------------------------- the case


def _read(path: str | Path) -> str:
    """The file's text; a FIFO or device is refused, never opened for a blocking read."""
    try:
        text = read_user_text(path, limit=MAX_CASE_BYTES)
        refuse_many_values(text, MAX_CASE_VALUES, "a case")
    except FileRefused as exc:
        raise CaseInvalid(f"{path}: file: {exc.problem}") from None
    except TooManyValues as exc:
        raise CaseInvalid(f"{path}: file: {exc}") from None
    return text


@dataclass
class _Problems:
    path: str
    #: The first `_MAX_PROBLEMS` problems, the ones shown.
    lines: list[str] = field(default_factory=list)
    #: Problems found past them, only counted: a case may hold a problem in each of
    #: its values, and none of them is shown.
    more: int = 0

    def add(self, where: str, problem: str) -> None:
        if len(self.lines) >= _MAX_PROBLEMS:
            self.more += 1
            return
        # Bounded: the where and the problem may echo a value of megabytes the
        # case's author chose (a do, a key, an id); its start and end still say which.
        self.lines.append(clipped(f"{self.path}: {where}: {problem}"))

    def raise_any(self) -> None:
        if not self.lines:
            return
        shown = list(self.lines)
        if self.more:
            shown.append(f"{self.path}: … and {self.more:,} more problems")
        raise CaseInvalid("\n".join(shown))


def _step_where(index: int, do: Any, fieldname: str | None = None) -> str:
    where = f"step {index}" + (f" ({visible(do)})" if isinstance(do, str) and do else "")
    return where + (f" field {fieldname!r}" if fieldname else "")


def _non_finite(value: Any, path: str) -> list[str]:
    """JSON paths of NaN and infinities in ``value`` (Python's json reads them)."""
    found: list[str] = []
    stack: list[tuple[Any, str]] = [(value, path)]
    while stack:
        item, where = stack.pop()
        if isinstance(item, float) and not math.isfinite(item):
            found.append(where)
        elif isinstance(item, dict):
            stack.extend((v, f"{where}.{k}" if where else str(k)) for k, v in item.items())
        elif isinstance(item, list):
            stack.extend((v, f"{where}[{i}]") for i, v in enumerate(item))
    return sorted(found)


def _too_deep(value: Any, path: str) -> str | None:
    """The JSON path where ``value`` nests deeper than `MAX_CASE_DEPTH`, or None.
    Iterative: the check itself must not overflow on the depth it refuses."""
    stack: list[tuple[Any, str, int]] = [(value, path, 0)]
    while stack:
        item, where, depth = stack.pop()
        if depth > MAX_CASE_DEPTH:
            return where
        if isinstance(item, dict):
            stack.extend((v, f"{where}.{k}" if where else str(k), depth + 1)
                         for k, v in item.items())
        elif isinstance(item, list):
            stack.extend((v, f"{where}[{i}]", depth + 1) for i, v in enumerate(item))
    return None


def _check_depths(steps: list[Any], problems: _Problems) -> None:
    """Each step nested deeper than `MAX_CASE_DEPTH`, named by step and field."""
    for i, step in enumerate(steps):
        if not isinstance(step, dict):
            continue  # reported by _check_steps
        do = step.get("do")
        for key, value in step.items():
            deep = _too_deep(value, str(key))
            if deep is not None:
                problems.add(_step_where(i, do, str(key)), _depth_problem(deep))


def _depth_problem(where: str) -> str:
    shown = where if len(where) <= 80 else where[:40] + "…" + where[-30:]
    return f"nests deeper than {MAX_CASE_DEPTH} levels (at {shown!r}), more than a replay plays"


def load_case(path: str | Path) -> tuple[dict[str, Any], CaseFiles]:
    """Read and validate a whole case file; nothing is created.

    Returns:
        The case as read (steps as written) and its checked ``files``.

    Raises:
        CaseInvalid: listing each problem with the file, the step (index and
            ``do``) and the field.
    """
    name = str(path)
    text = _read(path)
    try:
        raw = loads_unique(text)
    except RecursionError:
        raise CaseInvalid(f"{name}: file: is nested too deeply to be a case") from None
    except (DuplicateKey, NumberTooLong) as exc:  # JSON, but no case: said as it is
        raise CaseInvalid(clipped(f"{name}: file: {exc}")) from None
    except ValueError as exc:
        raise CaseInvalid(f"{name}: file: is not valid JSON: {exc}") from None
    if not isinstance(raw, dict):
        raise CaseInvalid(f"{name}: file: a case is a JSON object")
    problems = _Problems(name)
    top: CaseFile | None = None
    try:
        top = CaseFile.model_validate(raw)
    except ValidationError as exc:
        for error in exc.errors():
            if error["loc"] and error["loc"][0] == "steps" and error["type"] == "missing":
                problems.add("field 'steps'", "is required: a list of steps")
                continue
            where, what = _pydantic_problem(error, "a case")
            problems.add(f"field {where!r}", what)
    files = CaseFiles()
    if top is not None:
        files, file_problems = _check_files(top.files)
        for where, what in file_problems:
            problems.add(f"field {where!r}", what)
        _check_canvas(top, problems)
        _check_network(top, problems)
    deep = _too_deep({k: v for k, v in raw.items() if k != "steps"}, "")
    if deep is not None:
        problems.add(f"field {deep.split('.')[0].split('[')[0]!r}", _depth_problem(deep))
    steps = raw.get("steps")
    if isinstance(steps, list) and len(steps) > MAX_CASE_STEPS:
        problems.add("field 'steps'", f"holds {len(steps)} steps; a case holds at most "
                                      f"{MAX_CASE_STEPS}")
    elif isinstance(steps, list):
        _check_depths(steps, problems)
        _check_steps(steps, problems)
    # Settings and http answers are checked for finiteness by their own rules.
    rest = {k: v for k, v in raw.items() if k not in ("steps", "settings", "http")}
    for where in _non_finite(rest, ""):
        problems.add(f"field {where!r}", "must be a finite number (NaN and infinity are not "
                                         "JSON numbers)")
    problems.raise_any()
    return raw, files


def _check_canvas(top: CaseFile, problems: _Problems) -> None:
    """Nodes as the engine would build them; arrows between nodes of the case."""
    node_ids: set[str] = set()
    for i, node in enumerate(top.nodes):
        try:
            built = Node.build(node, "w1")
        except CanvasError as exc:
            problems.add(f"field 'nodes[{i}]'", str(exc))
            continue
        except (TypeError, ValueError) as exc:  # a value of a kind no node field takes
            problems.add(f"field 'nodes[{i}]'", f"is not a valid node ({exc})")
            continue
        if built.id in node_ids:
            problems.add(f"field 'nodes[{i}]'", f"the node id {built.id!r} is used twice")
        node_ids.add(built.id)
    arrow_ids: set[str] = set()
    for i, arrow in enumerate(top.arrows):
        if arrow.id in arrow_ids:
            problems.add(f"field 'arrows[{i}]'", f"the arrow id {arrow.id!r} is used twice")
        arrow_ids.add(arrow.id)
        for end, ref in (("from", arrow.from_), ("to", arrow.to)):
            if ref not in node_ids:
                problems.add(f"field 'arrows[{i}].{end}'",
                             f"refers to node {ref!r}, which is not among the case's nodes")


def _check_network(top: CaseFile, problems: _Problems) -> None:
    """Resolver hosts and answered URLs the replay can key by (FORMAT.md ``dns``, ``http``)."""
    for host in top.dns:
        try:
            normalise_host(host)
        except (ValueError, UnicodeError) as exc:
            problems.add(f"field 'dns.{host}'", f"is not a host name: {exc}")
    for url in top.http:
        try:
            normal_url(url)
        except (ValueError, UnicodeError) as exc:
            problems.add(f"field 'http.{url}'", f"is not a URL: {exc}")


def _virtual_time(t: Any) -> float | None:
    """A step's ``t`` as seconds, or None when it is no number a float holds (the
    step's own check names that): an int beyond a float's range raised OverflowError."""
    if not is_finite_number(t):
        return None
    try:
        return float(t)
    except OverflowError:
        return None


def _check_steps(steps: list[Any], problems: _Problems) -> None:
    """Each step alone, then what ties steps together: ids, refs, binds, time."""
    kinds: dict[str, tuple[int, str]] = {}  # step id -> (index, do)
    bound: dict[str, int] = {}  # bind name -> index of the step that binds it
    last_t = 0.0
    for i, step in enumerate(steps):
        if not isinstance(step, dict):
            problems.add(_step_where(i, None), "a step is a JSON object")
            continue
        do = step.get("do")
        if not isinstance(do, str):
            problems.add(_step_where(i, None, "do"),
                         "is required: a string saying what the step does")
            continue
        for where, what in step_problems(do, step):
            problems.add(_step_where(i, do, where), what)
        t = _virtual_time(step.get("t"))
        if t is not None:
            if t < last_t:
                problems.add(_step_where(i, do, "t"),
                             f"time goes backwards ({t:g} < {last_t:g}); t is virtual "
                             "seconds since the start and never decreases")
            last_t = max(last_t, t)
        for key, (words, allowed) in _REFS.get(do, {}).items():
            ref = step.get(key)
            if key not in step or (ref is None and key != "step" and key != "hold"):
                continue
            if not isinstance(ref, str) or ref not in kinds:
                problems.add(_step_where(i, do, key),
                             f"refers to {ref!r}, which no earlier step has as its id")
            elif kinds[ref][1] not in allowed:
                at, other = kinds[ref]
                problems.add(_step_where(i, do, key),
                             f"refers to {ref!r}, which is step {at} ({other}), not {words} "
                             "step")
        for key, value in step.items():
            if key in NOT_BOUND or (key == "id" and do not in _ID_NAMES_A_THING):
                continue
            for name, _key in bind_refs(value):
                if name not in bound:
                    problems.add(_step_where(i, do, key),
                                 f"uses ${name}, which no earlier step binds "
                                 f"(add \"bind\": \"{name}\" to the step whose value it is)")
        if "id" in step and do not in _ID_NAMES_A_THING and isinstance(step["id"], str):
            if step["id"] in kinds:
                problems.add(_step_where(i, do, "id"),
                             f"{step['id']!r} is already the id of step {kinds[step['id']][0]}")
            else:
                kinds[step["id"]] = (i, do)
        bind_name = step.get("bind")
        if isinstance(bind_name, str) and re.fullmatch(_NAME, bind_name):
            if bind_name in bound:
                problems.add(_step_where(i, do, "bind"),
                             f"{bind_name} is already bound by step {bound[bind_name]}")
            else:
                bound[bind_name] = i
        for where in _non_finite(step, ""):
            if where != "t":  # reported above with its own words
                problems.add(_step_where(i, do, where),
                             "must be a finite number (NaN and infinity are not JSON numbers)")
