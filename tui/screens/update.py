"""A pending version's approval: its whole diff, and what approving grants of it, kept true.

What approving grants depends on the package's grants as they stand when the approval
is made (`engine.services.consent`: a permission granted then keeps its new hosts, one
revoked then stays revoked). A grant or a revoke made elsewhere (another program, the
grants screen of another app) while the dialog is open changes it, so the dialog says
it anew each time the store changes, and its yes waits to be read again
(`tui.screens.arming`); the approval itself is refused when what it would grant is
no longer what the dialog last said (`GrantsScreen.action_approve_update`).
"""

from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING, cast

from textual import on

from engine import PERMISSIONS, Manifest
from engine.core.events import Update
from engine.core.review import newly_required, permission_title

from ..messages import EngineChanged
from .confirm import ConfirmScreen

if TYPE_CHECKING:
    from ..app import ArrowgateApp

__all__ = ["UpdateScreen", "approval_grants", "describe_update"]


class UpdateScreen(ConfirmScreen):
    """The approval of ``package``'s pending version: ``old`` → ``new`` (``update``).

    Args:
        package: the package's name.
        old: the approved version's manifest.
        new: the pending version's manifest (``update.pending_hash``: the approval names it).
        update: the pending version and its diff.
        granted: the package's permissions granted as the dialog opens.
    """

    def __init__(self, package: str, old: Manifest, new: Manifest, update: Update,
                 granted: Collection[str]) -> None:
        self.package, self.old, self.new, self.update = package, old, new, update
        lines, high = describe_update(old, new, update)
        self._head = (f"{package}: approve version hash {update.pending_hash}\n\n"
                      + "\n".join(lines) + "\n\n")
        #: What approving grants, as the dialog says it now (`approval_grants`).
        self.shown_grants = approval_grants(old, new, update, granted)
        risk = (f"{package} asks for more, high risk: {', '.join(high)}. Approve only if you "
                "trust it with what the lines below say." if high else None)
        super().__init__("Approve a pending update", self._head + self.shown_grants,
                         verb="approve", risk=risk)

    def grants_with(self, granted: Collection[str]) -> str:
        """What approving grants with the package's grants ``granted``."""
        return approval_grants(self.old, self.new, self.update, granted)

    @on(EngineChanged)
    def _changed(self) -> None:
        if self._dismissed:
            return
        if self._close_if_ended():
            return
        now = self.grants_with(self.app_grants())
        if now == self.shown_grants:
            return
        # Either way it matters: fewer grants than said overstates the approval, more
        # grants than said (a permission granted elsewhere, its new hosts reached at
        # once) is consent to what was not shown.
        self.shown_grants = now
        self.replace_body(self._head + now)
        self.notify(f"{self.package}: what approving grants changed while the dialog was "
                    "open (a grant or a revoke made elsewhere); read it again",
                    title="package: approve update", severity="warning", timeout=10)

    def _close_if_ended(self) -> bool:
        """Close, saying how, once the version shown is no longer the one pending (approved,
        declined or replaced elsewhere: another app, the service): its approve key must not
        stay offered for a question that is gone. Returns whether it closed."""
        engine = cast("ArrowgateApp", self.app).engine
        pending = engine.pending_update(self.package)
        if pending is not None and pending.pending_hash == self.update.pending_hash:
            return False
        self.close_as_gone(f"{self.package}: {self._ended(pending)} while the dialog was "
                           "open; the dialog is closed and nothing was approved here",
                           title="package: approve update")
        return True

    def _ended(self, pending: Update | None) -> str:
        """How the version shown stopped being the pending one."""
        shown = self.update.pending_hash
        pkg = cast("ArrowgateApp", self.app).engine.state.packages.get(self.package)
        if pending is not None:
            return (f"the version shown (hash {shown}) was replaced by another pending "
                    f"version elsewhere (hash {pending.pending_hash}, not read yet: its "
                    "approval, from the packages table, shows it)")
        if pkg is None:
            return "the package was removed elsewhere"
        if pkg.hash == shown:
            return f"the version shown (hash {shown}) was approved elsewhere"
        return f"the version shown (hash {shown}) was declined elsewhere"

    def app_grants(self) -> set[str]:
        """The package's permissions granted now, as the app's engine has them."""
        engine = cast("ArrowgateApp", self.app).engine
        return set(engine.state.grants.get(self.package, set()))


def describe_update(old: Manifest, new: Manifest, update: Update) -> tuple[list[str], list[str]]:
    """The whole diff as a person reads it, and the high-risk permissions it widens.

    Each widened permission comes with its risk, its first line with the new
    hosts in it and its "Users see" text; each new host pattern on a line of
    its own; narrowing is listed as it applies (at once, on approval).
    """
    lines: list[str] = []
    high: list[str] = []

    def permission(name: str, how: str) -> None:
        spec = PERMISSIONS[name]
        if spec.risk == "high":
            high.append(name)
        lines.append(f"widened: {how} ({spec.risk} risk)")
        lines.append(f"    {permission_title(new, name)}")
        lines.append(f"    Users see: {spec.users_see}")
        for host in new.hosts(name) if spec.needs_hosts else ():
            lines.append(f"    host pattern: {host}")

    for entry in update.diff.widened:
        if entry.startswith("+") and entry[1:] in PERMISSIONS:
            permission(entry[1:], entry)
            continue
        name, _, change = entry.partition(": ")
        if name in PERMISSIONS and change == "optional -> required":
            permission(name, entry)
        elif name in PERMISSIONS and change.startswith("+"):
            if f"+{name}" not in update.diff.widened:  # a new permission lists its own
                lines.append(f"widened: new host pattern for {name}: {change[1:]}")
        elif name in PERMISSIONS and change == "-> any":
            lines.append(f"widened: {name} may reach any host")
        else:
            lines.append(f"widened: {entry}")
    lines.extend(f"narrowed: {entry} (applies at once)" for entry in update.diff.narrowed)
    # Not widening, but what the new version offers agents and which data it takes in.
    lines.extend(update.diff.changed)
    if not lines:
        lines.append("no change in declarations — only files changed")
    return lines, high


def approval_grants(old: Manifest, new: Manifest, update: Update,
                    granted: Collection[str]) -> str:
    """What approving the pending version grants of what it widens, and what it does not.

    As the engine approves (`engine.services.consent`): the permissions the new version
    newly requires (added, or optional made required) are granted; a permission granted
    now stays granted, so its new host patterns are reached at once; a new optional
    permission is not granted (the card may ask for it), nor are the new hosts of a
    permission that is not granted (revoked, or optional and never granted).

    Args:
        granted: the package's permissions granted now.
    """
    if not update.diff.widened:
        return "Nothing is widened; approving accepts the changed files."
    newly = newly_required(old, new)
    after = (set(granted) & set(new.permissions)) | newly
    grants: list[str] = []
    kept_out: list[str] = []
    for entry in update.diff.widened:
        # "+name", or "name: +host", "name: -> any", "name: optional -> required".
        name = entry[1:] if entry.startswith("+") else entry.partition(": ")[0]
        if name in after:
            grants.append(entry)
        elif name not in old.permissions and name in new.optional:
            kept_out.append(f"{entry} (optional: the card may ask for it later)")
        elif name in new.optional:
            kept_out.append(f"{entry} ({name} is optional and not granted)")
        else:
            kept_out.append(f"{entry} ({name} was revoked and stays revoked)")
    said = [f"Approving grants: {'; '.join(grants)}." if grants else
            "Approving grants none of what is widened."]
    if kept_out:
        said.append(f"Approving does not grant: {'; '.join(kept_out)}.")
    return "\n".join(said)
