"""Consent operations (SPEC §4, §1): workspaces, nodes, arrows, packages, grants, secrets.

Only an operator gives consent; narrowing (revoke, removing arrows and
nodes) is also accepted from agents and cards on the canvas. Every attempt,
accepted or refused, goes into the consent history.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from pathlib import Path
from typing import TYPE_CHECKING, Any

from canvas import (
    Arrow,
    CanvasError,
    Node,
    Workspace,
    WorkspaceSettings,
)

from .catalogue import PERMISSIONS
from .errors import (
    ApprovalRefused,
    ConsentError,
    InvalidRequest,
    ManifestInvalid,
    RequestRefused,
)
from .hosts import matches
from .limits import rate_owner
from .manifest import Manifest, content_hash, parse_manifest, require_json
from .principal import OPERATOR, Principal
from .review import Diff, Review, diff_manifests, install_review
from .state import PackageState
from .vault import SecretVault

if TYPE_CHECKING:
    from .engine import Engine, Update

from .events import Update
from .transactions import consistent

__all__ = ["ConsentMixin"]


class ConsentMixin:
    """Changes of consent and of the canvas."""

    def _history(self: Engine, principal: Principal, action: str, subject: dict[str, Any], *,
                 accepted: bool = True, code: str | None = None, reason: str | None = None,
                 detail: str = "") -> None:
        self.history.record(self.now(), str(principal), action, subject, accepted=accepted,
                            code=code, reason=reason, detail=detail)

    def _refuse(self: Engine, principal: Principal, action: str, subject: dict[str, Any],
                error: ConsentError) -> ConsentError:
        """Record a refused consent attempt durably, and return the error to raise."""
        with self._write():
            self._history(principal, action, subject, accepted=False, code=error.code,
                          reason=error.reason, detail=error.message)
        return error

    def _require_operator(self: Engine, by: object, action: str, subject: dict[str, Any]) -> Principal:
        principal = Principal.parse(by)
        if not principal.is_operator:
            reason = principal.refusal_reason()
            raise self._refuse(principal, action, subject, ApprovalRefused(
                f"APPROVAL_REFUSED: {action} needs a person (operator), not {principal.raw!r}: "
                f"{reason}", reason=reason, package=subject.get("package")))
        return principal

    def _require_narrowing_principal(self: Engine, by: object, action: str, subject: dict[str, Any],
                                     workspaces: str | Collection[str]) -> Principal:
        """Operators, and agents or cards on the canvas of what is narrowed, may narrow consent.

        ``workspaces``: the canvas (or canvases) the narrowed thing belongs to;
        an agent or card elsewhere is refused like an unknown principal (SPEC §4.5).
        """
        principal = Principal.parse(by)
        if principal.is_operator:
            return principal
        own = {workspaces} if isinstance(workspaces, str) else workspaces
        if principal.kind in ("agent", "card") and principal.node:
            node = self.state.canvas.node(principal.node)
            if node is not None and node.type == ("card" if principal.kind == "card"
                                                  else "agent") and node.workspace in own:
                return principal
        raise self._refuse(principal, action, subject, ApprovalRefused(
            f"APPROVAL_REFUSED: {action} from {principal.raw!r}, which is not on this canvas: "
            "unknown-principal", reason="unknown-principal", package=subject.get("package")))

    def _package_canvases(self: Engine, package: str) -> set[str]:
        """The workspaces where a card of ``package`` sits: the package's own canvases."""
        return {n.workspace for n in self._cards_of(package)}

    def _secret_canvases(self: Engine, name: str) -> set[str]:
        """The workspaces whose cards may use secret ``name``: a card of them declares its host.

        A secret belongs to the app, not to a canvas; the canvases it serves are
        those where a card may fetch from its host (and so fill it in).
        """
        found = self.secrets.lookup(name)
        if found is None:
            return set()
        host = found[0]
        own: set[str] = set()
        for card in self.state.canvas.nodes(type="card"):
            pkg = self.state.packages.get(card.data.get("package") or "")
            if pkg is not None and pkg.manifest is not None and any(
                    matches(p, host) for p in pkg.manifest.hosts("network")):
                own.add(card.workspace)
        return own

    def _canvas_error(self: Engine, exc: CanvasError) -> InvalidRequest:
        return InvalidRequest(f"{exc.code}: {exc.message}", code=exc.code, reason=exc.reason)

    def _node(self: Engine, node_id: str, type: str | None = None) -> Node:
        """The node, which must exist (and be of ``type`` when given)."""
        node = self.state.canvas.node(node_id)
        if node is None:
            raise InvalidRequest(f"NOT_FOUND: no node {node_id!r}", code="NOT_FOUND",
                                 reason="missing-node")
        if type is not None and node.type != type:
            raise InvalidRequest(f"INVALID_ARGUMENT: {node_id} is not a {type}",
                                 code="INVALID_ARGUMENT", reason=type)
        return node

    def _package(self: Engine, name: str) -> PackageState:
        pkg = self.state.packages.get(name)
        if pkg is None:
            raise InvalidRequest(f"NOT_FOUND: no package {name!r} is known", code="NOT_FOUND",
                                 reason="missing-package", package=name)
        return pkg

    def _save_package(self: Engine, pkg: PackageState) -> None:
        self.state.bump()  # installed, pending or its manifest changed
        self.db.execute(
            "insert or replace into packages (name, state, manifest, digests, hash,"
            " pending_manifest, pending_digests, pending_hash) values (?, ?, ?, ?, ?, ?, ?, ?)",
            [pkg.name, "installed" if pkg.installed else "available", json.dumps(pkg.raw),
             json.dumps(pkg.digests), pkg.hash,
             json.dumps(pkg.pending_raw) if pkg.pending_raw is not None else None,
             json.dumps(pkg.pending_digests) if pkg.pending_digests is not None else None,
             pkg.pending_hash],
        )

    def _cards_of(self: Engine, package: str) -> list[Node]:
        return [n for n in self.state.canvas.nodes(type="card") if n.data["package"] == package]

    def _set_grants(self: Engine, package: str, permissions: set[str], principal: Principal) -> None:
        """Write the package's grants as exactly ``permissions``."""
        self.state.bump()
        now = self.now()
        self.db.execute("delete from grants where package = ?", [package])
        for perm in sorted(permissions):
            self.db.execute("insert into grants (package, permission, t, by) values (?, ?, ?, ?)",
                            [package, perm, now, str(principal)])
        before = self.state.grants.get(package, set())
        self.state.grants[package] = set(permissions)
        if before != permissions:
            for card in self._cards_of(package):
                self._emit("permissions.changed", card.id, package=package,
                           granted=sorted(permissions))

    async def open_workspace(self: Engine, workspace_id: str, folder: str | Path, *,
                             settings: dict[str, Any] | WorkspaceSettings | None = None,
                             by: object = OPERATOR) -> Workspace:
        """The workspace ``workspace_id``, created as `create_workspace` does if missing.

        Opening an existing workspace changes nothing (``settings`` are used only
        to create it; change them with `set_settings`), so a program that runs
        twice may call this every time.

        Raises:
            InvalidRequest: the workspace exists with another project folder, or
                (to create it) as `create_workspace`.
        """
        self._sync()
        ws = self.state.workspaces.get(workspace_id)
        if ws is None:
            return await self.create_workspace(workspace_id, folder, settings=settings, by=by)
        if Path(ws.folder) != Path(folder):
            raise InvalidRequest(f"INVALID_ARGUMENT: workspace {workspace_id!r} exists with the "
                                 f"project folder {ws.folder!r}, not {str(folder)!r}",
                                 code="INVALID_ARGUMENT", reason="folder")
        return ws

    @consistent
    async def create_workspace(self: Engine, workspace_id: str, folder: str | Path, *,
                               settings: dict[str, Any] | WorkspaceSettings | None = None,
                               by: object = OPERATOR) -> Workspace:
        """Create a workspace with its project folder and settings.

        Raises:
            InvalidRequest: the id is taken (use `open_workspace` to open or
                create), or the folder is not an absolute path of an existing
                folder (reason ``folder``).
        """
        self._tick()
        subject = {"workspace": workspace_id}
        principal = self._require_operator(by, "workspace.create", subject)
        self._check_new_workspace(workspace_id, folder)
        try:
            ws_settings = settings if isinstance(settings, WorkspaceSettings) else \
                WorkspaceSettings.from_dict(settings or {})
        except CanvasError as exc:
            raise self._canvas_error(exc) from exc
        ws = Workspace(workspace_id, str(folder), ws_settings)
        with self._write():
            self._put_workspace(ws, principal, "workspace.create", subject)
        return ws

    def _check_new_workspace(self: Engine, workspace_id: str, folder: str | Path) -> None:
        """Raise InvalidRequest unless the id is free and the folder absolute."""
        if workspace_id in self.state.workspaces:
            raise InvalidRequest(f"INVALID_ARGUMENT: workspace {workspace_id!r} exists",
                                 code="INVALID_ARGUMENT", reason="workspace")
        if not Path(folder).is_absolute():
            raise InvalidRequest(f"INVALID_ARGUMENT: the project folder {str(folder)!r} must be "
                                 "an absolute path", code="INVALID_ARGUMENT", reason="folder")
        if not Path(folder).is_dir():
            # A typo must not become a workspace whose every file call fails later.
            raise InvalidRequest(f"INVALID_ARGUMENT: the project folder {str(folder)!r} does "
                                 "not exist (or is not a folder)", code="INVALID_ARGUMENT",
                                 reason="folder")

    def _workspace(self: Engine, workspace_id: str) -> Workspace:
        """The workspace, which must exist."""
        ws = self.state.workspaces.get(workspace_id)
        if ws is None:
            raise InvalidRequest(f"NOT_FOUND: no workspace {workspace_id!r}", code="NOT_FOUND")
        return ws

    def _put_workspace(self: Engine, ws: Workspace, principal: Principal, action: str,
                       subject: dict[str, Any]) -> None:
        """Save a workspace (inside a write) and forget decisions its settings fed."""
        self._canvas_store.save_workspace(ws)
        self.state.bump()
        self._history(principal, action, subject)
        self.state.workspaces[ws.id] = ws

    @consistent
    async def set_settings(self: Engine, workspace_id: str, changes: dict[str, Any], *,
                           by: object = OPERATOR) -> WorkspaceSettings:
        """Change a workspace's settings (operator only)."""
        self._tick()
        subject = {"workspace": workspace_id, "settings": changes}
        principal = self._require_operator(by, "settings.change", subject)
        ws = self._workspace(workspace_id)
        try:
            settings = WorkspaceSettings.from_dict({**ws.settings.to_dict(), **changes})
        except CanvasError as exc:
            raise self._canvas_error(exc) from exc
        new = Workspace(ws.id, ws.folder, settings)
        with self._write():
            self._put_workspace(new, principal, "settings.change", subject)
            if new.settings.budget != ws.settings.budget:
                self._limiters.pop(ws.id, None)
        return settings

    @consistent
    async def add_node(self: Engine, node: dict[str, Any], *, workspace: str,
                       by: object = OPERATOR) -> Node:
        """Put a node on a workspace's canvas (operator only)."""
        self._tick()
        subject = {"workspace": workspace, "node": node.get("id")}
        principal = self._require_operator(by, "node.add", subject)
        self._workspace(workspace)
        try:
            built = Node.build(node, workspace)
            self.state.canvas.check_new_node(built)
        except CanvasError as exc:
            raise self._canvas_error(exc) from exc
        with self._write():
            self._save_node(built)
            self._history(principal, "node.add", subject)
            self.state.canvas.add_node(built)
            self._agents_changed(built, "added")
        return built

    def _agents_changed(self: Engine, node: Node, change: str) -> None:
        if node.type in ("agent", "terminal"):
            self._emit("agents.changed", None, agent=node.id, workspace=node.workspace,
                       kind=node.type, change=change)

    @consistent
    async def set_node(self: Engine, node_id: str, fields: dict[str, Any], *,
                       by: object = OPERATOR) -> Node:
        """Change fields of a node (operator only), e.g. ``{"dangerous": True}``."""
        self._tick()
        subject = {"node": node_id, "fields": fields}
        principal = self._require_operator(by, "node.set", subject)
        try:
            updated = self.state.canvas.updated_node(node_id, fields)
        except CanvasError as exc:
            raise self._canvas_error(exc) from exc
        with self._write():
            self._save_node(updated)
            self._history(principal, "node.set", subject)
            self.state.canvas.replace_node(updated)
            self._agents_changed(updated, "updated")
            self._revalidate()
            await self._pump_all()
        return updated

    @consistent
    async def remove_node(self: Engine, node_id: str, *, by: object = OPERATOR) -> None:
        """Remove a node and its arrows; prompts queued or held on them are cancelled."""
        self._tick()
        node = self._node(node_id)
        subject = {"node": node_id}
        principal = self._require_narrowing_principal(by, "node.remove", subject, node.workspace)
        with self._write():
            owner = rate_owner(self.state.canvas, node_id)
            copies = [n for n in self.state.canvas.nodes(node.workspace, type="card")
                      if n.data.get("spawned_by") == node_id]
            self._canvas_store.delete_node(node_id)
            self._history(principal, "node.remove", subject)
            self.state.canvas.remove_node(node_id)
            for copy in copies:
                # Its copies now lead straight to the root of the spawn tree,
                # whose windows they go on sharing (SPEC §6).
                moved = Node(copy.id, copy.type, copy.workspace,
                             {**copy.data, "spawned_by": owner})
                self._save_node(moved)
                self.state.canvas.replace_node(moved)
            if not copies and owner == node_id:
                # In the store too: a reload (restart, another process) must not
                # hand a removed card's windows to a new node with its id. A
                # root whose copies live on keeps them: they are theirs too.
                self.db.execute("delete from rate_events where card = ?", [node_id])
                self.state.counters.forget(node_id)
            self._agents_changed(node, "removed")
            self._revalidate()
            await self._pump_all()

    @consistent
    async def add_arrow(self: Engine, arrow: dict[str, Any], *, by: object = OPERATOR) -> Arrow:
        """Draw an arrow (operator only). Invalid arrows raise INVALID_ARROW and change nothing."""
        self._tick()
        subject = {"arrow": arrow.get("id"), "from": arrow.get("from"), "to": arrow.get("to")}
        principal = self._require_operator(by, "arrow.add", subject)
        try:
            checked = self.state.canvas.check_arrow(arrow)
        except CanvasError as exc:
            raise self._refuse(principal, "arrow.add", subject, self._canvas_error(exc)) from exc
        with self._write():
            self._canvas_store.save_arrow(checked)
            self._history(principal, "arrow.add", subject)
            self.state.canvas.add_arrow(checked)
        return checked

    @consistent
    async def remove_arrow(self: Engine, arrow_id: str, *, by: object = OPERATOR) -> None:
        """Remove an arrow; prompts queued or held on it are cancelled (not-connected)."""
        self._tick()
        arrow = self.state.canvas.arrow(arrow_id)
        if arrow is None:
            raise InvalidRequest(f"INVALID_ARROW: no arrow {arrow_id!r}", code="INVALID_ARROW",
                                 reason="missing-arrow")
        subject = {"arrow": arrow_id}
        principal = self._require_narrowing_principal(by, "arrow.remove", subject,
                                                      arrow.workspace)
        with self._write():
            self._canvas_store.delete_arrow(arrow_id)
            self._history(principal, "arrow.remove", subject)
            self.state.canvas.remove_arrow(arrow_id)
            self._revalidate()

    @consistent
    async def offer(self: Engine, name: str, manifest: dict[str, Any], digests: dict[str, str]) -> None:
        """Make a package available to install (its manifest is validated at install).

        Raises:
            ManifestInvalid: the manifest is not plain JSON of bounded depth.
        """
        self._tick()
        require_json(manifest, package=name)
        existing = self.state.packages.get(name)
        if existing is not None and existing.installed:
            raise InvalidRequest(f"INVALID_ARGUMENT: {name} is installed; send an update",
                                 code="INVALID_ARGUMENT", reason="installed", package=name)
        pkg = PackageState(name, False, manifest, dict(digests), content_hash(digests))
        with self._write():
            self._save_package(pkg)
            self.state.packages[name] = pkg

    @consistent
    async def remove_package(self: Engine, name: str, *, by: object = OPERATOR) -> None:
        """Withdraw an offered package that was never installed (operator only).

        The package leaves the list of packages one could install; the removal
        is recorded in the consent history with the content hash it had. Cards
        of it on a canvas stay where they are and stay refused (its package is
        not installed), as they were before; offering the package again makes
        it installable again.

        An installed package is refused, not uninstalled: its grants are
        consent a person gave, and taking them back is `revoke`, one
        permission at a time, with each card told (SPEC §4.3). The engine has
        no uninstall.

        Raises:
            ApprovalRefused: not from an operator (recorded).
            InvalidRequest: ``NOT_FOUND`` for an unknown package; ``installed``
                for an installed package (recorded); nothing changes.
        """
        self._tick()
        subject = {"package": name}
        principal = self._require_operator(by, "package.remove", subject)
        pkg = self._package(name)
        if pkg.installed:
            raise self._refuse(principal, "package.remove", subject, InvalidRequest(
                f"INVALID_ARGUMENT: {name} is installed; only an offered package can be "
                "removed (revoke its permissions instead)", code="INVALID_ARGUMENT",
                reason="installed", package=name))
        with self._write():
            self.state.bump()  # what may be installed changed
            self.db.execute("delete from packages where name = ?", [name])
            self._history(principal, "package.remove", {**subject, "hash": pkg.hash})
            del self.state.packages[name]

    def _parse_for(self: Engine, pkg_name: str, raw: dict[str, Any]) -> Manifest:
        manifest = parse_manifest(raw)
        if manifest.name != pkg_name:
            raise ManifestInvalid(
                f"MANIFEST_INVALID: $.name: {manifest.name!r} is not the package {pkg_name!r}",
                problems=[("$.name", f"{manifest.name!r} is not the package {pkg_name!r}")],
                package=pkg_name)
        return manifest

    @consistent
    async def review(self: Engine, name: str) -> Review:
        """The install review of an offered package; installs nothing."""
        self._tick()
        pkg = self._package(name)
        raw, digests = (pkg.pending_raw, pkg.pending_digests) if pkg.is_pending else \
            (pkg.raw, pkg.digests)
        assert raw is not None and digests is not None
        return install_review(self._parse_for(name, raw), content_hash(digests))

    @consistent
    async def install(self: Engine, name: str, *, grant: str | list[str] = "required",
                      accept: bool = True, by: object = OPERATOR) -> Review:
        """Show the review and take the person's answer: all required permissions, or nothing.

        Args:
            grant: ``"required"``, ``"all"`` (optional ones too) or a list that
                must hold every required permission.
            accept: False declines; nothing is installed.

        Raises:
            ApprovalRefused: not from an operator, or a grant the manifest lacks.
            ManifestInvalid: the manifest fails validation.
        """
        self._tick()
        subject = {"package": name}
        principal = self._require_operator(by, "install", subject)
        pkg = self._package(name)
        if pkg.installed:
            raise InvalidRequest(f"INVALID_ARGUMENT: {name} is installed already",
                                 code="INVALID_ARGUMENT", reason="installed", package=name)
        try:
            manifest = self._parse_for(name, pkg.raw)
        except ManifestInvalid as exc:
            raise self._refuse(principal, "install", subject, exc) from exc
        review = install_review(manifest, pkg.hash)
        if not accept:
            with self._write():
                self._history(principal, "install", subject, accepted=True, detail="declined")
            return review
        if grant == "required":
            chosen = set(manifest.required)
        elif grant == "all":
            chosen = set(manifest.permissions)
        elif isinstance(grant, list) and all(isinstance(g, str) for g in grant):
            chosen = set(grant)
            undeclared = sorted(chosen - set(manifest.permissions))
            if undeclared:
                raise self._refuse(principal, "install", subject, ApprovalRefused(
                    f"APPROVAL_REFUSED: {name} does not declare {undeclared[0]}: undeclared",
                    reason="undeclared", permission=undeclared[0], package=name))
            missing = sorted(manifest.required - chosen)
            if missing:
                raise InvalidRequest(
                    f"INVALID_ARGUMENT: required permissions are all or nothing; "
                    f"{', '.join(missing)} not accepted, so {name} is not installed",
                    code="INVALID_ARGUMENT", reason="grant", package=name)
        else:
            raise InvalidRequest("INVALID_ARGUMENT: grant must be 'required', 'all' or a list "
                                 "of permission names", code="INVALID_ARGUMENT", reason="grant")
        with self._write():
            pkg.installed, pkg.manifest = True, manifest
            self._save_package(pkg)
            self._set_grants(name, chosen, principal)
            self._history(principal, "install", {**subject, "hash": pkg.hash,
                                                  "granted": sorted(chosen)})
        return review

    @consistent
    async def grant(self: Engine, package: str, permission: str, *, by: object = OPERATOR) -> None:
        """Grant one declared permission (e.g. an optional one, from settings)."""
        self._tick()
        subject = {"package": package, "permission": permission}
        principal = self._require_operator(by, "grant", subject)
        pkg = self._installed(package)
        assert pkg.manifest is not None
        if permission not in pkg.manifest.permissions:
            raise self._refuse(principal, "grant", subject, ApprovalRefused(
                f"APPROVAL_REFUSED: {package} does not declare {permission}: undeclared",
                reason="undeclared", permission=permission, package=package))
        with self._write():
            self._set_grants(package, self.state.grants.get(package, set()) | {permission},
                             principal)
            self._history(principal, "grant", subject)

    def _installed(self: Engine, package: str) -> PackageState:
        pkg = self._package(package)
        if not pkg.installed:
            raise InvalidRequest(f"PACKAGE_NOT_INSTALLED: {package} is not installed",
                                 code="PACKAGE_NOT_INSTALLED", package=package)
        if pkg.is_pending:
            raise InvalidRequest(f"PACKAGE_PENDING: {package} waits for approval of its "
                                 "new version", code="PACKAGE_PENDING", package=package)
        return pkg

    @consistent
    async def revoke(self: Engine, package: str, permission: str, *, by: object = OPERATOR) -> None:
        """Revoke a permission: calls fail from now, queued and held prompts are cancelled."""
        self._tick()
        subject = {"package": package, "permission": permission}
        principal = self._require_narrowing_principal(by, "revoke", subject,
                                                      self._package_canvases(package))
        self._package(package)
        if permission not in PERMISSIONS:
            raise InvalidRequest(f"INVALID_ARGUMENT: no permission {permission!r}",
                                 code="INVALID_ARGUMENT", reason="permission")
        with self._write():
            self._set_grants(package, self.state.grants.get(package, set()) - {permission},
                             principal)
            self._history(principal, "revoke", subject)
            self._revalidate()

    @consistent
    async def request(self: Engine, card: str, permission: str, *, answer: bool,
                      by: object = OPERATOR) -> bool:
        """A card asks for an optional permission; ``by`` answers. Returns whether granted.

        Raises:
            RequestRefused: the card is not on screen (``not-visible``) or the
                permission is not declared optional (``not-optional``).
            ApprovalRefused: the answer does not come from an operator.
        """
        self._tick()
        node = self.state.canvas.node(card)
        if node is None or node.type != "card":
            raise InvalidRequest(f"CARD_UNKNOWN: no custom card {card!r}", code="CARD_UNKNOWN",
                                 card=card)
        pkg = self._installed(node.data["package"])
        assert pkg.manifest is not None
        subject = {"package": pkg.name, "card": card, "permission": permission}
        asker = Principal("card", card, f"card:{card}")
        if not node.data.get("visible"):
            raise self._refuse(asker, "request", subject, RequestRefused(
                f"REQUEST_REFUSED: card {card} may ask for {permission} only while it is on "
                "screen: not-visible", reason="not-visible", permission=permission, card=card,
                package=pkg.name))
        decl = pkg.manifest.permissions.get(permission)
        if decl is None or not decl.optional:
            raise self._refuse(asker, "request", subject, RequestRefused(
                f"REQUEST_REFUSED: {pkg.name} does not declare {permission} as optional: "
                "not-optional", reason="not-optional", permission=permission, card=card,
                package=pkg.name))
        principal = self._require_operator(by, "request", subject)
        with self._write():
            if answer:
                self._set_grants(pkg.name, self.state.grants.get(pkg.name, set()) | {permission},
                                 principal)
            self._history(principal, "request", subject, detail="allow" if answer else "deny")
            self._emit("permissions.request", card, permission=permission, granted=answer)
        return answer

    def pending_update(self: Engine, package: str) -> Update | None:
        """A package's version waiting for approval, with its diff; None when there is none."""
        self._sync()
        pkg = self.state.packages.get(package)
        if pkg is None or not pkg.is_pending or pkg.manifest is None or pkg.pending is None:
            return None
        assert pkg.pending_hash is not None
        return Update(package, pkg.pending_hash, diff_manifests(pkg.manifest, pkg.pending))

    @consistent
    async def update(self: Engine, package: str, *, manifest: dict[str, Any] | None = None,
                     digests: dict[str, str] | None = None) -> Update:
        """New files and/or a new manifest arrived: the package is pending until approved.

        ``digests`` are merged into the package's files. Narrowing applies at
        once: permissions the new manifest drops are revoked now.

        Raises:
            ManifestInvalid: the new manifest fails validation; nothing changes.
        """
        self._tick()
        pkg = self._package(package)
        if not pkg.installed:
            raise InvalidRequest(f"PACKAGE_NOT_INSTALLED: {package} is not installed; offer it",
                                 code="PACKAGE_NOT_INSTALLED", package=package)
        assert pkg.manifest is not None
        base_raw = pkg.pending_raw if pkg.is_pending else pkg.raw
        base_digests = pkg.pending_digests if pkg.is_pending else pkg.digests
        assert base_raw is not None and base_digests is not None
        new_raw = manifest if manifest is not None else base_raw
        new_manifest = self._parse_for(package, new_raw)
        new_digests = {**base_digests, **(digests or {})}
        if manifest is not None:
            new_digests["manifest.json"] = _digest_json(manifest)
        new_hash = content_hash(new_digests)
        diff = diff_manifests(pkg.manifest, new_manifest)
        with self._write():
            if new_hash == pkg.hash:
                pkg.pending_raw = pkg.pending_digests = pkg.pending_hash = None
                pkg.pending = None
            else:
                pkg.pending_raw, pkg.pending_digests = new_raw, new_digests
                pkg.pending_hash, pkg.pending = new_hash, new_manifest
            self._save_package(pkg)
            dropped = self.state.grants.get(package, set()) - set(new_manifest.permissions)
            if dropped:
                self._set_grants(package, self.state.grants.get(package, set()) - dropped,
                                 Principal("unknown", None, "update"))
            self._history(Principal("unknown", None, "update"), "update",
                          {"package": package, "hash": new_hash},
                          detail="; ".join(diff.lines))
            self._revalidate()
        return Update(package, new_hash, diff)

    @consistent
    async def approve(self: Engine, package: str, *, review_hash: str,
                      by: object = OPERATOR) -> Diff:
        """Approve the pending version whose review (``review_hash``) the person saw.

        Widened permissions become granted; the grant holds for the new hash.

        Raises:
            ApprovalRefused: not an operator, or ``stale`` when the pending
                version is no longer the one reviewed.
        """
        self._tick()
        subject = {"package": package, "hash": review_hash}
        principal = self._require_operator(by, "approve", subject)
        pkg = self._package(package)
        if not pkg.is_pending:
            raise InvalidRequest(f"NOT_FOUND: {package} has no version waiting for approval",
                                 code="NOT_FOUND", reason="nothing-pending", package=package)
        if review_hash != pkg.pending_hash:
            raise self._refuse(principal, "approve", subject, ApprovalRefused(
                f"APPROVAL_REFUSED: the review you approved ({review_hash[:19]}…) is not the "
                f"pending version of {package}: stale — review it again",
                reason="stale", package=package))
        assert pkg.manifest is not None and pkg.pending is not None
        diff = diff_manifests(pkg.manifest, pkg.pending)
        new = pkg.pending
        kept = self.state.grants.get(package, set()) & set(new.permissions)
        granted = kept | set(new.required)
        with self._write():
            assert pkg.pending_raw is not None and pkg.pending_digests is not None
            pkg.raw, pkg.digests, pkg.hash, pkg.manifest = (
                pkg.pending_raw, pkg.pending_digests, review_hash, new)
            pkg.pending_raw = pkg.pending_digests = pkg.pending_hash = None
            pkg.pending = None
            self._save_package(pkg)
            self._set_grants(package, granted, principal)
            self._history(principal, "approve", subject, detail="; ".join(diff.lines))
            self._revalidate()
            await self._pump_all()
        return diff

    @consistent
    async def set_secret(self: Engine, name: str, host: str, value: str, *,
                         by: object = OPERATOR) -> None:
        """Store a secret for exactly one host (operator only); cards fill it by placeholder."""
        self._tick()
        subject = {"secret": name, "host": host}
        principal = self._require_operator(by, "secret.set", subject)
        problem = SecretVault.problem(name, host)
        if problem:
            raise InvalidRequest(f"INVALID_ARGUMENT: {problem}", code="INVALID_ARGUMENT",
                                 reason="secret")
        with self._write():
            self.secrets.put(name, host, value, self.now())
            self._history(principal, "secret.set", subject)

    @consistent
    async def delete_secret(self: Engine, name: str, *, by: object = OPERATOR) -> None:
        """Remove a secret (narrowing: operators, or agents and cards on a canvas)."""
        self._tick()
        subject = {"secret": name}
        principal = self._require_narrowing_principal(by, "secret.delete", subject,
                                                      self._secret_canvases(name))
        with self._write():
            self.secrets.delete(name)
            self._history(principal, "secret.delete", subject)

    def secret_is_set(self: Engine, name: str) -> bool:
        """Whether a secret is set: all a card may learn about it."""
        return self.secrets.is_set(name)


def _digest_json(manifest: dict[str, Any]) -> str:
    import hashlib

    return hashlib.sha256(json.dumps(manifest, sort_keys=True).encode()).hexdigest()
