"""Card manifests as pydantic v2 models, their validation and content hash (SPEC §2)."""

from __future__ import annotations

import hashlib
import json
import re
import sys
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError

from engine.core.catalogue import PERMISSIONS
from engine.core.errors import ManifestInvalid
from engine.core.hosts import host_pattern_problem, normalise_host
from engine.core.jsoncount import TooManyValues, refuse_many_values
from engine.core.text import control_characters, describe_character, is_unicode
from engine.core.toolschema import MAX_PATTERN_TEXT, PatternBudget, pattern_text, schema_problems
from engine.core.uniquekeys import DuplicateKey, loads_unique

__all__ = [
    "Manifest",
    "PermissionDecl",
    "Ports",
    "Tool",
    "check_json",
    "content_hash",
    "file_digests",
    "fold_manifest",
    "json_path",
    "loads_manifest",
    "manifest_digest",
    "package_name_problem",
    "parse_manifest",
    "refuse_unreadable_manifest",
    "require_json",
]

# SPEC §2. Matched with re.fullmatch: "$" alone would let a trailing newline through.
_NAME = re.compile(r"[a-z0-9][a-z0-9._-]{0,127}")
_NOT_A_NAME = ("is not a package name: lowercase letters, digits, '.', '_' and '-', "
               "starting with a letter or digit, at most 128")
_TOOL = re.compile(r"[a-z][a-z0-9_]{0,63}")
_PORT = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]{0,63}")
# Semantic Versioning 2.0.0 (semver.org), ASCII digits only.
_SEMVER = re.compile(
    r"(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*)?"
    r"(?:\+[0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*)?", re.ASCII)
#: How deep a manifest's JSON may nest: far beyond any real manifest and its
#: tools' input schemas, far below Python's recursion limit.
MAX_DEPTH = 64
#: Most characters of a tool's description.
MAX_DESCRIPTION = 2000
# What a manifest may list without end is bounded too: the review shows each tool
# and host to a person, and the engine keeps each tool, port and schema in memory
# for as long as the package is installed (README, decisions).
#: Most tools a manifest offers (SPEC §2 `tools`).
MAX_TOOLS = 128
#: Most ports on each side (`ports.inputs`, `ports.outputs`).
MAX_PORTS = 64
#: Most host patterns of one permission (`network.hosts`).
MAX_HOSTS = 64
#: Most bytes of one tool's input schema, as compact JSON.
MAX_SCHEMA_BYTES = 32 * 1024
#: Most bytes of the whole manifest, as compact JSON.
MAX_MANIFEST_BYTES = 512 * 1024
#: Most bytes of a manifest's text as written (spaces, indentation and escapes
#: included): refused before it is read as JSON (`loads_manifest`), where a text of
#: empty objects built a hundred bytes of values for each of its own.
MAX_MANIFEST_TEXT = 4 * MAX_MANIFEST_BYTES
#: Most JSON values of a manifest's text, counted before it is read
#: (`engine.core.jsoncount`): within `MAX_MANIFEST_TEXT`, a text of empty objects would
#: build 700,000 of them. As many as `MAX_MANIFEST_BYTES` of compact JSON holds of the
#: smallest values there are (``0,``): no manifest within its own bounds holds more.
MAX_MANIFEST_VALUES = MAX_MANIFEST_BYTES // 2
_TOOL_KEYS = frozenset({"name", "description", "input"})


class PermissionDecl(BaseModel):
    """One declared permission: optional or required, and hosts for network."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)
    optional: bool = False
    hosts: tuple[str, ...] | None = None


class Ports(BaseModel):
    """The input and output ports a card declares."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)
    inputs: tuple[str, ...] = ()
    outputs: tuple[str, ...] = ()


