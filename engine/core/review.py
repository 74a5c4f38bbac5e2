"""The install review (SPEC §4.1) and the update diff (SPEC §4.4)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from engine.core.catalogue import PERMISSIONS, RISK_ORDER
from engine.core.hosts import covers
from engine.core.manifest import Manifest
from engine.core.text import visible

__all__ = ["Diff", "Review", "diff_hosts", "diff_manifests", "install_review", "newly_required",
           "permission_title"]


@dataclass(frozen=True, slots=True)
class Review:
    """What a person is shown before installing a package."""

    package: str
    version: str
    content_hash: str
    high: tuple[str, ...]
    medium: tuple[str, ...]
    low: tuple[str, ...]
    optional: tuple[str, ...]
    tools: tuple[str, ...]
    inputs: int
    outputs: int
    lines: tuple[str, ...] = field(default=())  #: the review as text, line by line

    def to_json(self) -> dict[str, Any]:
        """The review's JSON form (the shape replay cases match)."""
        return {
            "package": self.package,
            "version": self.version,
            "hash": self.content_hash,
            "high": list(self.high),
            "medium": list(self.medium),
            "low": list(self.low),
            "optional": list(self.optional),
            "tools": list(self.tools),
            "ports": {"inputs": self.inputs, "outputs": self.outputs},
        }

    @property
    def text(self) -> str:
        """The review as a person reads it."""
        return "\n".join(self.lines)


def permission_title(manifest: Manifest, name: str) -> str:
    """The first line a person sees for a permission, with this manifest's hosts in it."""
    perm = PERMISSIONS[name]
    if perm.needs_hosts:
        return perm.title.format(hosts=", ".join(manifest.hosts(name)))
    return perm.title


def _describe(manifest: Manifest, name: str) -> str:
    perm = PERMISSIONS[name]
    return f"  {name} ({perm.risk}) — {permission_title(manifest, name)} {perm.users_see}"


def install_review(manifest: Manifest, content_hash: str) -> Review:
    """Build the review: required permissions high risk first, tools, ports, optional ones
    (high risk first too)."""
    by_risk: dict[str, list[str]] = {risk: [] for risk in RISK_ORDER}
    for name in manifest.required:
        by_risk[PERMISSIONS[name].risk].append(name)
    groups = {risk: tuple(sorted(names)) for risk, names in by_risk.items()}
    optional = tuple(sorted(manifest.optional))
    lines = [f"Install {manifest.name} {manifest.version} ({content_hash[:19]}…)?"]
    required = [n for risk in RISK_ORDER for n in groups[risk]]
    if required:
        lines.append("It will be able to:")
        lines += [_describe(manifest, n) for n in required]
    else:
        lines.append("It asks for no permissions: it can draw in its box and exchange nothing.")
    tools = manifest.tool_list
    if tools and not any(t.description for t in tools):
        lines.append("Tools it offers to connected agents: " + ", ".join(manifest.tools))
    elif tools:
        lines.append("Tools it offers to connected agents:")
        lines += [f"  {t.name} — {t.description}" if t.description else f"  {t.name}"
                  for t in tools]
    lines.append(f"Ports: {len(manifest.ports.inputs)} in, {len(manifest.ports.outputs)} out")
    if optional:
        # High risk first here too (SPEC §4.1): the person reads this list to learn
        # what the card may ask for at any moment. The JSON keeps it sorted by name.
        lines.append("It may ask later for:")
        lines += [_describe(manifest, n) for risk in RISK_ORDER for n in optional
                  if PERMISSIONS[n].risk == risk]
    # Validation refuses control characters in what a manifest says; shown
    # inert here too, so no text can restyle or hide the lines of a review.
    lines = [visible(line) for line in lines]
    return Review(
        manifest.name, manifest.version, content_hash, groups["high"], groups["medium"],
        groups["low"], optional, tuple(sorted(manifest.tools)),
        len(manifest.ports.inputs), len(manifest.ports.outputs), tuple(lines),
    )


