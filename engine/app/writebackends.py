"""What the write verbs work on through ``--db``: the engine itself (`LocalBackend`), or,
for the verbs that only read, a view of the store as it stands (`ViewBackend`).

`Backend` is what every verb needs, from the engine or from a running service
(`engine.app.serviceclient.ServiceBackend`); `Reader`, what the verbs that only read
need.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

from engine.app.writefailure import USAGE, Failure
from engine.core.holds import held_for
from engine.core.prompts import Prompt
from engine.core.standing import ClockRun

__all__ = ["Backend", "LocalBackend", "Reader", "ViewBackend"]


class Backend(Protocol):
    """What the verbs need, from the engine or from the service."""

    async def add_workspace(self, body: dict[str, Any]) -> dict[str, Any]: ...
    async def add_node(self, workspace: str, node: dict[str, Any]) -> dict[str, Any]: ...
    async def node(self, node_id: str) -> dict[str, Any]: ...
    async def set_node(self, node_id: str, fields: dict[str, Any]) -> dict[str, Any]: ...
    async def remove_node(self, node_id: str) -> None: ...
    async def add_arrow(self, workspace: str, arrow: dict[str, Any]) -> dict[str, Any]: ...
    async def remove_arrow(self, arrow_id: str) -> None: ...
    async def offer(self, folder: Path) -> dict[str, Any]: ...
    async def review(self, name: str) -> dict[str, Any]: ...
    async def install(self, name: str, grant: str | list[str],
                      review_hash: str) -> dict[str, Any]: ...
    async def grant(self, name: str, permission: str, review_hash: str) -> list[str]: ...
    async def revoke(self, name: str, permission: str) -> bool: ...
    async def pending(self, name: str) -> dict[str, Any]: ...
    async def approve(self, name: str, review_hash: str) -> dict[str, Any]: ...
    async def decline(self, name: str, pending_hash: str) -> dict[str, Any]: ...
    async def call(self, body: dict[str, Any]) -> dict[str, Any]: ...
    async def holds(self) -> list[dict[str, Any]]: ...
    async def approve_hold(self, prompt_id: str, digest: str) -> dict[str, Any]: ...
    async def reject_hold(self, prompt_id: str) -> dict[str, Any]: ...
    async def aclose(self) -> None: ...


class LocalBackend:
    """The engine itself, on the database file (as the operator)."""

    def __init__(self, path: Path) -> None:
        from engine.engine import Engine

        self.engine = Engine.open(path)

    async def add_workspace(self, body: dict[str, Any]) -> dict[str, Any]:
        """Create a workspace with its project folder and settings."""
        ws = await self.engine.create_workspace(body["id"], body["folder"],
                                                settings=body.get("settings"))
        return {"id": ws.id, "folder": ws.folder, "settings": ws.settings.to_dict()}

    async def add_node(self, workspace: str, node: dict[str, Any]) -> dict[str, Any]:
        """Put a node on a workspace's canvas."""
        return (await self.engine.add_node(node, workspace=workspace)).to_dict()

    async def node(self, node_id: str) -> dict[str, Any]:
        """A node's JSON form; one that does not exist is NOT_FOUND, as the service says
        (the engine calls it INVALID_NODE, ``missing-node``)."""
        node = self.engine.state.canvas.node(node_id)
        if node is None:
            raise Failure.coded(USAGE, "NOT_FOUND", f"no node {node_id!r}",
                                reason="missing-node")
        return node.to_dict()

    async def set_node(self, node_id: str, fields: dict[str, Any]) -> dict[str, Any]:
        """Change a node's fields; one that does not exist is NOT_FOUND (`node`)."""
        await self.node(node_id)
        return (await self.engine.set_node(node_id, fields)).to_dict()

    async def remove_node(self, node_id: str) -> None:
        """Remove a node and its arrows."""
        await self.engine.remove_node(node_id)

    async def add_arrow(self, workspace: str, arrow: dict[str, Any]) -> dict[str, Any]:
        """Draw an arrow between two nodes of the workspace."""
        end = self.engine.state.canvas.node(str(arrow.get("from")))
        if end is not None and end.workspace != workspace:
            raise Failure.coded(USAGE, "INVALID_ARROW",
                                f"node {end.id} is not in workspace {workspace}",
                                reason="cross-workspace")
        return (await self.engine.add_arrow(arrow)).to_dict()

    async def remove_arrow(self, arrow_id: str) -> None:
        """Remove an arrow; one that does not exist is NOT_FOUND, as the service says."""
        if self.engine.state.canvas.arrow(arrow_id) is None:
            # The engine calls it INVALID_ARROW (`missing-arrow`), the service's
            # DELETE a 404: one verb answers alike through --db and --service.
            raise Failure.coded(USAGE, "NOT_FOUND", f"no arrow {arrow_id!r}",
                                reason="missing-arrow")
        await self.engine.remove_arrow(arrow_id)

    async def offer(self, folder: Path) -> dict[str, Any]:
        """Offer the package in a folder (its manifest is validated at install)."""
        from engine.effects.packages import read_package_folder

        package = read_package_folder(folder)
        raw, digests = package.manifest, package.digests
        name = raw.get("name") if isinstance(raw, dict) else None
        if not isinstance(name, str):
            raise Failure.coded(USAGE, "MANIFEST_INVALID",
                                f"$.name: {folder / 'manifest.json'} names no package",
                                json_text="$.name: the manifest names no package")
        pkg = self.engine.state.packages.get(name)
        if pkg is not None and pkg.installed:
            # New files of an installed package: an update, pending until approved
            # (as the service does with the same offer).
            # The file's text, not the value read from it: the engine hashes it itself.
            update = await self.engine.update(name, manifest=package.manifest_text,
                                              digests=digests)
            # The installed version's own files: nothing pends (the service says so too).
            state = "pending" if update.waiting else "installed"
            return {"package": name, "state": state, "hash": update.pending_hash}
        digest = await self.engine.offer(name, package.manifest_text, digests)
        return {"package": name, "state": "available", "hash": digest}

    async def review(self, name: str) -> dict[str, Any]:
        """The install review of an offered package."""
        review = await self.engine.review(name)
        return {**review.to_json(), "text": review.text}

    async def install(self, name: str, grant: str | list[str],
                      review_hash: str) -> dict[str, Any]:
        """Install what the review with ``review_hash`` showed (else ``stale``)."""
        review = await self.engine.install(name, grant=grant, review_hash=review_hash)
        return {**review.to_json(), "granted": sorted(self.engine.state.grants.get(name, ()))}

    async def grant(self, name: str, permission: str, review_hash: str) -> list[str]:
        """Grant one declared permission; every permission the package holds then, sorted
        (as the install's ``granted``)."""
        await self.engine.grant(name, permission, review_hash=review_hash)
        return sorted(self.engine.state.grants.get(name, ()))

    async def revoke(self, name: str, permission: str) -> bool:
        """Revoke a permission; whether it was granted (False: nothing changed)."""
        return await self.engine.revoke(name, permission)

    async def pending(self, name: str) -> dict[str, Any]:
        """The package's version waiting for approval, with its diff."""
        from engine.core.errors import NotFound

        update = self.engine.pending_update(name)
        if update is None:
            raise NotFound(f"{name} has no version waiting for approval",
                           reason="nothing-pending", package=name)
        return {"package": name, "pending_hash": update.pending_hash,
                **update.diff.to_json(), "lines": list(update.diff.lines)}

    async def approve(self, name: str, review_hash: str) -> dict[str, Any]:
        """Approve the pending version with that hash."""
        diff = await self.engine.approve(name, review_hash=review_hash)
        return {"package": name, "hash": review_hash, **diff.to_json(), "lines": list(diff.lines)}

    async def decline(self, name: str, pending_hash: str) -> dict[str, Any]:
        """Discard the pending version ``pending_hash`` (another one pending now is
        ``stale``); the approved one's hash holds again."""
        # As the service's decline is asked (`ServiceBackend.decline`): a package with no
        # version pending is ``nothing-pending`` however it stands, installed or not.
        await self.pending(name)
        approved = await self.engine.decline_update(name, pending_hash=pending_hash)
        return {"package": name, "hash": approved, "declined": True}

    async def call(self, body: dict[str, Any]) -> dict[str, Any]:
        """A card's call; the Decision as JSON."""
        decision = await self.engine.call(body["card"], body["call"], body.get("target"),
                                          body.get("args"), context=body.get("context"))
        return decision.to_json(nulls=True)  # the keys --service prints

    async def holds(self) -> list[dict[str, Any]]:
        """Held prompts, oldest first."""
        # Its deadline as the clock will reach it (`Engine.hold_ends`: while the
        # engine's time stands still, not the stored one).
        return [_hold(p, self.engine.hold_ends(p.id)) for p in self.engine.prompts(state="held")]

    async def approve_hold(self, prompt_id: str, digest: str) -> dict[str, Any]:
        """Approve a held prompt by the digest of the text shown."""
        return (await self.engine.approve_hold(prompt_id, text_sha256=digest)).to_json(nulls=True)

    async def reject_hold(self, prompt_id: str) -> dict[str, Any]:
        """Reject a held prompt."""
        return (await self.engine.reject_hold(prompt_id)).to_json(nulls=True)

    async def aclose(self) -> None:
        """Commit and close the database."""
        self.engine.close()