class Tool(BaseModel):
    """A tool a card offers to connected agents (SPEC §9): its input is a JSON Schema."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)
    name: str
    description: str = ""
    #: JSON Schema (draft 2020-12) of the arguments; None for a bare name (no arguments).
    input: dict[str, Any] | None = None


class Manifest(BaseModel):
    """A card package's ``manifest.json``.

    ``tools`` holds the tools' names; `tool_list` the tools with their
    descriptions and input schemas.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)
    name: str
    version: str = Field(min_length=1, max_length=100)
    permissions: dict[str, PermissionDecl]
    tools: tuple[str, ...] = ()
    ports: Ports = Ports()
    _tools: tuple[Tool, ...] = PrivateAttr(default=())

    @property
    def tool_list(self) -> tuple[Tool, ...]:
        """Each tool with its description and input schema, in manifest order."""
        return self._tools or tuple(Tool(name=n) for n in self.tools)

    def tool(self, name: str) -> Tool | None:
        """The tool called ``name``, or None."""
        return next((t for t in self.tool_list if t.name == name), None)

    @property
    def required(self) -> frozenset[str]:
        """Declared permissions that are not optional."""
        return frozenset(n for n, d in self.permissions.items() if not d.optional)

    @property
    def optional(self) -> frozenset[str]:
        """Declared optional permissions."""
        return frozenset(n for n, d in self.permissions.items() if d.optional)

    def hosts(self, permission: str = "network") -> tuple[str, ...]:
        """The normalised host patterns declared for ``permission``."""
        decl = self.permissions.get(permission)
        if decl is None or decl.hosts is None:
            return ()
        return tuple(normalise_host(h) for h in decl.hosts)

    def to_json(self) -> dict[str, Any]:
        """The manifest as JSON (defaults left out)."""
        return self.model_dump(mode="json", exclude_none=True)


def json_path(loc: tuple[Any, ...] | list[Any]) -> str:
    """``("permissions", "made.up", "hosts", 0)`` → ``$.permissions["made.up"].hosts[0]``."""
    out = "$"
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif len(str(part)) <= 64 and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", str(part)):
            out += f".{part}"
        else:
            # A key may be a megabyte long: the path names it, cut short.
            key = str(part)
            out += "[" + json.dumps(key if len(key) <= 64 else key[:63] + "…") + "]"
    return out


def _semantic_problems(raw: dict[str, Any]) -> list[tuple[str, str]]:
    """Problems pydantic's types cannot see: catalogue names, hosts, duplicates."""
    problems: list[tuple[str, str]] = []
    perms = raw.get("permissions")
    if isinstance(perms, dict):
        for name, decl in perms.items():
            path = ("permissions", name)
            if name not in PERMISSIONS:
                problems.append((json_path(path), f"unknown permission {_shown(name)}"))
                continue
            if not isinstance(decl, dict):
                continue
            hosts = decl.get("hosts")
            if PERMISSIONS[name].needs_hosts:
                if hosts is None or (isinstance(hosts, list) and not hosts):
                    problems.append((json_path((*path, "hosts")),
                                     f"{name} needs a non-empty 'hosts' list"))
                elif isinstance(hosts, list):
                    for i, host in enumerate(hosts):
                        if isinstance(host, str) and _unprintable(
                                problems, (*path, "hosts", i), host):
                            continue
                        problem = host_pattern_problem(host)
                        if problem:
                            problems.append((json_path((*path, "hosts", i)),
                                             f"host pattern {_shown(host)} {problem}"))
            elif hosts is not None:
                problems.append((json_path((*path, "hosts")), f"{name} takes no 'hosts'"))
    name = raw.get("name")
    if isinstance(name, str) and not _unprintable(problems, ("name",), name) \
            and not _NAME.fullmatch(name):
        problems.append(("$.name", f"{_shown(name)} {_NOT_A_NAME}"))
    version = raw.get("version")
    if isinstance(version, str) and not _unprintable(problems, ("version",), version) \
            and not _SEMVER.fullmatch(version):
        problems.append(("$.version", f"{_shown(version)} is not a semantic version "
                                      "(MAJOR.MINOR.PATCH, e.g. 1.2.0)"))
    ports = raw.get("ports")
    if isinstance(ports, dict):
        for side in ("inputs", "outputs"):
            values = ports.get(side)
            if isinstance(values, list):
                for i, value in enumerate(values):
                    if isinstance(value, str) and not _unprintable(
                            problems, ("ports", side, i), value) and not _PORT.fullmatch(value):
                        problems.append((json_path(("ports", side, i)),
                                         f"{_shown(value)} is not a valid port name"))
                if len(set(map(str, values))) != len(values):
                    problems.append((json_path(("ports", side)), "a port is listed twice"))
    return problems


