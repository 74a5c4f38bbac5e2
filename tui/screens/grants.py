"""Packages and grants: versions, hash state, permissions by risk, revoke, history."""

from __future__ import annotations

import time
from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.widgets import DataTable, Static

from engine import PERMISSIONS, Diff
from engine.core.review import permission_title
from engine.core.state import PackageState

from ..keys import key_hint
from ..text import Ended, ident, plain
from ..widgets.app_header import AppHeader
from ..widgets.fitted_table import FittedTable
from ..widgets.key_footer import KeyFooter
from .base import EngineScreen, row_key
from .confirm import ConfirmScreen
from .review import ReviewScreen
from .update import UpdateScreen, approval_grants, describe_update

__all__ = ["HISTORY_SHOWN", "GrantsScreen", "approval_grants", "describe_update"]

_RISK_ORDER = {"high": 0, "medium": 1, "low": 2}
#: The most consent history entries the table shows: a package's newest. Refused
#: attempts are kept there for good, up to 120 a minute for each card and agent, so a
#: history may hold far more than a person scrolls through (`GET /v1/history` pages it).
HISTORY_SHOWN = 200


class GrantsScreen(EngineScreen):
    """Each package, its permissions and what a person granted, and the consent history."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("v", "revoke", "Revoke", id="grant.revoke",
                tooltip="Revoke the selected permission (asks to confirm)"),
        Binding("g", "grant", "Grant", id="grant.grant",
                tooltip="Grant the selected declared permission: an optional one, or one "
                        "revoked before (asks to confirm)"),
        Binding("u", "approve_update", "Approve update", id="package.approve",
                tooltip="Show the widening diff of a pending version, then approve it"),
        Binding("i", "review", "Install review", id="package.review",
                tooltip="The install review of the selected package"),
        Binding("d", "remove_package", "Remove or decline", id="package.remove",
                tooltip="Withdraw the selected offered (not installed) package, or decline "
                        "an installed package's pending version (asks to confirm)"),
        Binding("tab", "app.focus_next", "Next table", show=False, id="grants.next"),
    ]
    CONSENT_ACTIONS: ClassVar[frozenset[str]] = frozenset({"revoke", "grant", "approve_update",
                                                          "review", "remove_package"})

    def compose(self) -> ComposeResult:
        yield AppHeader("packages and grants")
        with Horizontal():
            with Vertical(id="left"):
                yield Static("Packages", classes="section")
                # Fitted: at 80 columns the table ran past its pane and, scrolled sideways
                # to its cursor, showed "e.notes" for acme.notes.
                yield FittedTable("package", "version", "state", "cards", id="packages")
                yield Static("Consent history", classes="section", id="history-title")
                # Fitted, as the permissions: a cell the pane's edge cut ended unmarked.
                yield FittedTable("time (UTC)", "who", "action", "result", "subject",
                                  id="history")
            with Vertical(id="right"):
                yield Static("", id="package-title", classes="section")
                # Fitted: at 120 columns "what a person sees" was cut by the pane's edge
                # mid-sentence ("Read what agents and termi"), with nothing to say so.
                yield FittedTable("risk", "permission", "granted", "what a person sees",
                                  id="permissions")
                yield Static("", id="package-note", markup=False)
        yield KeyFooter()

    def on_mount(self) -> None:
        self.refresh_safely()

    #: The package whose permissions the table last showed, or None.
    _permissions_of: str | None = None

    # -- data -----------------------------------------------------------------
    def _packages(self) -> list[PackageState]:
        return [self.engine.state.packages[n] for n in sorted(self.engine.state.packages)]

    def selected_package(self) -> PackageState | None:
        """The package under the cursor."""
        key = row_key(self.query_one("#packages", DataTable))
        return self.engine.state.packages.get(key) if key else None

    def selected_permission(self) -> str | None:
        """The permission under the cursor in the permissions table."""
        return row_key(self.query_one("#permissions", DataTable))

    def refresh_data(self) -> None:
        table = self.query_one("#packages", FittedTable)
        cards: dict[str, int] = {}
        for node in self.engine.state.canvas.nodes(type="card"):
            cards[node.data["package"]] = cards.get(node.data["package"], 0) + 1
        rows: list[tuple[str, list[Text | Ended]]] = []
        for pkg in self._packages():
            manifest = pkg.manifest or pkg.pending
            version = manifest.version if manifest else str(pkg.raw.get("version", "?"))
            if pkg.is_pending:
                state = f"pending → {pkg.pending.version if pkg.pending else '?'}"
            else:
                state = "approved" if pkg.installed else "offered"
            rows.append((pkg.name, [plain(pkg.name), plain(version), plain(state),
                                    Text(str(cards.get(pkg.name, 0)))]))
        # The cursor stays on its package (by key: one withdrawn since is in the table, not
        # the engine), else goes to the nearest one.
        gone = table.show(rows)
        if gone is not None:
            self._cursor_moved(gone)
        self._show_package()

    def _cursor_moved(self, gone: str) -> None:
        """The package under the cursor is gone (an offer withdrawn) and the cursor moved
        to the nearest one (the one after it, or before it at the end): say both, so a
        key meant for the one (``i``, ``d``) is not pressed by habit on the other, whose
        dialog would ask something else (a pending version's approval)."""
        now = self.selected_package()
        if now is None:
            return
        self.notify(f"package {gone} is no longer offered or installed; the cursor moved to "
                    f"package {now.name}", title="Packages", severity="warning", timeout=10)

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.data_table.id == "packages":
            self._show_package()

    def _show_package(self) -> None:
        pkg = self.selected_package()
        perms = self.query_one("#permissions", FittedTable)
        history = self.query_one("#history", FittedTable)
        history_title = self.query_one("#history-title", Static)
        title = self.query_one("#package-title", Static)
        note = self.query_one("#package-note", Static)
        if pkg is None:
            perms.show([])
            history.show([])
            self._permissions_of = None
            title.update("No package is offered or installed.")
            history_title.update("Consent history")
            note.update("")
            return
        manifest = pkg.manifest or pkg.pending
        title.update(plain(f"{pkg.name} — permissions by risk"))
        granted = self.engine.state.grants.get(pkg.name, set())
        declared = manifest.permissions if manifest else {}
        rows: list[tuple[str, list[Text | Ended]]] = []
        for name in sorted(declared, key=lambda n: (_RISK_ORDER[PERMISSIONS[n].risk], n)):
            spec = PERMISSIONS[name]
            optional = name not in (manifest.required if manifest else set())
            mark = "✓ granted" if name in granted else ("optional" if optional else "✗ not granted")
            sees = permission_title(manifest, name) if manifest is not None else spec.title
            rows.append((name, [plain(spec.risk), plain(name), plain(mark), plain(sees)]))
        # The cursor stays on its permission, else goes to the nearest (another package's
        # list: the same permission there, else the first).
        chosen = perms.show(rows, another=self._permissions_of != pkg.name)
        if chosen is not None and perms.row_count:
            # The same package, its permission gone (a version without it approved): the
            # nearest permission is under the cursor now, and `v` would name that one.
            self.notify(f"{pkg.name} no longer declares {chosen}; the cursor moved to "
                        f"{self.selected_permission()}", title="Permissions",
                        severity="warning", timeout=10)
        self._permissions_of = pkg.name
        # The newest only, read from the history's end along its index: the whole was
        # read and decoded to show them (seconds and hundreds of MB at 80,000 entries).
        newest = self.engine.history.latest(HISTORY_SHOWN, package=pkg.name)
        total = (len(newest) if len(newest) < HISTORY_SHOWN
                 else self.engine.history.count(package=pkg.name))
        history_title.update("Consent history" if total <= len(newest) else
                             f"Consent history: the newest {len(newest):,} of {total:,}")
        history.show([(str(entry["seq"]), [
            Text(time.strftime("%m-%d %H:%M:%S", time.gmtime(entry["t"]))),
            plain(entry["principal"]), plain(entry["action"]), plain(_result(entry)),
            plain(_subject(entry["subject"]))]) for entry in newest])
        update = self.engine.pending_update(pkg.name)
        if update is not None:
            diff = "\n".join(update.diff.lines) or "no change in declarations (files changed)"
            status = (f"A new version waits for approval; its calls fail until then.\n{diff}\n"
                      "Press u to review and approve it.")
        elif not pkg.installed:
            status = (f"Offered, not installed. Press i for its install review, d to remove "
                      f"it.\n{pkg.hash}")
        else:
            status = f"approved content hash:\n{pkg.hash}"
        # The full text a person sees, which the table's column cuts short.
        texts = [f"{name} ({PERMISSIONS[name].risk}): "
                 + (permission_title(manifest, name) if manifest else PERMISSIONS[name].title)
                 + f" {PERMISSIONS[name].users_see}"
                 for name in sorted(declared, key=lambda n: (_RISK_ORDER[PERMISSIONS[n].risk], n))]
        note.update(plain(status + "\n\n" + "\n".join(texts), multiline=True))

    # -- actions --------------------------------------------------------------
    def action_revoke(self) -> None:
        """Revoke the selected granted permission after a confirmation."""
        pkg, permission = self.selected_package(), self.selected_permission()
        if pkg is None or permission is None:
            self.notify("Select a package and one of its permissions.", severity="warning")
            return
        if not self._permission_chosen("revoke", "grant.revoke"):
            return
        if permission not in self.engine.state.grants.get(pkg.name, set()):
            self.notify(f"{permission} is not granted to {pkg.name}.", severity="warning")
            return
        if not self.consent_allowed():
            return
        def body() -> str:
            return (f"Revoke {permission} from {pkg.name}?\n\nEvery card of the package "
                    f"({self._cards_of(pkg.name)}) is told; calls needing it fail from now "
                    "on, and its queued or held prompts that need it are cancelled.")

        async def answered(yes: bool | None) -> None:
            if yes:
                await self.gate.consent("grant: revoke",
                                        lambda: self.engine.revoke(pkg.name, permission))
                if permission not in self.engine.state.grants.get(pkg.name, set()):
                    self.notify(f"{permission} revoked from {pkg.name}", title="grant: revoke")
                self.refresh_safely()

        def gone() -> str | None:
            if permission not in self.engine.state.grants.get(pkg.name, set()):
                return f"{permission} was revoked from {pkg.name}"
            return None

        self.app.push_screen(ConfirmScreen("Revoke a permission", body(), verb="revoke",
                                           gone=gone, follow=body), self.in_worker(answered))

    def _cards_of(self, package: str) -> str:
        """The cards of ``package`` on every canvas, as a dialog names them."""
        cards = [n.id for n in self.engine.state.canvas.nodes(type="card")
                 if n.data["package"] == package]
        return ", ".join(map(ident, cards)) or "none on a canvas"

    def _permission_chosen(self, verb: str, binding_id: str) -> bool:
        """Whether the person is in the permissions table, where its cursor is their choice;
        if not, it takes the focus and the person is told to choose there."""
        perms = self.query_one("#permissions", DataTable)
        if perms.has_focus:
            return True
        # The cursor of a table the person is not looking at picks nothing.
        perms.focus()
        self.notify(f"Choose the permission to {verb} in this table, then press "
                    f"{key_hint(self, binding_id)}.", severity="warning")
        return False

    def action_grant(self) -> None:
        """Grant the selected permission (optional, or revoked earlier) after a confirmation."""
        pkg, permission = self.selected_package(), self.selected_permission()
        if pkg is None or permission is None:
            self.notify("Select a package and one of its permissions.", severity="warning")
            return
        if not self.consent_allowed() or not self._permission_chosen("grant", "grant.grant"):
            return
        if not pkg.installed or pkg.manifest is None:
            self.notify(f"{pkg.name} is not installed; press i for its install review.",
                        severity="warning")
            return
        if permission in self.engine.state.grants.get(pkg.name, set()):
            self.notify(f"{permission} is already granted to {pkg.name}.", severity="warning")
            return
        spec = PERMISSIONS[permission]
        manifest = pkg.manifest
        optional = permission in manifest.optional
        # The version this dialog shows: the grant names it, so a version approved while
        # the dialog is open (the package's state changes in place) is refused as stale.
        shown = pkg.hash

        def body() -> str:
            return (f"Grant {permission} ({spec.risk} risk) to {pkg.name} {manifest.version}"
                    + (" (an optional permission)" if optional else
                       " (required; revoked before)")
                    + f"?\n\n{permission_title(manifest, permission)}\nUsers see: "
                    f"{spec.users_see}\n\ncontent hash {shown}\n\nEvery card of the package "
                    f"({self._cards_of(pkg.name)}) may use it from now on.")

        risk = (f"{permission} is high risk: {permission_title(pkg.manifest, permission)}"
                if spec.risk == "high" else None)

        async def grant() -> bool:
            # The yes was given to the cards the dialog named when it was pressed; the
            # operator check (seconds, under tmux) comes between, and a card of the package
            # added elsewhere meanwhile would get the permission unnamed. Caught up first:
            # another program's change counts the moment it is committed.
            self.engine.catch_up()
            if body() != dialog.shown_text:
                self.notify(f"{permission}: not granted to {pkg.name} — the cards it goes to "
                            "changed since the dialog named them (a card added or removed "
                            f"elsewhere). Now: {self._cards_of(pkg.name)}. Press "
                            f"{key_hint(self, 'grant.grant')} to read it again.",
                            title="grant: grant", severity="warning", timeout=15)
                return False
            await self.engine.grant(pkg.name, permission, review_hash=shown)
            return True

        async def answered(yes: bool | None) -> None:
            if yes:
                await self.gate.consent("grant: grant", grant)
                if permission in self.engine.state.grants.get(pkg.name, set()):
                    self.notify(f"{permission} granted to {pkg.name}", title="grant: grant")
                self.refresh_safely()

        def gone() -> str | None:
            now = self.engine.state.packages.get(pkg.name)
            if now is None or not now.installed:
                return f"{pkg.name} was removed"
            if now.hash != shown:
                return f"another version of {pkg.name} was approved (hash {now.hash})"
            if permission in self.engine.state.grants.get(pkg.name, set()):
                return f"{permission} was granted to {pkg.name}"
            return None

        dialog = ConfirmScreen("Grant a permission", body(), verb="grant", risk=risk, gone=gone,
                               follow=body)
        self.app.push_screen(dialog, self.in_worker(answered))

    def action_approve_update(self) -> None:
        """Show the pending version's whole diff, then approve that very hash."""
        pkg = self.selected_package()
        update = self.engine.pending_update(pkg.name) if pkg else None
        if pkg is None or update is None or pkg.manifest is None or pkg.pending is None:
            self.notify("The selected package has no pending version.", severity="warning")
            return
        if not self.consent_allowed():
            return
        dialog = UpdateScreen(pkg.name, pkg.manifest, pkg.pending, update,
                              self.engine.state.grants.get(pkg.name, set()))

        async def approve() -> Diff | None:
            # The yes was given to what the dialog said of the grants when it was pressed;
            # the operator check (seconds, under tmux) comes between, and a grant or a
            # revoke made elsewhere meanwhile changes what the approval grants. Caught up
            # first: another program's change counts the moment it is committed.
            self.engine.catch_up()
            now = dialog.grants_with(self.engine.state.grants.get(pkg.name, set()))
            if now != dialog.shown_grants:
                self.notify(f"{pkg.name}: not approved — what approving grants changed "
                            "since the dialog said it (a grant or a revoke made elsewhere). "
                            f"Now: {now} Press {key_hint(self, 'package.approve')} to "
                            "read it again.", title="package: approve update",
                            severity="warning", timeout=15)
                return None
            return await self.engine.approve(pkg.name, review_hash=update.pending_hash)

        async def answered(yes: bool | None) -> None:
            if yes:
                await self.gate.consent("package: approve update", approve)
                self.refresh_safely()

        self.app.push_screen(dialog, self.in_worker(answered))

    def _decline_update(self, name: str) -> None:
        """Say no to an installed package's pending version, after a confirmation."""
        update = self.engine.pending_update(name)
        pkg = self.engine.state.packages.get(name)
        if update is None or pkg is None:
            return
        body = (f"Decline the pending version of {name} (hash {update.pending_hash})?\n\n"
                f"The package stays at the version you approved (hash {pkg.hash}); its cards "
                "work again as that version, with the grants they have now. The decline is "
                "recorded in the consent history.")

        async def answered(yes: bool | None) -> None:
            if yes:
                done = await self.gate.consent("package: decline update", lambda: (
                    self.engine.decline_update(name, pending_hash=update.pending_hash)))
                if done is not None:
                    self.notify(f"{name}: the pending version is declined",
                                title="package: decline update")
                self.refresh_safely()

        def gone() -> str | None:
            now = self.engine.pending_update(name)
            if now is not None and now.pending_hash == update.pending_hash:
                return None
            return (f"the pending version of {name} (hash {update.pending_hash}) was "
                    + ("replaced by another" if now is not None else "approved or declined"))

        self.app.push_screen(ConfirmScreen("Decline a pending update", body, verb="decline",
                                           gone=gone), self.in_worker(answered))

    def action_review(self) -> None:
        """Open the install review of the selected package."""
        pkg = self.selected_package()
        if pkg is None:
            return
        if pkg.installed and not pkg.is_pending:
            self.notify(f"{pkg.name} is installed; its permissions are listed here.")
            return
        if pkg.is_pending:
            self.action_approve_update()
            return
        self.app.push_screen(ReviewScreen(pkg.name))

    def action_remove_package(self) -> None:
        """Withdraw the selected offered package after a confirmation."""
        pkg = self.selected_package()
        if pkg is None:
            self.notify("No package is selected.", severity="warning")
            return
        if not self.consent_allowed():
            return
        if pkg.installed and pkg.is_pending:
            self._decline_update(pkg.name)
            return
        if pkg.installed:
            self.notify(f"{pkg.name} is installed; only an offered package can be removed. "
                        "Revoke its permissions with v instead.", severity="warning")
            return
        version, shown = str(pkg.raw.get("version", "?")), pkg.hash

        def body() -> str:
            # Read anew on each store change (`follow`): a card added or removed elsewhere
            # while the dialog is open is named as the engine has it.
            cards = [n.id for n in self.engine.state.canvas.nodes(type="card")
                     if n.data["package"] == pkg.name]
            return (f"Remove the offered package {pkg.name} {version}?\n\ncontent hash "
                    f"{shown}\n\nIt is no longer offered for install (until it is offered "
                    "again); the removal is recorded in the consent history. "
                    + (f"Its cards on a canvas ({', '.join(map(ident, cards))}) stay there "
                       "and stay refused, as its package is not installed." if cards else
                       "No card of it is on a canvas."))

        async def answered(yes: bool | None) -> None:
            if yes:
                # Bound to the offer shown: one offered since is `stale`, not removed.
                await self.gate.consent("package: remove", lambda: self.engine.remove_package(
                    pkg.name, review_hash=shown))
                if pkg.name not in self.engine.state.packages:
                    self.notify(f"{pkg.name} removed", title="package: remove")
                self.refresh_safely()

        def gone() -> str | None:
            now = self.engine.state.packages.get(pkg.name)
            if now is None:
                return f"{pkg.name} was removed"
            if now.installed:
                return f"{pkg.name} was installed"
            if now.hash != shown:
                return f"{pkg.name} was offered anew (hash {now.hash})"
            return None

        self.app.push_screen(ConfirmScreen("Remove an offered package", body(), verb="remove",
                                           gone=gone, follow=body), self.in_worker(answered))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in self.CONSENT_ACTIONS and not self.consent_allowed():
            return False  # read-only: hidden from the footer and not run
        return True


def _subject(subject: dict[str, object]) -> str:
    """``permission=network, granted=agents.prompt, fs.read`` — no Python lists."""
    parts = []
    for key, value in subject.items():
        if key == "package" or value is None:
            continue
        shown = ", ".join(str(v) for v in value) if isinstance(value, (list, tuple)) else value
        parts.append(f"{key}={shown if shown != '' else '(none)'}")
    return "; ".join(parts)


def _result(entry: dict[str, object]) -> str:
    """What came of a consent action: ``declined`` is not ``ok``."""
    if not entry["accepted"]:
        return f"refused {entry.get('code') or ''}".strip()
    detail = entry.get("detail")
    return str(detail) if detail else "ok"
