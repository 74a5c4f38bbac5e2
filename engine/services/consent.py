"""Consent operations (SPEC §4): packages, grants, updates, requests and secrets.

Only an operator gives consent; narrowing (revoke, deleting a secret) is
also accepted from agents and cards on the canvas. Every attempt, accepted
or refused, goes into the consent history.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine.core.catalogue import PERMISSIONS, implied_by
from engine.core.errors import (
    ApprovalRefused,
    CardUnknown,
    InvalidArgument,
    ManifestInvalid,
    NotFound,
    PackageNotInstalled,
    PackagePending,
    RequestRefused,
)
from engine.core.events import Update
from engine.core.hosts import matches
from engine.core.lookalike import lookalike
from engine.core.manifest import (
    Manifest,
    content_hash,
    fold_manifest,
    package_name_problem,
    parse_manifest,
)
from engine.core.principal import OPERATOR, Principal
from engine.core.review import Diff, Review, diff_manifests, install_review, newly_required
from engine.core.state import PackageState
from engine.core.text import is_unicode, named
from engine.effects.world import World
from engine.services.context import Context, operation
from engine.services.guard import Guard
from engine.services.nodes import Nodes
from engine.services.prompts import Prompts
from engine.services.tools import Tools
from engine.services.visibility import Visibility
from engine.store.vault import SecretVault

__all__ = ["Consent", "known_package", "manifest_for", "package_review"]


def _lookalike_text(name: str, other: str, where: str) -> str:
    """Why ``name`` is refused beside the package ``other``: a person cannot tell them apart."""
    return (f"{name!r} looks like the {where} package {other!r}: names that differ only in "
            "'.', '_', '-' or look-alike letters (rn/m, vv/w, cl/d, 1/l, 0/o) are one name to "
            "the person granting consent; offer the package under a name of its own")


class Consent:
    """Packages, their grants and updates, optional-permission requests and secrets."""

    def __init__(self, ctx: Context, guard: Guard, nodes: Nodes, prompts: Prompts,
                 tools: Tools, world: World, visibility: Visibility) -> None:
        self.ctx = ctx
        self.visibility = visibility
        self.world = world
        self.guard = guard
        self.nodes = nodes
        self.prompts = prompts
        self.tools = tools

    def _revalidate(self) -> None:
        """Cancel the prompts and tool calls a change made impossible (SPEC §4.3),
        and end the file watches of cards that lost ``fs.read``."""
        self.prompts.revalidate()
        self.tools.revalidate()
        self.world.narrowed(self.ctx.state)

    def _package_canvases(self, package: str) -> set[str]:
        """The workspaces where a card of ``package`` sits: the package's own canvases."""
        return {n.workspace for n in self.nodes.cards_of(package)}

    def _secret_canvases(self, name: str) -> set[str]:
        """The workspaces whose cards may use secret ``name``: a card of them declares its host.

        A secret belongs to the app, not to a canvas; the canvases it serves are
        those where a card may fetch from its host (and so fill it in).
        """
        found = self.ctx.secrets.lookup(name)
        if found is None:
            return set()
        host = found[0]
        own: set[str] = set()
        for card in self.ctx.state.canvas.nodes(type="card"):
            pkg = self.ctx.state.packages.get(card.data.get("package") or "")
            if pkg is not None and pkg.manifest is not None and any(
                    matches(p, host) for p in pkg.manifest.hosts("network")):
                own.add(card.workspace)
        return own

    def _package(self, name: str) -> PackageState:
        return known_package(self.ctx.state.packages, name)

    def _save_package(self, pkg: PackageState) -> None:
        self.ctx.state.bump()  # installed, pending or its manifest changed
        self.ctx.store.save_package(pkg)

    def _set_grants(self, package: str, permissions: set[str], principal: Principal) -> None:
        """Write the package's grants as exactly ``permissions``."""
        self.ctx.state.bump()
        now = self.ctx.now()
        self.ctx.store.set_grants(package, sorted(permissions), t=now, by=str(principal))
        before = self.ctx.state.grants.get(package, set())
        self.ctx.state.grants[package] = set(permissions)
        if before != permissions:
            for card in self.nodes.cards_of(package):
                self.ctx.emit("permissions.changed", card.id, package=package,
                           granted=sorted(permissions))

    @operation
    async def offer(self, name: str, manifest: dict[str, Any] | str | bytes,
                    digests: dict[str, str]) -> str:
        """Make a package available to install (its manifest is validated at install);
        returns the offer's content hash (what an install's ``review_hash`` names).

        The package's hash covers the manifest as well as ``digests``
        (`fold_manifest`), so an install bound to a review hash installs only
        the manifest that review showed. ``manifest`` is a value, or its file's
        text (a folder's ``manifest.json``): the engine computes its digest.

        Raises:
            InvalidArgument: ``name`` is not a package name (SPEC §2: text matching
                ``[a-z0-9][a-z0-9._-]{0,127}``), reason ``name``; nothing is stored.
            ManifestInvalid: the manifest is not plain JSON of bounded depth.
            InvalidArgument: reason ``lookalike``: a package offered or installed has a
                name a person cannot tell from ``name`` (`engine.core.lookalike`).
        """
        problem = package_name_problem(name)
        if problem:
            raise InvalidArgument(problem, reason="name")
        if not isinstance(digests, dict):
            raise InvalidArgument("digests are a mapping of file paths to digests",
                                  reason="digests")
        # Plain JSON of bounded depth (checked before it is hashed), digested here.
        manifest, digests = fold_manifest(manifest, digests, package=name)
        other = lookalike(name, self.ctx.state.packages)
        if other is not None:
            raise InvalidArgument(_lookalike_text(name, other, "offered or installed"),
                                  reason="lookalike", package=name)
        existing = self.ctx.state.packages.get(name)
        if existing is not None and existing.installed:
            raise InvalidArgument(f"{name} is installed; send an update",
                                  reason="installed", package=name)
        pkg = PackageState(name, False, manifest, digests, content_hash(digests))
        with self.ctx.write():
            self._save_package(pkg)
            self.ctx.state.packages[name] = pkg
        # Returned, not read back by the caller after its await: by then another
        # operation may have withdrawn it or offered another version under the name.
        return pkg.hash

    @operation
    async def remove_package(self, name: str, *, review_hash: str | None = None,
                             by: object = OPERATOR) -> None:
        """Withdraw an offered package that was never installed (operator only).

        ``review_hash``: the content hash of the offer the person saw; another
        version offered under the name since is refused as ``stale`` (recorded),
        checked in this operation, as an install is: the person removes what they
        were shown, never a version they were not.

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
        subject = {"package": name}
        principal = self.guard.require_operator(by, "package.remove", subject)
        pkg = self._package(name)
        if pkg.installed:
            raise self.guard.refuse(principal, "package.remove", subject, InvalidArgument(
                f"{name} is installed; only an offered package can be removed (revoke its "
                "permissions instead)", reason="installed", package=name))
        if review_hash is not None:
            _require_hash_text(review_hash, "review_hash")
            if review_hash != pkg.hash:
                raise self.guard.refuse(principal, "package.remove", subject, ApprovalRefused(
                    f"the offer you saw ({review_hash[:19]}…) is not the one offered now: "
                    "stale — look at it again", reason="stale", package=name))
        with self.ctx.write():
            self.ctx.state.bump()  # what may be installed changed
            self.ctx.store.delete_package(name)
            self.guard.history(principal, "package.remove", {**subject, "hash": pkg.hash})
            del self.ctx.state.packages[name]

    def _parse_for(self, pkg_name: str, raw: dict[str, Any]) -> Manifest:
        return manifest_for(pkg_name, raw)

    @operation
    async def review(self, name: str) -> Review:
        """The install review of an offered package; installs nothing."""
        return package_review(self.ctx.state.packages, name)

    @operation
    async def install(self, name: str, *, grant: str | list[str] = "required",
                      accept: bool = True, review_hash: str | None = None,
                      by: object = OPERATOR) -> Review:
        """Show the review and take the person's answer: all required permissions, or nothing.

        Args:
            grant: ``"required"``, ``"all"`` (optional ones too) or a list that
                must hold every required permission.
            accept: False declines; nothing is installed.
            review_hash: the content hash of the review the person saw; another
                package offered under the name since is refused as ``stale``
                (SPEC §4.4), checked in this operation so nothing comes between.

        Raises:
            ApprovalRefused: not from an operator, or a grant the manifest lacks.
            ManifestInvalid: the manifest fails validation.
        """
        subject = {"package": name}
        principal = self.guard.require_operator(by, "install", subject)
        pkg = self._package(name)
        if pkg.installed:
            raise InvalidArgument(f"{name} is installed already", reason="installed", package=name)
        # Offered beside it before look-alikes were refused at offer (or by an older
        # version on this store): the grant would go to a name the person reads as another.
        other = lookalike(name, (n for n, p in self.ctx.state.packages.items() if p.installed))
        if other is not None:
            raise self.guard.refuse(principal, "install", subject, InvalidArgument(
                _lookalike_text(name, other, "installed"), reason="lookalike", package=name))
        if review_hash is not None:
            _require_hash_text(review_hash, "review_hash")
        if accept and review_hash is not None and review_hash != pkg.hash:
            raise self.guard.refuse(principal, "install", subject, ApprovalRefused(
                f"the review you saw ({review_hash[:19]}…) is not the package offered "
                f"now: stale — review it again", reason="stale", package=name))
        try:
            manifest = self._parse_for(name, pkg.raw)
        except ManifestInvalid as exc:
            raise self.guard.refuse(principal, "install", subject, exc) from exc
        review = install_review(manifest, pkg.hash)
        if not accept:
            with self.ctx.write():
                self.guard.history(principal, "install", subject, accepted=True, detail="declined")
            return review
        if grant == "required":
            chosen = set(manifest.required)
        elif grant == "all":
            chosen = set(manifest.permissions)
        elif isinstance(grant, list) and all(isinstance(g, str) for g in grant):
            chosen = set(grant)
            undeclared = sorted(chosen - set(manifest.permissions))
            if undeclared:
                raise self.guard.refuse(principal, "install", subject, ApprovalRefused(
                    f"{name} does not declare {undeclared[0]}: undeclared",
                    reason="undeclared", permission=undeclared[0], package=name))
            missing = sorted(manifest.required - chosen)
            if missing:
                raise InvalidArgument(
                    "required permissions are all or nothing; "
                    f"{', '.join(missing)} not accepted, so {name} is not installed",
                    reason="grant", package=name)
        else:
            raise InvalidArgument("grant must be 'required', 'all' or a list "
                                  "of permission names", reason="grant")
        with self.ctx.write():
            pkg.installed = True
            pkg.set_manifest(manifest)
            self._save_package(pkg)
            self._set_grants(name, chosen, principal)
            self.guard.history(principal, "install", {**subject, "hash": pkg.hash,
                                                  "granted": sorted(chosen)})
        return review

    def _require_shown(self, principal: Principal, action: str, subject: dict[str, Any],
                       pkg: PackageState, review_hash: str | None) -> None:
        """Refuse an answer given for another version than the package's now (``stale``).

        ``review_hash`` is the content hash of the version the person was shown:
        what they granted is that version's declaration (its hosts, its text). A
        version approved since may declare the same permission wider, and the
        answer must not carry over to it (SPEC §4.4: a grant holds for one hash).
        None is an answer that names no version: SPEC §10.1 defines the grant body
        as ``{"permission"}`` alone, so a caller of that shape is answered for the
        version installed now; every door that shows a person a version (the CLI,
        the TUI) sends its hash.

        Raises:
            InvalidArgument: ``review_hash`` is not a hash's text; nothing is recorded.
            ApprovalRefused: ``stale`` (recorded), naming the version there is now.
        """
        if review_hash is None:
            return
        _require_hash_text(review_hash, "review_hash")
        if review_hash != pkg.hash:
            version = pkg.manifest.version if pkg.manifest is not None else "?"
            raise self.guard.refuse(principal, action, subject, ApprovalRefused(
                f"the version of {pkg.name} you answered for ({review_hash[:19]}…) is not "
                f"the one installed now, version {version} ({pkg.hash[:19]}…): stale — "
                "look at it again; nothing was granted", reason="stale", package=pkg.name))

    @operation
    async def grant(self, package: str, permission: str, *, review_hash: str | None = None,
                    by: object = OPERATOR) -> None:
        """Grant one declared permission (e.g. an optional one, from settings).

        Args:
            review_hash: the content hash of the version the person was shown
                (`_require_shown`); another version installed since is ``stale``.

        Raises:
            ApprovalRefused: not from an operator, ``stale``, or ``undeclared``.
            PackagePending: a new version waits for approval.
        """
        subject = {"package": package, "permission": permission}
        principal = self.guard.require_operator(by, "grant", subject)
        pkg = self._installed(package)
        assert pkg.manifest is not None
        self._require_shown(principal, "grant", subject, pkg, review_hash)
        if permission not in pkg.manifest.permissions:
            raise self.guard.refuse(principal, "grant", subject, ApprovalRefused(
                f"{package} does not declare {permission}: undeclared",
                reason="undeclared", permission=permission, package=package))
        with self.ctx.write():
            self._set_grants(package, self.ctx.state.grants.get(package, set()) | {permission},
                             principal)
            self.guard.history(principal, "grant", subject)

    def _installed(self, package: str) -> PackageState:
        pkg = self._package(package)
        if not pkg.installed:
            raise PackageNotInstalled(f"{package} is not installed", package=package)
        if pkg.is_pending:
            raise PackagePending(f"{package} waits for approval of its "
                                 "new version", package=package)
        return pkg

    @operation
    async def revoke(self, package: str, permission: str, *, by: object = OPERATOR) -> bool:
        """Revoke a permission: calls fail from now, queued and held prompts are cancelled.
        Returns whether it was granted: a permission the package does not hold is left
        as it is, with no history row, as no consent changed (SPEC §4.3).

        Raises:
            InvalidArgument: ``permission`` for an unknown permission; ``implied``
                (recorded) when another granted permission implies it, so revoking
                it alone would change nothing: the error names that permission, and
                nothing changes.
        """
        subject = {"package": package, "permission": permission}
        principal = self.guard.require_narrowing(by, "revoke", subject,
                                                      self._package_canvases(package))
        self._package(package)
        if not isinstance(permission, str) or permission not in PERMISSIONS:
            raise InvalidArgument(f"no permission {named(permission)!r}", reason="permission")
        granting = sorted((implied_by(permission) - {permission})
                          & self.ctx.state.grants.get(package, set()))
        if granting:
            # Calls would still pass check 5 through the implying grant: a revoke
            # reported as done while the card keeps the access would mislead.
            names = ", ".join(granting)
            raise self.guard.refuse(principal, "revoke", subject, InvalidArgument(
                f"{permission} is implied by {names}, which "
                f"{'stays' if len(granting) == 1 else 'stay'} granted: revoke "
                f"{names} too", reason="implied", permission=permission, package=package))
        with self.ctx.write():
            # Read in the write, caught up with other processes: never "not granted"
            # of a grant another engine made meanwhile, which would leave it standing.
            granted = self.ctx.state.grants.get(package, set())
            if permission not in granted:
                return False
            self._set_grants(package, granted - {permission}, principal)
            self.guard.history(principal, "revoke", subject)
            self._revalidate()
        return True

    @operation
    async def request(self, card: str, permission: str, *, answer: bool,
                      review_hash: str | None = None, by: object = OPERATOR) -> bool:
        """A card asks for an optional permission; ``by`` answers. Returns whether granted
        (a deny of a permission the package already holds leaves it granted: revoking
        it is `revoke`'s, which tells every card of the package).

        Raises:
            ApprovalRefused: ``by`` is not the operator (checked first, whatever else
                is wrong with the request).
            RequestRefused: the card is not on screen (``not-visible``: not
                shown, or its workspace hidden, `Visibility.on_screen`) or the
                permission is not declared optional (``not-optional``).
            ApprovalRefused: ``stale``: ``review_hash``, the content hash of the version the
                person was shown, is not the version installed now (`_require_shown`).
        """
        node = self.ctx.state.canvas.node(card)
        if node is not None and node.type != "card":
            node = None
        subject: dict[str, Any] = {"card": card, "permission": permission}
        if node is not None:
            subject = {"package": node.data["package"], **subject}
        # Who answers is asked first, as every consent action asks (SPEC §4.5): anyone
        # but a person is refused as such, recorded under its own name, and learns
        # nothing of the card, its package or the permission.
        principal = self.guard.require_operator(by, "request", subject)
        if node is None:
            raise CardUnknown(f"no custom card {card!r}", card=card)
        pkg = self._installed(node.data["package"])
        assert pkg.manifest is not None
        asker = Principal("card", card, f"card:{card}")
        # On screen is the card shown *and* its workspace not hidden: a card kept
        # running in a hidden workspace must not ask what the person cannot see.
        if not self.visibility.on_screen(node):
            where = (f"its workspace {node.workspace} is hidden"
                     if node.data.get("visible") else "it is not shown")
            raise self.guard.refuse(asker, "request", subject, RequestRefused(
                f"card {card} may ask for {permission} only while it is on "
                f"screen ({where}): not-visible", reason="not-visible", permission=permission, card=card,
                package=pkg.name))
        decl = pkg.manifest.permissions.get(permission)
        if decl is None or not decl.optional:
            raise self.guard.refuse(asker, "request", subject, RequestRefused(
                f"{pkg.name} does not declare {permission} as optional: "
                "not-optional", reason="not-optional", permission=permission, card=card,
                package=pkg.name))
        self._require_shown(principal, "request", subject, pkg, review_hash)
        with self.ctx.write():
            if answer:
                self._set_grants(pkg.name, self.ctx.state.grants.get(pkg.name, set()) | {permission},
                                 principal)
            self.guard.history(principal, "request", subject, detail="allow" if answer else "deny")
            # "The card is told either way" (SPEC §4.2), and told the truth: a deny
            # takes nothing back (a revoke does), so a permission the package holds
            # already is still granted after it.
            granted = answer or self.ctx.state.granted(pkg.name, permission)
            self.ctx.emit("permissions.request", card, permission=permission, granted=granted)
        return granted

    def pending_update(self, package: str) -> Update | None:
        """A package's version waiting for approval, with its diff; None when there is none."""
        self.ctx.sync()
        pkg = self.ctx.state.packages.get(package)
        if pkg is None or not pkg.is_pending or pkg.manifest is None or pkg.pending is None:
            return None
        assert pkg.pending_hash is not None
        return Update(package, pkg.pending_hash, diff_manifests(pkg.manifest, pkg.pending))

    @operation
    async def update(self, package: str, *, manifest: dict[str, Any] | str | bytes | None = None,
                     digests: dict[str, str] | None = None) -> Update:
        """New files and/or a new manifest arrived: the package is pending until approved.

        ``digests`` are merged into the package's files. Narrowing applies at
        once: permissions the new manifest drops are revoked now. ``manifest``
        is a value or its file's text; the engine computes its digest (`fold_manifest`).

        Raises:
            ManifestInvalid: the new manifest fails validation; nothing changes.
        """
        pkg = self._package(package)
        if not pkg.installed:
            raise PackageNotInstalled(f"{package} is not installed; offer it", package=package)
        assert pkg.manifest is not None
        base_raw = pkg.pending_raw if pkg.is_pending else pkg.raw
        base_digests = pkg.pending_digests if pkg.is_pending else pkg.digests
        assert base_raw is not None and base_digests is not None
        given = dict(digests or {})
        if manifest is not None:
            new_raw, given = fold_manifest(manifest, given, package=package)
        else:
            # Files alone: the manifest stays, and so does its digest; another one
            # given would put a manifest nobody sent under the hash approved next.
            new_raw = base_raw
            given.pop("manifest.json", None)
        new_manifest = self._parse_for(package, new_raw)
        new_digests = {**base_digests, **given}
        new_hash = content_hash(new_digests)
        diff = diff_manifests(pkg.manifest, new_manifest)
        with self.ctx.write():
            waiting = new_hash != pkg.hash
            if not waiting:
                pkg.pending_raw = pkg.pending_digests = pkg.pending_hash = None
                pkg.pending = None
            else:
                pkg.pending_raw, pkg.pending_digests = new_raw, new_digests
                pkg.pending_hash, pkg.pending = new_hash, new_manifest
            self._save_package(pkg)
            dropped = self.ctx.state.grants.get(package, set()) - set(new_manifest.permissions)
            if dropped:
                self._set_grants(package, self.ctx.state.grants.get(package, set()) - dropped,
                                 Principal("unknown", None, "update"))
            self.guard.history(Principal("unknown", None, "update"), "update",
                          {"package": package, "hash": new_hash},
                          detail="; ".join(diff.lines))
            self._revalidate()
        return Update(package, new_hash, diff, waiting=waiting)

    @operation
    async def approve(self, package: str, *, review_hash: str,
                      by: object = OPERATOR) -> Diff:
        """Approve the pending version whose review (``review_hash``) the person saw.

        The approval grants what the update widens: the permissions the new
        version newly requires (added, or optional made required), which the
        person saw in the diff. Grants kept otherwise stay as they were, so a
        permission revoked before stays revoked. The grant holds for the new hash.

        Raises:
            ApprovalRefused: not an operator, or ``stale`` when the pending
                version is no longer the one reviewed.
        """
        _require_hash_text(review_hash, "review_hash")
        subject = {"package": package, "hash": review_hash}
        principal = self.guard.require_operator(by, "approve", subject)
        pkg = self._package(package)
        if not pkg.is_pending:
            raise NotFound(f"{package} has no version waiting for approval",
                           reason="nothing-pending", package=package)
        if review_hash != pkg.pending_hash:
            raise self.guard.refuse(principal, "approve", subject, ApprovalRefused(
                f"the review you approved ({review_hash[:19]}…) is not the "
                f"pending version of {package}: stale — review it again",
                reason="stale", package=package))
        assert pkg.manifest is not None and pkg.pending is not None
        diff = diff_manifests(pkg.manifest, pkg.pending)
        # The approval covers what the diff showed: the permissions it newly
        # requires. A permission the person revoked earlier stays revoked; the
        # approval of a version that widens nothing must not undo that revoke.
        granted = (self.ctx.state.grants.get(package, set()) & set(pkg.pending.permissions)) \
            | newly_required(pkg.manifest, pkg.pending)
        with self.ctx.write():
            assert pkg.pending_raw is not None and pkg.pending_digests is not None
            pkg.raw, pkg.digests, pkg.hash = pkg.pending_raw, pkg.pending_digests, review_hash
            pkg.set_manifest(pkg.pending)
            pkg.pending_raw = pkg.pending_digests = pkg.pending_hash = None
            pkg.pending = None
            self._save_package(pkg)
            self._set_grants(package, granted, principal)
            self.guard.history(principal, "approve", subject, detail="; ".join(diff.lines))
            self._revalidate()
            self.prompts.pump_all()
        return diff

    @operation
    async def decline_update(self, package: str, *, pending_hash: str | None = None,
                             by: object = OPERATOR) -> str:
        """The person says no to the pending version: it is discarded.

        The package is the approved version again (its manifest, files and
        hash), so its cards work again, and the decline is recorded with the
        hash declined. The declined version's files are gone with it: a later
        update is merged into the approved files, so offering the approved
        files again gives the approved hash. Grants stay as they are: what the
        update's narrowing revoked stays revoked (a person grants it again).

        Args:
            pending_hash: the pending version the person saw; another one offered
                since is refused as ``stale`` (recorded), as an approval's is.

        Returns:
            The approved version's hash, which holds again.

        Raises:
            ApprovalRefused: not from an operator, or ``stale`` (both recorded).
            InvalidRequest: ``NOT_FOUND`` for an unknown package;
                ``PACKAGE_NOT_INSTALLED`` for one never installed (decline its
                install instead); ``nothing-pending`` when no version waits.
        """
        subject = {"package": package}
        principal = self.guard.require_operator(by, "decline", subject)
        pkg = self._package(package)
        if not pkg.installed:
            raise PackageNotInstalled(f"{package} is not installed: there is no update "
                                      "to decline (decline its install)", package=package)
        if not pkg.is_pending:
            raise NotFound(f"{package} has no version waiting for approval",
                           reason="nothing-pending", package=package)
        if pending_hash is not None:
            _require_hash_text(pending_hash, "pending_hash")
        if pending_hash is not None and pending_hash != pkg.pending_hash:
            raise self.guard.refuse(principal, "decline", subject, ApprovalRefused(
                f"the version you saw ({pending_hash[:19]}…) is not the one pending now: "
                "stale — look at it again", reason="stale", package=package))
        declined = pkg.pending_hash
        with self.ctx.write():
            pkg.pending_raw = pkg.pending_digests = pkg.pending_hash = None
            pkg.pending = None
            self._save_package(pkg)
            self.guard.history(principal, "decline", {**subject, "hash": declined},
                               detail=f"kept {pkg.hash}")
            self._revalidate()
            self.prompts.pump_all()
        return pkg.hash

    @operation
    async def set_secret(self, name: str, host: str, value: str, *,
                         by: object = OPERATOR) -> None:
        """Store a secret for exactly one host (operator only); cards fill it by placeholder."""
        subject = {"secret": name, "host": host}
        principal = self.guard.require_operator(by, "secret.set", subject)
        problem = SecretVault.problem(name, host)
        if problem is None and not isinstance(value, str):
            # Sent as text in a request; None, a number or bytes would be stored as such.
            problem = f"a secret's value is text, not {type(value).__name__}"
        elif problem is None and not is_unicode(value):
            problem = "a secret's value is valid Unicode only (it holds a lone surrogate)"
        if problem:
            raise InvalidArgument(problem, reason="secret")
        with self.ctx.write():
            self.ctx.secrets.put(name, host, value, self.ctx.now())
            self.guard.history(principal, "secret.set", subject)

    @operation
    async def delete_secret(self, name: str, *, by: object = OPERATOR) -> None:
        """Remove a secret (narrowing: operators, or agents and cards on a canvas).

        Raises:
            InvalidArgument: the name is no secret's name (`_check_name`);
                nothing is recorded.
        """
        self._check_name(name)
        subject = {"secret": name}
        principal = self.guard.require_narrowing(by, "secret.delete", subject,
                                                      self._secret_canvases(name))
        with self.ctx.write():
            self.ctx.secrets.delete(name)
            self.guard.history(principal, "secret.delete", subject)

    def secret_is_set(self, name: str) -> bool:
        """Whether a secret is set: all a card may learn about it.

        A name that is text but that `set_secret` would refuse is answered
        truthfully: no secret has it (unless an older version stored it).

        Raises:
            InvalidArgument: the name is not text.
        """
        if not isinstance(name, str):
            raise InvalidArgument(f"a secret's name is text, not {type(name).__name__}",
                                  reason="secret")
        return self.ctx.secrets.is_set(name)

    def _check_name(self, name: object) -> None:
        """Refuse a name `set_secret` would refuse (`SecretVault.name_problem`), unless a
        secret of that name is stored: one an older version let through (a trailing
        newline, say) can still be asked about and deleted."""
        problem = SecretVault.name_problem(name)
        if problem and not (isinstance(name, str) and self.ctx.secrets.is_set(name)):
            raise InvalidArgument(problem, reason="secret")


def _require_hash_text(value: object, name: str) -> None:
    """Refuse ``value`` unless it is a content hash's text (as a review gives it): a
    number, a list or a megabyte of text is no hash a person was shown, and is
    refused naming ``name`` before anything is recorded.

    Raises:
        InvalidArgument: reason ``name``.
    """
    if not isinstance(value, str) or not 0 < len(value) <= 128:
        raise InvalidArgument(f"{name} is the content hash of the version shown "
                              "(text, as a review gives it)", reason=name)


def known_package(packages: Mapping[str, PackageState], name: str) -> PackageState:
    """The package ``name`` of ``packages``.

    Raises:
        InvalidArgument: ``name`` is not text.
        NotFound: reason ``missing-package``.
    """
    if not isinstance(name, str):  # a list is no key at all: TypeError, not NOT_FOUND
        raise InvalidArgument(f"a package name is text, not {type(name).__name__}",
                              reason="name")
    pkg = packages.get(name)
    if pkg is None:
        raise NotFound(f"no package {named(name)!r} is known", reason="missing-package",
                       package=name)
    return pkg


def manifest_for(pkg_name: str, raw: dict[str, Any]) -> Manifest:
    """The manifest ``raw`` of the package ``pkg_name``, parsed.

    Raises:
        ManifestInvalid: it is not valid, or names another package.
    """
    manifest = parse_manifest(raw)
    if manifest.name != pkg_name:
        raise ManifestInvalid(
            f"$.name: {manifest.name!r} is not the package {pkg_name!r}",
            problems=[("$.name", f"{manifest.name!r} is not the package {pkg_name!r}")],
            package=pkg_name)
    return manifest


def package_review(packages: Mapping[str, PackageState], name: str) -> Review:
    """The install review of the package ``name`` (its pending version, if one waits):
    `Consent.review`, and what ``arrowgate package review`` shows of a store's view."""
    pkg = known_package(packages, name)
    raw, digests = (pkg.pending_raw, pkg.pending_digests) if pkg.is_pending else \
        (pkg.raw, pkg.digests)
    assert raw is not None and digests is not None
    return install_review(manifest_for(name, raw), content_hash(digests))