def _shown(value: object) -> str:
    """A value quoted for an error message, cut short: a manifest may hold megabytes."""
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "…"


def _unprintable(problems: list[tuple[str, str]], path: tuple[Any, ...], text: str) -> bool:
    """Add a problem when ``text`` holds control characters; True when it did."""
    found = control_characters(text)
    if not found:
        return False
    names = ", ".join(describe_character(ch) for ch in found[:3])
    problems.append((json_path(path), f"contains control characters ({names}): only "
                                      "printable text, on one line"))
    return True


def _tools(raw: dict[str, Any], problems: list[tuple[str, str]]) -> list[Tool] | None:
    """Validate ``tools`` (names or ``{"name", "description", "input"}``); None when it is
    not a list, which pydantic then reports."""
    values = raw.get("tools")
    if not isinstance(values, list):
        return None
    tools: list[Tool] = []
    seen: set[str] = set()
    # One for all its tools: what compiling their patterns costs is the manifest's.
    budget = PatternBudget()
    for i, entry in enumerate(values):
        path: tuple[Any, ...] = ("tools", i)
        if isinstance(entry, str):
            entry = {"name": entry}
        elif not isinstance(entry, dict):
            problems.append((json_path(path), "must be a tool name or an object "
                                              "{\"name\", \"description\", \"input\"}"))
            continue
        else:
            path = (*path, "name")
            for key in sorted(set(entry) - _TOOL_KEYS, key=str):
                problems.append((json_path(("tools", i, key)), f"unknown field {_shown(key)}"))
        ok = True
        name = entry.get("name")
        if not isinstance(name, str):
            problems.append((json_path(path), "a tool needs a name (a string)"))
            ok = False
        elif _unprintable(problems, path, name):
            ok = False
        elif not _TOOL.fullmatch(name):
            problems.append((json_path(path), f"{_shown(name)} is not a valid tool name: lowercase "
                                              "letters, digits and '_', starting with a letter, "
                                              "at most 64"))
            ok = False
        elif name in seen:
            problems.append((json_path(path), f"{_shown(name)} is listed twice"))
            ok = False
        description = entry.get("description", "")
        if not isinstance(description, str):
            problems.append((json_path(("tools", i, "description")), "must be a string"))
            ok = False
        elif _unprintable(problems, ("tools", i, "description"), description):
            ok = False
        elif len(description) > MAX_DESCRIPTION:
            problems.append((json_path(("tools", i, "description")),
                             f"is {len(description)} characters; at most {MAX_DESCRIPTION}"))
            ok = False
        schema = entry.get("input")
        if schema is not None and not _schema_ok(problems, ("tools", i, "input"), schema,
                                                 budget):
            ok = False
        if ok and isinstance(name, str) and isinstance(description, str):
            seen.add(name)
            tools.append(Tool.model_construct(name=name, description=description, input=schema))
    return tools


def _schema_ok(problems: list[tuple[str, str]], path: tuple[Any, ...], schema: Any,
               budget: PatternBudget) -> bool:
    """The tool's ``input`` is a valid JSON Schema (draft 2020-12) object, one the
    engine can check arguments against safely (`schema_problems`, its patterns'
    instructions taken from the manifest's ``budget``)."""
    if not isinstance(schema, dict):
        problems.append((json_path(path), "must be a JSON Schema object (draft 2020-12)"))
        return False
    # Every key and string of the schema reaches the connected agents as the tool's
    # schema (`arrowgate mcp`), and no review shows it: held to what its description is.
    if _unprintable_schema(problems, path, schema):
        return False
    # Imported here: jsonschema takes a third of a second to import, which
    # every process that imports the engine would pay, most never reading a
    # tool's schema.
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError

    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        where = json_path((*path, *exc.absolute_path))
        problems.append((where, f"not a valid JSON Schema (draft 2020-12): {exc.message}"))
        return False
    except (ValueError, TypeError, RecursionError, OverflowError) as exc:
        problems.append((json_path(path), f"cannot be checked as a JSON Schema: {exc}"))
        return False
    unsafe = schema_problems(schema, budget)
    problems.extend((json_path((*path, *where)), what) for where, what in unsafe)
    return not unsafe


