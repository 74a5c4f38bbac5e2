"""Card manifests as pydantic v2 models, their validation and content hash (SPEC §2)."""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .catalogue import PERMISSIONS
from .errors import ManifestInvalid
from .hosts import host_pattern_problem, normalise_host

__all__ = [
    "Manifest",
    "PermissionDecl",
    "Ports",
    "content_hash",
    "file_digests",
    "json_path",
    "load_package_folder",
    "parse_manifest",
]

_NAME = r"^[a-z0-9][a-z0-9-]*(\.[a-z0-9][a-z0-9-]*)*$"
_IDENT = r"^[A-Za-z_][A-Za-z0-9_.-]*$"


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


class Manifest(BaseModel):
    """A card package's ``manifest.json``."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)
    name: str = Field(pattern=_NAME, max_length=200)
    version: str = Field(min_length=1, max_length=100)
    permissions: dict[str, PermissionDecl]
    tools: tuple[str, ...] = ()
    ports: Ports = Ports()

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
        elif re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", str(part)):
            out += f".{part}"
        else:
            out += "[" + json.dumps(str(part)) + "]"
    return out


def _semantic_problems(raw: dict[str, Any]) -> list[tuple[str, str]]:
    """Problems pydantic's types cannot see: catalogue names, hosts, duplicates."""
    problems: list[tuple[str, str]] = []
    perms = raw.get("permissions")
    if isinstance(perms, dict):
        for name, decl in perms.items():
            path = ("permissions", name)
            if name not in PERMISSIONS:
                problems.append((json_path(path), f"unknown permission {name!r}"))
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
                        problem = host_pattern_problem(host)
                        if problem:
                            problems.append((json_path((*path, "hosts", i)),
                                             f"host pattern {host!r} {problem}"))
            elif hosts is not None:
                problems.append((json_path((*path, "hosts")), f"{name} takes no 'hosts'"))
    for key in ("tools",):
        values = raw.get(key)
        if isinstance(values, list):
            seen: set[str] = set()
            for i, value in enumerate(values):
                if isinstance(value, str) and not re.match(_IDENT, value):
                    problems.append((json_path((key, i)), f"{value!r} is not a valid tool name"))
                if value in seen:
                    problems.append((json_path((key, i)), f"{value!r} is listed twice"))
                if isinstance(value, str):
                    seen.add(value)
    ports = raw.get("ports")
    if isinstance(ports, dict):
        for side in ("inputs", "outputs"):
            values = ports.get(side)
            if isinstance(values, list):
                for i, value in enumerate(values):
                    if isinstance(value, str) and not re.match(_IDENT, value):
                        problems.append((json_path(("ports", side, i)),
                                         f"{value!r} is not a valid port name"))
                if len(set(map(str, values))) != len(values):
                    problems.append((json_path(("ports", side)), "a port is listed twice"))
    return problems


def parse_manifest(raw: object) -> Manifest:
    """Validate a manifest, listing every problem with its JSON path.

    Raises:
        ManifestInvalid: with ``problems``; nothing is installed.
    """
    if not isinstance(raw, dict):
        raise ManifestInvalid("MANIFEST_INVALID: $: the manifest must be a JSON object",
                              problems=[("$", "the manifest must be a JSON object")])
    problems: list[tuple[str, str]] = []
    manifest: Manifest | None = None
    try:
        # Lists become tuples: strict mode wants the exact type, so convert
        # JSON arrays first and let pydantic check everything else strictly.
        manifest = Manifest.model_validate(_tuples(raw))
    except ValidationError as exc:
        for err in exc.errors():
            loc = tuple(err["loc"])
            msg = err["msg"]
            if err["type"] == "missing" and loc == ("permissions",):
                msg = "the 'permissions' block is required (write {} for none)"
            elif err["type"] == "extra_forbidden":
                msg = f"unknown field {loc[-1]!r}"
            problems.append((json_path(loc), msg))
    problems += _semantic_problems(raw)
    # Keep each problem once, in a stable order.
    problems = sorted(set(problems))
    name = raw.get("name") if isinstance(raw.get("name"), str) else None
    if problems:
        text = "; ".join(f"{p}: {m}" for p, m in problems)
        raise ManifestInvalid(f"MANIFEST_INVALID: {text}", problems=problems, package=name)
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


def content_hash(digests: dict[str, str]) -> str:
    """The package's content hash: SHA-256 over its sorted paths and file digests.

    Hashing each file's digest rather than its bytes keeps the result the same
    as hashing the bytes themselves in order, for our purpose (any change to a
    path or a byte changes it), while letting an update that replaces some
    files be hashed without the bytes of the others.
    """
    h = hashlib.sha256()
    for path in sorted(digests):
        h.update(path.encode() + b"\0" + digests[path].encode() + b"\n")
    return "sha256:" + h.hexdigest()


def load_package_folder(folder: str | Path) -> tuple[dict[str, Any], dict[str, str]]:
    """Read a package folder: its raw manifest and the digests of every file.

    Raises:
        ManifestInvalid: there is no readable ``manifest.json``.
    """
    root = Path(folder)
    try:
        raw = json.loads((root / "manifest.json").read_text())
    except (OSError, ValueError) as exc:
        raise ManifestInvalid(f"MANIFEST_INVALID: $: cannot read {root / 'manifest.json'}: {exc}",
                              problems=[("$", f"cannot read manifest.json: {exc}")]) from exc
    files: dict[str, str | bytes] = {}
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames.sort()
        for name in sorted(filenames):
            full = Path(dirpath) / name
            files[full.relative_to(root).as_posix()] = full.read_bytes()
    return raw, file_digests(files)