def _hold(prompt: Prompt, deadline: float | None) -> dict[str, Any]:
    """A held prompt as ``hold list`` answers it, ending at ``deadline``."""
    return {"id": prompt.id, "card": prompt.card, "package": prompt.package,
            "arrow": prompt.arrow, "agent": prompt.agent, "text": prompt.text,
            "text_sha256": prompt.text_sha256, "deadline": deadline}


class Reader(Protocol):
    """What the verbs that only read need (`_READS`): every backend has it."""

    async def review(self, name: str) -> dict[str, Any]: ...
    async def holds(self) -> list[dict[str, Any]]: ...
    async def aclose(self) -> None: ...


class ViewBackend:
    """The database as it stands (`engine.store.view.StoreView`), for the verbs that only
    read: nothing is migrated, expired or written (an older database is refused, naming
    ``arrowgate upgrade``)."""

    def __init__(self, path: Path) -> None:
        from engine.store.view import StoreView

        self.view = StoreView(path)

    async def review(self, name: str) -> dict[str, Any]:
        """The install review of an offered package, as `LocalBackend.review`."""
        from engine.services.consent import package_review

        review = package_review(self.view.state.packages, name)
        return {**review.to_json(), "text": review.text}

    async def holds(self) -> list[dict[str, Any]]:
        """Held prompts, oldest first; those whose deadline passed are left out: they can
        no longer be approved, and the next engine to open the store expires them.

        Each deadline as the clock will reach it, as an engine shows it
        (`Engine.hold_ends`): while the store's time stands ahead of the clock, the
        clock's reading plus what is left, never more than the hold's timeout (an
        engine expires it once the clock has run that long), not the stored deadline
        the clock may not reach for days.
        """
        held = self.view.state.open_prompts
        due = {p.id for p in held.due(self.view.clock())}
        on_clock = ClockRun()  # nothing counted yet, as for an engine that just opened
        return [_hold(p, self._ends(on_clock, p)) for p in held.in_state("held")
                if p.id not in due]

    def _ends(self, on_clock: ClockRun, prompt: Prompt) -> float | None:
        if prompt.deadline is None:
            return None
        return on_clock.ends_at(prompt.id, held_for(prompt), prompt.deadline,
                                self.view.clock)

    async def aclose(self) -> None:
        """Close the database (nothing was written)."""
        self.view.close()