def _unprintable_schema(problems: list[tuple[str, str]], path: tuple[Any, ...],
                        schema: dict[str, Any]) -> bool:
    """Add a problem for a key or string of ``schema`` holding control characters
    (a key's is reported at the object holding it); True when it did. Iterative."""
    stack: list[tuple[object, tuple[Any, ...]]] = [(schema, path)]
    while stack:
        item, where = stack.pop()
        if isinstance(item, str):
            if _unprintable(problems, where, item):
                return True
        elif isinstance(item, dict):
            for key, value in item.items():
                if isinstance(key, str) and _unprintable(problems, where, key):
                    return True
                stack.append((value, (*where, key)))
        elif isinstance(item, list):
            stack.extend((value, (*where, i)) for i, value in enumerate(item))
    return False


def check_json(value: object, *, max_depth: int = MAX_DEPTH) -> tuple[str, str] | None:
    """The first reason ``value`` is not plain JSON a manifest may hold, with its path, or
    None: objects with string keys, arrays, strings (keys too: valid Unicode), finite
    numbers, booleans and null, nested at most ``max_depth`` deep. Iterative, so any
    depth is checked safely."""
    stack: list[tuple[object, tuple[Any, ...]]] = [(value, ())]
    while stack:
        item, path = stack.pop()
        if len(path) > max_depth:
            return (json_path(path[:max_depth]), f"nested more than {max_depth} levels deep")
        if isinstance(item, dict):
            for key, child in item.items():
                if not isinstance(key, str):
                    return (json_path(path), f"has a key that is not a string: {key!r:.40}")
                if not is_unicode(key):
                    # The path names the key through json.dumps, which escapes the
                    # surrogate: the reason itself stays valid text to log and hash.
                    return (json_path((*path, key)),
                            "is a key that is not valid Unicode (a lone surrogate)")
                stack.append((child, (*path, key)))
        elif isinstance(item, (list, tuple)):
            stack.extend((child, (*path, i)) for i, child in enumerate(item))
        elif isinstance(item, float):
            if item != item or item in (float("inf"), float("-inf")):
                return (json_path(path), f"{item} is not a JSON number")
        elif isinstance(item, str):
            if not is_unicode(item):
                return (json_path(path), "is not valid Unicode (a lone surrogate)")
        elif isinstance(item, int):
            if item.bit_length() > _PLAIN_BITS and not _writable(item):
                return (json_path(path), "is a whole number of more digits than JSON here "
                                         f"holds (at most {sys.get_int_max_str_digits()})")
        elif item is not None:
            return (json_path(path), f"a {type(item).__name__} is not JSON")
    return None


#: Bits of a whole number every Python writes as text (a few hundred digits; the
#: least ``sys.get_int_max_str_digits`` may be is 640): longer ones are tried.
_PLAIN_BITS = 2000


def _writable(number: int) -> bool:
    """Whether Python writes ``number`` as text: past ``sys.get_int_max_str_digits``
    digits it raises ValueError, and writing the JSON (a log row, the store) would."""
    try:
        int.__repr__(number)
    except ValueError:
        return False
    return True


def require_json(raw: object, *, package: str | None = None) -> None:
    """Refuse a manifest that is not plain JSON of bounded depth (see `check_json`).

    `Engine.offer` stores a manifest before it is validated: this keeps what
    cannot be stored or walked safely out of the store.

    Raises:
        ManifestInvalid: naming the first problem with its JSON path.
    """
    bad = check_json(raw)
    if bad is not None:
        raise ManifestInvalid(f"{bad[0]}: {bad[1]}", problems=[bad],
                              package=package)
    over = _bound_problems(raw)
    if over:
        raise ManifestInvalid("; ".join(f"{p}: {m}" for p, m in over), problems=over,
                              package=package)