@dataclass(frozen=True, slots=True)
class Diff:
    """How a new manifest's declarations differ from the approved one."""

    widened: tuple[str, ...] = ()
    narrowed: tuple[str, ...] = ()
    #: Tools and ports added or removed (``tools: +name``, ``ports: -output out``):
    #: not widening (SPEC §4.4; the approval of the new hash covers them), but what
    #: the person approving reads, so shown with the diff.
    changed: tuple[str, ...] = ()

    @property
    def lines(self) -> list[str]:
        """``widened: +agents.prompt`` / ``narrowed: -fs.write`` lines, then the tools
        and ports changed (``tools: +name``)."""
        return [visible(f"widened: {w}") for w in self.widened] + \
            [visible(f"narrowed: {n}") for n in self.narrowed] + \
            [visible(c) for c in self.changed]

    def to_json(self) -> dict[str, list[str]]:
        """``{"widened": [...], "narrowed": [...]}``, each sorted."""
        return {"widened": list(self.widened), "narrowed": list(self.narrowed)}


Hosts = Sequence[str] | Literal["any"]


def diff_hosts(permission: str, old: Hosts, new: Hosts) -> tuple[list[str], list[str]]:
    """Widened and narrowed entries for a host list.

    ``"any"`` is wider than every list, so it is never compared element by
    element: going to it is widening even when the list got shorter.
    """
    if old == "any" and new == "any":
        return [], []
    if new == "any":
        return [f"{permission}: -> any"], []
    if old == "any":
        return [], [f"{permission}: any -> " + ", ".join(sorted(new))]
    widened = [f"{permission}: +{h}" for h in new if not any(covers(o, h) for o in old)]
    narrowed = [f"{permission}: -{h}" for h in old if not any(covers(n, h) for n in new)]
    return widened, narrowed


def diff_manifests(old: Manifest, new: Manifest) -> Diff:
    """The widening and narrowing from ``old`` to ``new`` (SPEC §4.4)."""
    widened: list[str] = []
    narrowed: list[str] = []
    for name in new.permissions.keys() - old.permissions.keys():
        widened.append(f"+{name}")
        if PERMISSIONS[name].needs_hosts:
            # No old pattern covers any of them: each is a widening of its own, and a
            # person approving by this diff sees where the card may reach.
            widened += [f"{name}: +{h}" for h in new.hosts(name)]
    for name in old.permissions.keys() - new.permissions.keys():
        narrowed.append(f"-{name}")
    for name in old.permissions.keys() & new.permissions.keys():
        was, now = old.permissions[name], new.permissions[name]
        if was.optional and not now.optional:
            widened.append(f"{name}: optional -> required")
        elif now.optional and not was.optional:
            narrowed.append(f"{name}: required -> optional")
        if PERMISSIONS[name].needs_hosts:
            w, n = diff_hosts(name, old.hosts(name), new.hosts(name))
            widened += w
            narrowed += n
    return Diff(tuple(sorted(set(widened))), tuple(sorted(set(narrowed))),
                tuple(_tools_and_ports(old, new)))


def _tools_and_ports(old: Manifest, new: Manifest) -> list[str]:
    """The tools and ports ``new`` adds or removes, each a line: ``tools: +name``,
    ``ports: +input name``, ``ports: -output name``; in name order."""
    out = [f"tools: +{t}" for t in sorted(set(new.tools) - set(old.tools))]
    out += [f"tools: -{t}" for t in sorted(set(old.tools) - set(new.tools))]
    # A tool kept by name but described anew is another tool to the agent reading it.
    out += [f"tools: ~{t} (description or input changed)"
            for t in sorted(set(old.tools) & set(new.tools)) if old.tool(t) != new.tool(t)]
    for kind, was, now in (("input", old.ports.inputs, new.ports.inputs),
                           ("output", old.ports.outputs, new.ports.outputs)):
        out += [f"ports: +{kind} {p}" for p in sorted(set(now) - set(was))]
        out += [f"ports: -{kind} {p}" for p in sorted(set(was) - set(now))]
    return out


def newly_required(old: Manifest, new: Manifest) -> set[str]:
    """The permissions ``new`` requires that ``old`` did not: added, or optional made required.

    These are the widenings an update's approval grants (SPEC §4.4); a
    permission required by both stays granted or revoked as it was.
    """
    return {name for name in new.required
            if name not in old.permissions or old.permissions[name].optional}