def _size(value: object) -> int:
    """Bytes of ``value`` as compact UTF-8 JSON (it is plain JSON: `check_json`)."""
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))


def _bound_problems(raw: object) -> list[tuple[str, str]]:
    """How plain-JSON ``raw`` exceeds the manifest's bounds (`MAX_TOOLS` ...), each
    naming its bound; checked before any entry is looked at, so a manifest of
    thousands of tools is refused at the cost of counting them."""
    if not isinstance(raw, dict):
        return []
    problems: list[tuple[str, str]] = []
    size = _size(raw)
    if size > MAX_MANIFEST_BYTES:
        problems.append(("$", f"is {size} bytes of JSON; a manifest is at most "
                              f"{MAX_MANIFEST_BYTES} bytes"))
    tools = raw.get("tools")
    if isinstance(tools, list):
        if len(tools) > MAX_TOOLS:
            problems.append(("$.tools", f"lists {len(tools)} tools; a manifest offers "
                                        f"at most {MAX_TOOLS}"))
        else:
            text = 0
            for i, tool in enumerate(tools):
                schema = tool.get("input") if isinstance(tool, dict) else None
                if schema is not None and (n := _size(schema)) > MAX_SCHEMA_BYTES:
                    problems.append((json_path(("tools", i, "input")),
                                     f"is {n} bytes of JSON; a tool's input schema is at "
                                     f"most {MAX_SCHEMA_BYTES} bytes"))
                text += pattern_text(schema)
            if text > MAX_PATTERN_TEXT:
                problems.append(("$.tools", f"holds {text} characters of patterns in its "
                                            f"input schemas; a manifest at most "
                                            f"{MAX_PATTERN_TEXT}"))
    ports = raw.get("ports")
    if isinstance(ports, dict):
        for side in ("inputs", "outputs"):
            values = ports.get(side)
            if isinstance(values, list) and len(values) > MAX_PORTS:
                problems.append((json_path(("ports", side)),
                                 f"lists {len(values)} ports; at most {MAX_PORTS} {side}"))
    perms = raw.get("permissions")
    if isinstance(perms, dict):
        for name, decl in perms.items():
            hosts = decl.get("hosts") if isinstance(decl, dict) else None
            if isinstance(hosts, list) and len(hosts) > MAX_HOSTS:
                problems.append((json_path(("permissions", name, "hosts")),
                                 f"lists {len(hosts)} host patterns; at most {MAX_HOSTS}"))
    return problems


def _utf8_size(text: str) -> int:
    """Bytes of ``text`` in UTF-8, counted a slice at a time (no copy of the whole)."""
    if text.isascii():
        return len(text)
    step = 1 << 16
    return sum(len(text[i:i + step].encode("utf-8", "surrogatepass"))
               for i in range(0, len(text), step))


def refuse_unreadable_manifest(text: str | bytes) -> None:
    """Refuse a manifest's text too long, or of too many values, to be read as JSON.

    Raises:
        ManifestInvalid: longer than `MAX_MANIFEST_TEXT` bytes or of more than
            `MAX_MANIFEST_VALUES` JSON values, naming which and the bound; both told
            at the cost of the text's length, before anything of it is read.
    """
    size = len(text) if isinstance(text, bytes) else _utf8_size(text)
    if size > MAX_MANIFEST_TEXT:
        why = (f"is {size} bytes of text; a manifest's file is at most {MAX_MANIFEST_TEXT} "
               f"bytes (and its JSON at most {MAX_MANIFEST_BYTES})")
        raise ManifestInvalid(f"$: {why}", problems=[("$", why)])
    try:
        refuse_many_values(text, MAX_MANIFEST_VALUES, "a manifest")
    except TooManyValues as exc:
        raise ManifestInvalid(f"$: {exc}", problems=[("$", str(exc))]) from None


def loads_manifest(text: str | bytes) -> Any:
    """Parse a manifest's JSON text.

    Raises:
        ManifestInvalid: longer than `MAX_MANIFEST_TEXT` or of more than
            `MAX_MANIFEST_VALUES` values (told before it is read,
            `refuse_unreadable_manifest`), nested too deeply to parse (never
            `RecursionError`), or an object names a key twice (the review would show
            one of its values).
        ValueError: not JSON at all.
    """
    refuse_unreadable_manifest(text)
    try:
        return loads_unique(text)
    except DuplicateKey as exc:
        raise ManifestInvalid(f"$: {exc}", problems=[("$", str(exc))]) from None
    except RecursionError:
        raise ManifestInvalid(
            "$: nested too deeply to read",
            problems=[("$", f"nested too deeply to read (at most {MAX_DEPTH} levels)")]
        ) from None


def package_name_problem(name: Any) -> str | None:
    """What makes ``name`` no package name (SPEC §2's pattern), or None.

    A manifest's ``$.name`` is checked at install; this checks the name a package
    is offered under, so nothing is stored under a name no manifest can carry
    (None was stored as NULL and broke every later sort of the names).
    """
    if not isinstance(name, str):
        return f"a package name is text, not {type(name).__name__}"
    if not _NAME.fullmatch(name):
        return f"{_shown(name)} {_NOT_A_NAME}"
    return None


def parse_manifest(raw: object) -> Manifest:
    """Validate a manifest, listing every problem with its JSON path.

    Raises:
        ManifestInvalid: with ``problems``; nothing is installed.
    """
    if not isinstance(raw, dict):
        raise ManifestInvalid("$: the manifest must be a JSON object",
                              problems=[("$", "the manifest must be a JSON object")])
    # Nothing else is looked at before this: the rest of validation walks the value.
    require_json(raw)
    problems: list[tuple[str, str]] = []
    manifest: Manifest | None = None
    tools = _tools(raw, problems)
    try:
        # Lists become tuples: strict mode wants the exact type, so convert
        # JSON arrays first and let pydantic check everything else strictly.
        # Tools were checked above, entry by entry; pydantic gets their names.
        model_input = _tuples(raw)
        if tools is not None:
            model_input["tools"] = tuple(t.name for t in tools)
        manifest = Manifest.model_validate(model_input)
        if tools is not None:
            manifest._tools = tuple(tools)
    except ValidationError as exc:
        for err in exc.errors():
            loc = tuple(err["loc"])
            msg = err["msg"]
            if err["type"] == "missing" and loc == ("permissions",):
                msg = "the 'permissions' block is required (write {} for none)"
            elif err["type"] == "extra_forbidden":
                msg = f"unknown field {_shown(loc[-1])}"
            problems.append((json_path(loc), msg))
    problems += _semantic_problems(raw)
    # Keep each problem once, in a stable order.
    problems = sorted(set(problems))
    name = raw.get("name") if isinstance(raw.get("name"), str) else None
    if problems:
        text = "; ".join(f"{p}: {m}" for p, m in problems)
        raise ManifestInvalid(text, problems=problems, package=name)
    assert manifest is not None
    return manifest


def _tuples(value: Any) -> Any:
    if isinstance(value, list):
        return tuple(_tuples(v) for v in value)
    if isinstance(value, dict):
        return {k: _tuples(v) for k, v in value.items()}
    return value


def file_digests(files: dict[str, str | bytes]) -> dict[str, str]:
    """SHA-256 of each file's bytes, by path."""
    out = {}
    for path, content in files.items():
        data = content.encode() if isinstance(content, str) else content
        out[path] = hashlib.sha256(data).hexdigest()
    return out


def manifest_digest(raw: dict[str, Any]) -> str:
    """The digest of a manifest given as a value (not read from a file): its canonical JSON's."""
    return file_digests({"manifest.json": json.dumps(raw, sort_keys=True)})["manifest.json"]


def fold_manifest(given: dict[str, Any] | str | bytes, digests: dict[str, str], *,
                  package: str | None = None) -> tuple[dict[str, Any], dict[str, str]]:
    """A package's manifest as a value, and its file digests with the manifest's among them.

    The review hash is the hash of the review the person saw (SPEC §4.4): the
    ``manifest.json`` digest it covers is the one this function computes, never one
    taken on trust. A manifest given as its file's text (str or bytes, as a folder
    holds it) is hashed as those bytes, so re-offering an unchanged folder changes
    nothing; a manifest given as a value is hashed as its canonical JSON
    (`manifest_digest`). A ``manifest.json`` digest given beside it is not taken,
    whatever it is: the engine cannot tell the digest of the manifest's own file
    from that of another manifest, which would let a wider manifest carry the hash
    of the one a person reviewed. Replacing it, rather than refusing it, keeps
    callers that send a folder's digests beside its parsed manifest working: the
    package's hash then binds the manifest value (a package installed under the
    file's digest becomes pending once, and a person approves it again).

    Args:
        given: the manifest offered, as a value or as its file's text.
        digests: the files' digests by path, as given.
        package: the package's name, for the error.

    Returns:
        The manifest as a value, and a new mapping: ``digests`` with ``manifest.json``.

    Raises:
        ManifestInvalid: text that is not JSON, names a key twice, nests too deeply,
            or holds no JSON object; a manifest that is not plain JSON of bounded
            depth (`require_json`: checked before a value is hashed).
    """
    if isinstance(given, (str, bytes)):
        try:
            raw = loads_manifest(given)
        except ManifestInvalid:
            raise
        except ValueError as exc:  # not JSON at all (text that is not UTF-8 among it)
            raise ManifestInvalid(f"$: not JSON: {exc}", problems=[("$", f"not JSON: {exc}")],
                                  package=package) from None
        if not isinstance(raw, dict):
            raise ManifestInvalid("$: the manifest must be a JSON object",
                                  problems=[("$", "the manifest must be a JSON object")],
                                  package=package)
        require_json(raw, package=package)
        own = file_digests({"manifest.json": given})["manifest.json"]
    else:
        require_json(given, package=package)
        raw, own = given, manifest_digest(given)
    return raw, {**digests, "manifest.json": own}


#: The longest file path a package may hold, in characters.
MAX_FILE_PATH = 1024


def file_path_problem(path: str) -> str | None:
    """What is wrong with a package's file path, or None: a relative POSIX path of
    named segments (no ``/`` first, no ``\\``, no empty, ``.`` or ``..`` segment)
    holding no control or invisible character, at most `MAX_FILE_PATH` characters."""
    if not path:
        return "a file path is empty"
    if len(path) > MAX_FILE_PATH:
        return f"a file path is longer than {MAX_FILE_PATH} characters"
    found = control_characters(path)
    if found:
        return f"a file path holds {describe_character(found[0])}"
    if path.startswith("/") or "\\" in path:
        return "a file path must be relative and use / between its parts"
    if any(part in ("", ".", "..") for part in path.split("/")):
        return "a file path has an empty, '.' or '..' part"
    return None


def content_hash(digests: dict[str, str]) -> str:
    """The package's content hash: SHA-256 over its sorted paths and file digests.

    Hashing each file's digest rather than its bytes keeps the result the same
    as hashing the bytes themselves in order, for our purpose (any change to a
    path or a byte changes it), while letting an update that replaces some
    files be hashed without the bytes of the others.

    Raises:
        ManifestInvalid: a path is not a package file's (`file_path_problem`).
            Each entry is ``path NUL digest newline``: a path holding a NUL or a
            newline could spell out entries of its own, and two packages of
            different files (and manifests) would share one hash, so that the
            hash a person reviewed installs what they never saw.
    """
    problems = [(f"$.files[{json.dumps(path)}]", problem) for path in sorted(digests)
                if (problem := file_path_problem(path)) is not None]
    if problems:
        raise ManifestInvalid("; ".join(f"{where}: {what}" for where, what in problems[:5]),
                              problems=problems)
    h = hashlib.sha256()
    for path in sorted(digests):
        h.update(path.encode() + b"\0" + digests[path].encode() + b"\n")
    return "sha256:" + h.hexdigest()
