"""The command line's write verbs: nodes, arrows, packages, calls and holds.

``arrowgate workspace add``, ``arrowgate node add|set|remove``, ``arrowgate arrow add|remove``,
``arrowgate package offer|review|install|grant|revoke|approve|decline``, ``arrowgate call``
and ``arrowgate hold list|approve|reject`` are thin clients: of the engine,
directly on the database (``--db``, like the other verbs), or of a running
``arrowgate serve`` (``--service ADDRESS``, a socket path or
``http://127.0.0.1:PORT``, with the operator's or a card's token from
``--token-file``). Both paths answer the same JSON (``--json``). The verbs that
only read (``package review``, ``hold list``) read ``--db`` as it stands, changing
nothing (`ViewBackend`).

Exit codes: 0 done; 1 a refusal or a finding (a refused call, a consent
action refused, a person who said no, a failure of the store or the
service); 2 usage or invalid input (bad arguments, no such node, a manifest
that is not valid, an address that is no service, a database a newer engine
migrated or this user cannot write). Errors go to standard error.

Verbs that give or widen consent, or change the canvas — ``workspace add``, ``node add``,
``node set``, ``node remove``, ``arrow add``, ``package install``, ``package grant``,
``package approve``, ``package decline`` and ``hold approve`` — first decide that a person operates this
process (`engine.effects.operator.operator_check`, as the TUI does) and refuse otherwise,
whether they then work on the database or through the service (which makes
its own check on the socket's peer as well). Verbs that only narrow consent
(arrow remove, revoke, reject) and those that give none (offer, call, list) do not.
(Removing a node destroys what a person put on the canvas, not only its arrows: the
engine takes it from the operator only, as it takes adding one. Declining an update puts
the approved version back, so that its cards work again: the engine takes that from the
operator only too.)
A verb that shows something before consenting (the install review, the
update's diff, the held prompt's full text) asks the person to confirm,
unless the hash of what they saw earlier is passed (``--review-hash``,
``--sha256``): then nothing is asked, and a different hash is ``stale``.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import ipaddress
import json
import sys
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import quote, urlsplit

from engine.app.common import UNUSABLE_STORE, with_reason
from engine.core.decision import CallDenied
from engine.core.errors import (
    ApprovalRefused,
    ConsentError,
    RequestRefused,
    StoreFailed,
    with_code,
)
from engine.core.prompts import Prompt
from engine.core.text import inert_lines, is_control, visible
from engine.effects.operator import operator_check
from engine.effects.userfile import FileRefused, read_user_bytes

__all__ = ["Backend", "Failure", "LocalBackend", "Reader", "ServiceBackend", "ViewBackend",
           "inert", "register", "service_transport", "text_sha256"]

#: Exit codes.
OK, REFUSED, USAGE = 0, 1, 2
#: Codes that mean "refused" (exit 1) rather than "invalid input" (exit 2).
_REFUSAL_CODES = frozenset({"APPROVAL_REFUSED", "REQUEST_REFUSED", "STORE_FAILED",
                            "PERMISSION_DENIED", "RATE_LIMITED", "SCOPE_REFUSED"})
#: A token file is a short line; anything bigger is not one.
_TOKEN_MAX = 4096
#: Seconds the service's client waits to connect, and for each read of an answer.
_TIMEOUT = 30.0


class Failure(Exception):
    """A verb that did not happen: the exit code, the message, and its JSON form."""

    def __init__(self, exit_code: int, message: str, data: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.exit_code = exit_code  #: 1 refused, 2 usage or invalid input
        self.data = data or {"message": message}  #: the error as JSON

    @classmethod
    def of(cls, exc: ConsentError) -> Failure:
        """The failure of an engine error: refusals exit 1, invalid input 2 (a database
        this code cannot use among them, as on every verb: `UNUSABLE_STORE`)."""
        if isinstance(exc, StoreFailed) and exc.reason in UNUSABLE_STORE:
            return cls(USAGE, exc.message, exc.to_json())
        refused = isinstance(exc, (ApprovalRefused, RequestRefused, CallDenied, StoreFailed)) \
            or exc.code in _REFUSAL_CODES
        return cls(REFUSED if refused else USAGE, exc.message, exc.to_json())

    @classmethod
    def coded(cls, exit_code: int, code: str, text: str, *, reason: str | None = None,
              json_text: str | None = None) -> Failure:
        """A failure with an error code: its message is ``CODE: text`` (`with_code`).

        Its JSON form is ``code``, ``reason`` (when given) and ``message``:
        ``json_text`` when given (one without the local path), else ``text``.
        """
        data: dict[str, Any] = {"code": code}
        if reason is not None:
            data["reason"] = reason
        data["message"] = text if json_text is None else json_text
        return cls(exit_code, with_code(code, text), data)


def inert(text: str) -> str:
    """Text with every control or format character (but newline and tab) shown escaped.

    A held prompt is shown whole and only as text: an escape sequence,
    a carriage return or a bidirectional override in it cannot restyle,
    overwrite or reorder what the person reads (SPEC §7).
    """
    out = []
    for ch in text:
        if ch in "\n\t":
            out.append(ch)
        elif ch == "\\" or is_control(ch):
            code = ord(ch)
            out.append("\\\\" if ch == "\\" else
                       f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000
                       else f"\\U{code:08x}")
        else:
            out.append(ch)
    return "".join(out)


def _shown(text: str) -> str:
    """A verb's text answer as a terminal shows it, inert: every control or format
    character but newline and tab as its visible stand-in (`visible`), and nothing else
    changed — so text `inert` already escaped (a held prompt) is printed as it was."""
    if not any(is_control(ch) and ch not in "\n\t" for ch in text):
        return text
    return "".join(visible(ch) if is_control(ch) and ch not in "\n\t" else ch for ch in text)


def text_sha256(text: str) -> str:
    """Hex SHA-256 of a prompt text as UTF-8 (what a hold approval names)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


# ------------------------------------------------------------------ backends
class Backend(Protocol):
    """What the verbs need, from the engine or from the service."""

    async def add_workspace(self, body: dict[str, Any]) -> dict[str, Any]: ...
    async def add_node(self, workspace: str, node: dict[str, Any]) -> dict[str, Any]: ...
    async def set_node(self, node_id: str, fields: dict[str, Any]) -> dict[str, Any]: ...
    async def remove_node(self, node_id: str) -> None: ...
    async def add_arrow(self, workspace: str, arrow: dict[str, Any]) -> dict[str, Any]: ...
    async def remove_arrow(self, arrow_id: str) -> None: ...
    async def offer(self, folder: Path) -> dict[str, Any]: ...
    async def review(self, name: str) -> dict[str, Any]: ...
    async def install(self, name: str, grant: str | list[str],
                      review_hash: str) -> dict[str, Any]: ...
    async def grant(self, name: str, permission: str, review_hash: str) -> None: ...
    async def revoke(self, name: str, permission: str) -> None: ...
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

    async def set_node(self, node_id: str, fields: dict[str, Any]) -> dict[str, Any]:
        """Change a node's fields."""
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
            return {"package": name, "state": "pending", "hash": update.pending_hash}
        await self.engine.offer(name, package.manifest_text, digests)
        return {"package": name, "state": "available",
                "hash": self.engine.state.packages[name].hash}

    async def review(self, name: str) -> dict[str, Any]:
        """The install review of an offered package."""
        review = await self.engine.review(name)
        return {**review.to_json(), "text": review.text}

    async def install(self, name: str, grant: str | list[str],
                      review_hash: str) -> dict[str, Any]:
        """Install what the review with ``review_hash`` showed (else ``stale``)."""
        review = await self.engine.install(name, grant=grant, review_hash=review_hash)
        return {**review.to_json(), "granted": sorted(self.engine.state.grants.get(name, ()))}

    async def grant(self, name: str, permission: str, review_hash: str) -> None:
        """Grant one declared permission."""
        await self.engine.grant(name, permission, review_hash=review_hash)

    async def revoke(self, name: str, permission: str) -> None:
        """Revoke a permission."""
        await self.engine.revoke(name, permission)

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
        approved = await self.engine.decline_update(name, pending_hash=pending_hash)
        return {"package": name, "hash": approved, "declined": True}

    async def call(self, body: dict[str, Any]) -> dict[str, Any]:
        """A card's call; the Decision as JSON."""
        decision = await self.engine.call(body["card"], body["call"], body.get("target"),
                                          body.get("args"), context=body.get("context"))
        return decision.to_json(nulls=True)  # the keys --service prints

    async def holds(self) -> list[dict[str, Any]]:
        """Held prompts, oldest first."""
        return [_hold(p) for p in self.engine.prompts(state="held")]

    async def approve_hold(self, prompt_id: str, digest: str) -> dict[str, Any]:
        """Approve a held prompt by the digest of the text shown."""
        return (await self.engine.approve_hold(prompt_id, text_sha256=digest)).to_json(nulls=True)

    async def reject_hold(self, prompt_id: str) -> dict[str, Any]:
        """Reject a held prompt."""
        return (await self.engine.reject_hold(prompt_id)).to_json(nulls=True)

    async def aclose(self) -> None:
        """Commit and close the database."""
        self.engine.close()


def _hold(prompt: Prompt) -> dict[str, Any]:
    """A held prompt as ``hold list`` answers it."""
    return {"id": prompt.id, "card": prompt.card, "package": prompt.package,
            "arrow": prompt.arrow, "agent": prompt.agent, "text": prompt.text,
            "text_sha256": prompt.text_sha256, "deadline": prompt.deadline}


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
        no longer be approved, and the next engine to open the store expires them."""
        held = self.view.state.open_prompts
        due = {p.id for p in held.due(self.view.clock())}
        return [_hold(p) for p in held.in_state("held") if p.id not in due]

    async def aclose(self) -> None:
        """Close the database (nothing was written)."""
        self.view.close()


def service_transport(address: str) -> tuple[str, Any]:
    """The base URL and httpx transport for ``--service`` (a socket path or loopback URL).

    Raises:
        Failure: the address is neither a socket path nor ``http://`` on loopback
            (the operator's token is never sent anywhere else).
    """
    import httpx

    if "://" not in address:
        return "http://arrowgate", httpx.AsyncHTTPTransport(uds=address)
    parts = urlsplit(address)
    host = parts.hostname or ""
    try:
        loopback = host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = False
    try:
        port = parts.port
    except ValueError:
        port = None
    if parts.scheme != "http" or not loopback or port is None or parts.path not in ("", "/"):
        raise Failure(USAGE, f"--service {address!r}: give the service's socket path or "
                             "http://127.0.0.1:PORT (a loopback address)")
    return f"http://{parts.netloc}", httpx.AsyncHTTPTransport()


class ServiceBackend:
    """A running ``arrowgate serve``, over its socket or loopback port."""

    def __init__(self, address: str, token: str) -> None:
        import httpx

        base, transport = service_transport(address)
        self.address = address
        self.client = httpx.AsyncClient(base_url=base, transport=transport, timeout=_TIMEOUT,
                                        headers={"Authorization": f"Bearer {token}"})

    async def _request(self, method: str, path: str, body: Any = None) -> Any:
        import httpx

        try:
            # Encoded here, as the service reads it: a value JSON cannot carry
            # (NaN, Infinity, 1e999, a lone surrogate — `json.loads` reads them
            # from --args and --set) is the user's to fix, named before sending.
            content = None if body is None else \
                json.dumps(body, allow_nan=False, ensure_ascii=False).encode()
        except (ValueError, UnicodeEncodeError) as exc:
            raise Failure(USAGE, f"a value cannot be sent as JSON: {exc}") from exc
        headers = None if content is None else {"Content-Type": "application/json"}
        try:
            response = await self.client.request(method, path, content=content, headers=headers)
        except httpx.TimeoutException as exc:
            raise Failure(USAGE, f"cannot reach the service at {self.address}: no answer "
                                 f"within {_TIMEOUT:g} s ({type(exc).__name__})") from exc
        except httpx.HTTPError as exc:
            # Some of httpx's errors carry no text: their name says what happened.
            why = str(exc) or type(exc).__name__
            raise Failure(USAGE, f"cannot reach the service at {self.address}: {why}") from exc
        try:
            data = response.json() if response.content else None
        except ValueError:
            data = None
        if response.is_success:
            return data
        problem = data if isinstance(data, dict) else {}
        message = str(problem.get("message") or problem.get("detail") or problem.get("title")
                      or f"HTTP {response.status_code}")
        code = problem.get("code")
        if isinstance(code, str) and code and not message.startswith(code):
            message = with_code(code, message)
        refused = code in _REFUSAL_CODES or response.status_code in (401, 403, 409) \
            or response.status_code >= 500
        raise Failure(REFUSED if refused else USAGE, message,
                      {**problem, "status": response.status_code, "message": message})

    async def add_workspace(self, body: dict[str, Any]) -> dict[str, Any]:
        """``POST /v1/workspaces``."""
        return dict(await self._request("POST", "/v1/workspaces", body))

    async def add_node(self, workspace: str, node: dict[str, Any]) -> dict[str, Any]:
        """``POST /v1/workspaces/{ws}/nodes``."""
        return dict(await self._request("POST", f"/v1/workspaces/{_seg(workspace)}/nodes", node))

    async def set_node(self, node_id: str, fields: dict[str, Any]) -> dict[str, Any]:
        """``PATCH /v1/nodes/{id}``."""
        return dict(await self._request("PATCH", f"/v1/nodes/{_seg(node_id)}", fields))

    async def remove_node(self, node_id: str) -> None:
        """``DELETE /v1/nodes/{id}``."""
        await self._request("DELETE", f"/v1/nodes/{_seg(node_id)}")

    async def add_arrow(self, workspace: str, arrow: dict[str, Any]) -> dict[str, Any]:
        """``POST /v1/workspaces/{ws}/arrows``."""
        return dict(await self._request("POST", f"/v1/workspaces/{_seg(workspace)}/arrows",
                                        arrow))

    async def remove_arrow(self, arrow_id: str) -> None:
        """``DELETE /v1/arrows/{id}``."""
        await self._request("DELETE", f"/v1/arrows/{_seg(arrow_id)}")

    async def offer(self, folder: Path) -> dict[str, Any]:
        """``POST /v1/packages`` with the manifest and every file of the folder as text."""
        from engine.core.manifest import content_hash, file_digests
        from engine.effects.packages import read_package_folder

        package = read_package_folder(folder)
        raw = package.manifest
        files: dict[str, str] = {}
        for rel, data in package.files.items():
            try:
                files[rel] = data.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise Failure(USAGE, f"{folder / rel}: the service takes a package's files as "
                                     f"text and this one is not UTF-8 ({exc.reason})") from exc
        answer = await self._request("POST", "/v1/packages", {"manifest": raw, "files": files})
        out = dict(answer) if isinstance(answer, dict) else {}
        out.setdefault("package", raw.get("name") if isinstance(raw, dict) else None)
        out.setdefault("hash", content_hash(file_digests(dict(files))))
        return out

    async def review(self, name: str) -> dict[str, Any]:
        """``GET /v1/packages/{name}/review``."""
        return dict(await self._request("GET", f"/v1/packages/{_seg(name)}/review"))

    async def install(self, name: str, grant: str | list[str],
                      review_hash: str) -> dict[str, Any]:
        """``POST /v1/packages/{name}/install`` naming the review the person saw."""
        answer = await self._request("POST", f"/v1/packages/{_seg(name)}/install",
                                     {"grant": grant, "review_hash": review_hash})
        return dict(answer) if isinstance(answer, dict) else {"package": name}

    async def grant(self, name: str, permission: str, review_hash: str) -> None:
        """``POST /v1/packages/{name}/grant``."""
        await self._request("POST", f"/v1/packages/{_seg(name)}/grant",
                            {"permission": permission, "review_hash": review_hash})

    async def revoke(self, name: str, permission: str) -> None:
        """``POST /v1/packages/{name}/revoke``."""
        await self._request("POST", f"/v1/packages/{_seg(name)}/revoke",
                            {"permission": permission})

    async def pending(self, name: str) -> dict[str, Any]:
        """``GET /v1/packages/{name}/diff``."""
        return dict(await self._request("GET", f"/v1/packages/{_seg(name)}/diff"))

    async def approve(self, name: str, review_hash: str) -> dict[str, Any]:
        """``POST /v1/packages/{name}/approve`` naming the pending version seen."""
        answer = await self._request("POST", f"/v1/packages/{_seg(name)}/approve",
                                     {"review_hash": review_hash})
        return dict(answer) if isinstance(answer, dict) else {"package": name}

    async def decline(self, name: str, pending_hash: str) -> dict[str, Any]:
        """``POST /v1/packages/{name}/decline``: the pending version ``pending_hash`` is
        discarded (another one pending now is ``stale``).

        Its diff is asked for first: the route also declines an offered package's
        install, which this verb must not do (no version pending: ``nothing-pending``).
        """
        await self.pending(name)
        answer = await self._request("POST", f"/v1/packages/{_seg(name)}/decline",
                                     {"pending_hash": pending_hash})
        approved = answer.get("hash") if isinstance(answer, dict) else None
        return {"package": name, "hash": approved, "declined": True}

    async def call(self, body: dict[str, Any]) -> dict[str, Any]:
        """``POST /v1/calls``: the Decision."""
        return dict(await self._request("POST", "/v1/calls", body))

    async def holds(self) -> list[dict[str, Any]]:
        """``GET /v1/holds``."""
        answer = await self._request("GET", "/v1/holds")
        if isinstance(answer, dict):  # tolerate an envelope such as {"holds": [...]}
            answer = answer.get("holds", [])
        return [dict(h) for h in answer]

    async def approve_hold(self, prompt_id: str, digest: str) -> dict[str, Any]:
        """``POST /v1/holds/{id}/approve`` with the text digest."""
        return dict(await self._request("POST", f"/v1/holds/{_seg(prompt_id)}/approve",
                                        {"text_sha256": digest}))

    async def reject_hold(self, prompt_id: str) -> dict[str, Any]:
        """``POST /v1/holds/{id}/reject``."""
        return dict(await self._request("POST", f"/v1/holds/{_seg(prompt_id)}/reject", {}))

    async def aclose(self) -> None:
        """Close the connection."""
        await self.client.aclose()


def _seg(value: str) -> str:
    """One path segment, escaped (an id never walks to another route)."""
    return {".": "%2E", "..": "%2E%2E"}.get(value) or quote(value, safe="")


def _token(args: argparse.Namespace) -> str:
    from engine.app.common import default_db_path

    path = Path(args.token_file) if args.token_file else \
        Path(f"{Path(args.db) if args.db else default_db_path()}.operator-token")
    try:
        # As every file a person names: a FIFO or a device is refused, never waited on.
        # And private, as `arrowgate serve` writes it (0600) and ssh takes a key: the
        # operator's token in a file others may read is theirs to act as the operator.
        raw = read_user_bytes(path, limit=_TOKEN_MAX, private=True)
    except FileRefused as exc:
        if exc.problem.startswith(("has mode", "belongs to")):
            raise Failure(USAGE, f"the token file {path} {exc.problem}") from exc
        hint = "" if args.token_file else \
            " (give --token-file: the one `arrowgate serve` wrote, or --db of its database)"
        why = exc.problem.removeprefix("cannot be read: ")
        raise Failure(USAGE, f"cannot read the token file {path}: {why}{hint}") from exc
    token = raw.decode("utf-8", "replace").strip()
    if not token or any(c.isspace() for c in token):
        raise Failure(USAGE, f"the token file {path} does not hold one token")
    return token


def _backend(args: argparse.Namespace) -> Backend:
    if args.service:
        return ServiceBackend(args.service, _token(args))
    return LocalBackend(_local_path(args, writes=True))


def _reader(args: argparse.Namespace) -> Reader:
    """The backend of a verb that only reads: the service's, or a view of ``--db``."""
    import sqlite3

    if args.service:
        return ServiceBackend(args.service, _token(args))
    path = _local_path(args, writes=False)
    try:
        return ViewBackend(path)
    except sqlite3.DatabaseError as exc:  # a read-only folder with changes waiting, ...
        raise Failure(USAGE, f"the database cannot be used: {exc}") from exc


def _local_path(args: argparse.Namespace, *, writes: bool) -> Path:
    """The database ``--db`` names, checked as every other verb's is: never tables
    written into another program's SQLite file or a text file a typo named."""
    from engine.app.common import CliError, db_path

    try:  # the first verb on a new database creates it
        return db_path(args, create=args.command == "workspace", writes=writes)
    except CliError as exc:
        message = exc.message if args.db or args.command == "workspace" else \
            f"{exc.message} (or give --db, or --service)"
        raise Failure(USAGE, message) from exc


# --------------------------------------------------------------- the verbs
def _require_operator(verb: str) -> None:
    check = operator_check()
    if not check.ok:
        raise Failure(REFUSED, f"{verb} refused: {check.reason}",
                      {"code": "APPROVAL_REFUSED", "reason": "not-operator",
                       "message": f"{verb} refused: {check.reason}"})


def _confirm(out: Any, question: str) -> None:
    print(f"{_shown(question)} [y/N] ", end="", file=out, flush=True)
    answer = sys.stdin.readline().strip().lower()
    if answer not in ("y", "yes"):
        raise Failure(REFUSED, "not confirmed: nothing was changed",
                      {"code": "NOT_CONFIRMED", "message": "not confirmed: nothing was changed"})


def _fields(pairs: list[str] | None) -> dict[str, Any]:
    """The fields ``--set KEY=VALUE`` name, each once, VALUE as JSON or a bare string.

    A field given twice, or a key named twice in a VALUE that is JSON, is refused: its
    last value would count, and a person reading the command line may take the first
    (``--set dangerous=true --set dangerous=false``), as in `_json_object`.
    """
    from engine.core.uniquekeys import loads_unique
    from engine.service.jsonread import loads

    out: dict[str, Any] = {}
    for pair in pairs or []:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise Failure(USAGE, f"--set {pair!r}: write KEY=VALUE")
        if key in out:
            raise Failure(USAGE, f"--set {key!r} is given twice: name each field once "
                                 "(which value would count is not what a reader sees)")
        try:
            # Not json.loads: nested past the recursion limit, it raises RecursionError.
            out[key] = loads(value)
        except ValueError:
            out[key] = value  # a bare word is a string: name=Claude
            continue
        try:
            loads_unique(value)
        except ValueError as exc:
            raise Failure(USAGE, f"--set {key!r}: {exc}") from None
        except RecursionError:  # `loads` read it at the very edge of the stack
            raise Failure(USAGE, f"--set {key!r}: nested too deeply") from None
    return out


def _json_object(text: str, option: str) -> dict[str, Any]:
    """The JSON object an option holds, read as the service reads a request body."""
    from engine.core.uniquekeys import loads_unique
    from engine.service.jsonread import loads

    try:
        # Strictly: NaN, Infinity, a lone surrogate and nesting past 1,024 levels
        # are not JSON; then each key once (within those levels: safe to recurse).
        value = loads(text, strict=True)
        loads_unique(text)
    except ValueError as exc:
        raise Failure(USAGE, f"{option}: not JSON: {exc}") from None
    if not isinstance(value, dict):
        raise Failure(USAGE, f"{option}: must be a JSON object")
    return value


def _review_text(review: dict[str, Any]) -> str:
    if isinstance(review.get("text"), str):
        return str(review["text"])
    if isinstance(review.get("lines"), list):
        return "\n".join(str(line) for line in review["lines"])
    return json.dumps(review, indent=2)


def _grant_text(review: dict[str, Any], name: str, permission: str) -> str:
    """What a person grants: the version installed, its hash, and the permission as that
    version declares it (its line of the review: risk, hosts, what users see)."""
    lines = _review_text(review).splitlines()
    said = [line for line in lines if line.startswith(f"  {permission} (")]
    return "\n".join([f"{name} {review.get('version')} ({review.get('hash')})",
                      *(said or [f"  {permission}: not declared by this version"])])


async def _pending_seen(backend: Backend, name: str, what: str, out: Any) -> str:
    """Show the person ``name``'s pending version (its hash and diff), ask whether to
    ``what`` it, and return the hash they saw: the one the answer is bound to."""
    pending = await backend.pending(name)
    lines = pending.get("lines")
    print(_shown(f"{name}: new version {pending.get('pending_hash')}"), file=out, flush=True)
    print(_shown("\n".join(str(x) for x in lines)) if isinstance(lines, list) and lines
          else "no change in declarations (files changed)", file=out, flush=True)
    _confirm(out, f"{what} this version of {name}?")
    return str(pending.get("pending_hash"))


async def _read(args: argparse.Namespace, reader: Reader) -> tuple[int, Any, str]:
    """Carry out a verb that only reads (`_READS`): (exit code, JSON answer, text answer)."""
    if args.command == "package":  # package review
        review = await reader.review(args.name)
        return OK, review, _review_text(review) + f"\nreview hash: {review.get('hash')}"
    holds = await reader.holds()  # hold list
    blocks = [f"{h['id']}  card {h.get('card')} ({h.get('package')}) -> agent "
              f"{h.get('agent')} on arrow {h.get('arrow')}\n  sha256 {h.get('text_sha256')}"
              f"\n  " + inert(str(h.get("text", ""))).replace("\n", "\n  ")
              for h in holds]
    return OK, holds, "\n".join(blocks) or "no held prompts"


async def _run(args: argparse.Namespace, backend: Backend) -> tuple[int, Any, str]:
    """Carry out a verb: (exit code, JSON answer, text answer)."""
    # What a person is shown before consenting goes to stderr under --json,
    # so that standard output holds the JSON answer alone.
    out_file = sys.stderr if args.json else sys.stdout

    def show(text: str) -> None:
        print(_shown(text), file=out_file, flush=True)  # what is consented to, inert

    verb = f"{args.command} {args.action}" if getattr(args, "action", None) else args.command
    if verb == "workspace add":
        body: dict[str, Any] = {"id": args.id, "folder": str(Path(args.folder).resolve())}
        if args.settings is not None:
            body["settings"] = _json_object(args.settings, "--settings")
        out = await backend.add_workspace(body)
        return OK, out, f"workspace {args.id} ({body['folder']})"
    if verb == "node add":
        fields = _fields(args.set)
        for given in ("id", "type"):
            if given in fields:  # never silently another node than the one named
                raise Failure(USAGE, f"node add: the {given} is the positional "
                                     f"{given.upper()}, not --set {given}=…")
        node = {"id": args.id, "type": args.type, **fields}
        out = await backend.add_node(args.workspace, node)
        return OK, out, f"node {args.id} ({args.type}) added to {args.workspace}"
    if verb == "node set":
        fields = _fields(args.set)
        if not fields:
            raise Failure(USAGE, "node set: give at least one --set KEY=VALUE")
        out = await backend.set_node(args.id, fields)
        return OK, out, f"node {args.id}: " + ", ".join(f"{k}={json.dumps(v)}"
                                                          for k, v in fields.items())
    if verb == "node remove":
        await backend.remove_node(args.id)
        return OK, {"id": args.id, "removed": True}, f"node {args.id} removed"
    if verb == "arrow add":
        arrow: dict[str, Any] = {"id": args.id, "from": args.src, "to": args.dst}
        if args.from_port is not None or args.to_port is not None:
            arrow.update(from_port=args.from_port, to_port=args.to_port)
        out = await backend.add_arrow(args.workspace, arrow)
        return OK, out, f"arrow {args.id}: {args.src} -> {args.dst}"
    if verb == "arrow remove":
        await backend.remove_arrow(args.id)
        return OK, {"id": args.id, "removed": True}, f"arrow {args.id} removed"
    if verb == "package offer":
        folder = Path(args.folder)
        if not (folder / "manifest.json").is_file():
            raise Failure(USAGE, f"{folder}: a package folder holds a manifest.json")
        out = await backend.offer(folder)
        note = " (an update: approve it with `package approve`)" \
            if out.get("state") == "pending" else ""
        return OK, out, f"offered {out.get('package')} ({out.get('hash')}){note}"
    if verb == "package install":
        grant: str | list[str] = args.grant if args.grant in ("required", "all") else \
            [g.strip() for g in args.grant.split(",") if g.strip()]
        review = await backend.review(args.name)
        digest = args.review_hash
        if digest is None:
            show(_review_text(review))
            show(f"review hash: {review.get('hash')}")
            _confirm(out_file, f"install {args.name}, granting {args.grant}?")
            digest = str(review.get("hash"))
        out = await backend.install(args.name, grant, digest)
        return OK, out, f"installed {args.name} ({digest})"
    if verb == "package grant":
        digest = args.review_hash
        if digest is None:
            review = await backend.review(args.name)
            show(_grant_text(review, args.name, args.permission))
            _confirm(out_file, f"grant {args.permission} to {args.name}?")
            digest = str(review.get("hash"))
        await backend.grant(args.name, args.permission, digest)
        return OK, {"package": args.name, "granted": args.permission}, \
            f"{args.name}: granted {args.permission}"
    if verb == "package revoke":
        await backend.revoke(args.name, args.permission)
        return OK, {"package": args.name, "revoked": args.permission}, \
            f"{args.name}: revoked {args.permission}"
    if verb == "package approve":
        digest = args.review_hash or await _pending_seen(backend, args.name, "approve",
                                                          out_file)
        out = await backend.approve(args.name, digest)
        return OK, out, f"approved {args.name} ({digest})"
    if verb == "package decline":
        digest = args.pending_hash or await _pending_seen(backend, args.name, "decline",
                                                           out_file)
        out = await backend.decline(args.name, digest)
        return OK, out, f"declined the update of {args.name}; {out.get('hash')} holds again"
    if verb == "call":
        body = {"card": args.card, "call": args.call}
        if args.target is not None:
            body["target"] = args.target
        if args.args is not None:
            body["args"] = _json_object(args.args, "--args")
        if args.context is not None:
            body["context"] = args.context
        decision = await backend.call(body)
        allowed = decision.get("outcome") in ("ok", "queued", "held")
        text = f"{decision.get('outcome')}" + (f": {decision['message']}"
                                               if decision.get("message") else "")
        if not allowed:
            text = with_reason(text, decision.get("reason"))
        return (OK if allowed else REFUSED), decision, text
    if verb == "hold approve":
        digest = args.sha256
        if digest is None:
            hold = next((h for h in await backend.holds() if h.get("id") == args.id), None)
            if hold is None:
                raise Failure.coded(USAGE, "NOT_FOUND", f"no held prompt {args.id}")
            text = str(hold.get("text", ""))
            show(f"held prompt {args.id}: card {hold.get('card')} ({hold.get('package')}) -> "
                  f"agent {hold.get('agent')} on arrow {hold.get('arrow')}")
            show("----- the whole text -----")
            show(inert(text))
            show("----- end -----")
            _confirm(out_file, f"approve prompt {args.id}?")
            # The digest of the text shown here, not one the service reports.
            digest = text_sha256(text)
        decision = await backend.approve_hold(args.id, digest)
        allowed = decision.get("outcome") in ("ok", "queued", "held")
        # A re-check at approval (SPEC §7) or a full queue cancels the prompt: said as
        # such, never as an approval that went through.
        said = (decision.get("outcome") if allowed
                else f"{(decision.get('value') or {}).get('state', 'cancelled')} at its approval —")
        text = f"prompt {args.id}: {said} {decision.get('message', '')}"
        return (OK if allowed else REFUSED), decision, \
            text.rstrip() if allowed else with_reason(text.rstrip(), decision.get("reason"))
    if verb == "hold reject":
        decision = await backend.reject_hold(args.id)
        return OK, decision, f"prompt {args.id}: rejected"
    raise Failure(USAGE, f"unknown verb {verb!r}")  # argparse's choices stop this first


#: Verbs that give or widen consent, or change the canvas: a person must operate
#: this process.
_CONSENT = frozenset({"workspace add", "node add", "node set", "node remove", "arrow add",
                      "package install", "package grant", "package approve", "package decline",
                      "hold approve"})


#: Verbs that only read: on ``--db`` they read a view of the store (`ViewBackend`), which
#: changes nothing — no migration, no expired hold, no file beside the database.
_READS = frozenset({"package review", "hold list"})


async def _carry_out(args: argparse.Namespace, verb: str) -> tuple[int, Any, str]:
    """The verb on its backend, closed after: (exit code, JSON answer, text answer)."""
    if verb in _READS:
        reader = _reader(args)
        try:
            return await _read(args, reader)
        finally:
            await reader.aclose()
    backend = _backend(args)
    try:
        return await _run(args, backend)
    finally:
        await backend.aclose()


def _cmd(args: argparse.Namespace) -> int:
    verb = f"{args.command} {args.action}" if getattr(args, "action", None) else args.command
    try:
        if verb in _CONSENT:
            _require_operator(verb)
        code, data, text = asyncio.run(_carry_out(args, verb))
    except ConsentError as exc:
        return _fail(args, Failure.of(exc))
    except Failure as exc:
        return _fail(args, exc)
    except FileRefused as exc:  # a FIFO, device, huge file or outside link: named
        return _fail(args, Failure(USAGE, str(exc)))
    except OSError as exc:  # a package folder or file that cannot be read
        return _fail(args, Failure(USAGE, f"cannot read {exc.filename or ''}: "
                                          f"{exc.strerror or exc}".replace("read : ", "read: ")))
    # The text echoes names a person or a script passed (a card id, a folder) and what
    # the service answered: shown inert, as errors are.
    print(json.dumps(data, sort_keys=True) if args.json else _shown(text))
    return code


def _fail(args: argparse.Namespace, failure: Failure) -> int:
    if args.json:
        print(json.dumps({"error": failure.data}, sort_keys=True), file=sys.stderr)
    else:
        # Its lines may echo a file's name or an id a sender chose: inert and bounded.
        text = with_reason(str(failure), failure.data.get("reason"))
        print(f"arrowgate: {inert_lines(text)}", file=sys.stderr)
    return failure.exit_code


# ----------------------------------------------------------- the parsers
def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--db", help="work on this database directly (default: the embedded "
                                "default, $ARROWGATE_DB)")
    p.add_argument("--service", metavar="ADDRESS",
                   help="go through a running `arrowgate serve`: its socket path or "
                        "http://127.0.0.1:PORT")
    p.add_argument("--token-file", metavar="PATH",
                   help="with --service: the bearer token (default: the database path "
                        "plus .operator-token)")
    p.add_argument("--json", action="store_true", help="answer in JSON (errors too, on stderr)")
    p.set_defaults(fn=_cmd)
    _text_only(p)  # every verb's arguments are added by now: `_common` comes last


#: The write verbs' arguments that name a file or an address: any bytes a name may hold.
_PATHS = frozenset({"db", "service", "token_file", "folder", "help"})


def _text_only(parser: argparse.ArgumentParser) -> None:
    """Give every argument of ``parser`` that takes a value and names no file
    (`_PATHS`) the type `text_argument`: an id, name, permission, ``--set`` or hash
    that is not UTF-8 is a usage error naming it."""
    from engine.app.common import text_argument

    for action in parser._actions:
        if action.dest not in _PATHS and action.nargs != 0 and action.type is None \
                and not isinstance(action, argparse._SubParsersAction):
            action.type = text_argument


def register(sub: Any) -> None:
    """Add the write verbs (node, arrow, package, call, hold) to the command line."""
    workspace = sub.add_parser("workspace", help="create a workspace")
    acts = workspace.add_subparsers(dest="action", required=True, metavar="ACTION",
                                help="what to do; `--help` after it explains each")
    p = acts.add_parser("add", help="create a workspace with its project folder (operator)")
    p.add_argument("id", help="the new workspace's id")
    p.add_argument("folder", help="its project folder (made absolute)")
    p.add_argument("--settings", metavar="JSON",
                   help='settings as a JSON object, e.g. {"card_cap": 50}')
    _common(p)
    node = sub.add_parser("node", help="add, change or remove a node on a canvas")
    acts = node.add_subparsers(dest="action", required=True, metavar="ACTION",
                                help="what to do; `--help` after it explains each")
    p = acts.add_parser("add", help="put a node on a workspace's canvas (operator)")
    p.add_argument("workspace", help="the workspace id")
    p.add_argument("id", help="the new node's id")
    p.add_argument("type", help="card, agent, terminal, note, todo, taskboard or sticky")
    p.add_argument("--set", action="append", metavar="KEY=VALUE",
                   help="a field, VALUE as JSON or a bare string (package=acme.standup, "
                        "dangerous=true); repeat for more")
    _common(p)
    p = acts.add_parser("set", help="change fields of a node (operator)")
    p.add_argument("id", help="the node's id")
    p.add_argument("--set", action="append", metavar="KEY=VALUE", required=True,
                   help="a field to change, VALUE as JSON or a bare string; repeat for more")
    _common(p)
    p = acts.add_parser("remove", help="remove a node and its arrows (cancels their prompts)")
    p.add_argument("id", help="the node's id")
    _common(p)

    arrow = sub.add_parser("arrow", help="draw or remove an arrow")
    acts = arrow.add_subparsers(dest="action", required=True, metavar="ACTION",
                                help="what to do; `--help` after it explains each")
    p = acts.add_parser("add", help="draw an arrow between two nodes (operator)")
    p.add_argument("workspace", help="the workspace both nodes are in")
    p.add_argument("id", help="the new arrow's id")
    p.add_argument("src", metavar="FROM", help="the node it starts at")
    p.add_argument("dst", metavar="TO", help="the node it ends at")
    p.add_argument("--from-port", help="a port arrow's output port (with --to-port)")
    p.add_argument("--to-port", help="a port arrow's input port (with --from-port)")
    _common(p)
    p = acts.add_parser("remove", help="remove an arrow (cancels prompts on it)")
    p.add_argument("id", help="the arrow's id")
    _common(p)

    package = sub.add_parser("package", help="offer, review, install, grant, revoke, approve, "
                                              "decline")
    acts = package.add_subparsers(dest="action", required=True, metavar="ACTION",
                                help="what to do; `--help` after it explains each")
    p = acts.add_parser("offer", help="offer the package in a folder with a manifest.json")
    p.add_argument("folder", help="the package folder")
    _common(p)
    p = acts.add_parser("review", help="show an offered package's install review and its hash")
    p.add_argument("name", help="the package name")
    _common(p)
    p = acts.add_parser("install", help="show the review and install (operator)")
    p.add_argument("name", help="the package name")
    p.add_argument("--grant", default="required",
                   help="required (default), all, or a comma-separated list of permissions "
                        "holding every required one")
    p.add_argument("--review-hash", metavar="SHA256",
                   help="the hash of the review you saw (`package review`); then nothing is "
                        "asked, and another hash is refused as stale")
    _common(p)
    for action, what in (("grant", "show a declared permission and grant it (operator)"),
                         ("revoke", "revoke a permission")):
        p = acts.add_parser(action, help=what)
        p.add_argument("name", help="the package name")
        p.add_argument("permission", help="the permission, e.g. clipboard.write")
        if action == "grant":
            p.add_argument("--review-hash", metavar="SHA256",
                           help="the hash of the version you saw (`package review`); then "
                                "nothing is asked, and another version is refused as stale")
        _common(p)
    p = acts.add_parser("approve", help="show the pending version's diff and approve it "
                                        "(operator)")
    p.add_argument("name", help="the package name")
    p.add_argument("--review-hash", metavar="SHA256",
                   help="the pending version's hash you reviewed; then nothing is asked")
    _common(p)
    p = acts.add_parser("decline", help="show the pending version's diff and discard it: the "
                                        "approved one holds again (operator)")
    p.add_argument("name", help="the package name")
    p.add_argument("--pending-hash", metavar="SHA256",
                   help="the pending version's hash you looked at; then nothing is asked, and "
                        "another version pending now is refused as stale")
    _common(p)

    p = sub.add_parser("call", help="make a card's call; prints the Decision (exit 1 if refused)")
    p.add_argument("card", help="the calling card's id")
    p.add_argument("call", help="the call, e.g. agents.prompt")
    p.add_argument("target", nargs="?", help="the node it reaches, if any")
    p.add_argument("--args", metavar="JSON", help='the arguments, a JSON object: {"text": "hi"}')
    p.add_argument("--context", metavar="ID", help="the tool call this call runs in")
    _common(p)

    hold = sub.add_parser("hold", help="list, approve or reject held prompts")
    acts = hold.add_subparsers(dest="action", required=True, metavar="ACTION",
                                help="what to do; `--help` after it explains each")
    p = acts.add_parser("list", help="held prompts with their whole text and its SHA-256")
    _common(p)
    p = acts.add_parser("approve", help="show the whole text and approve it by its SHA-256 "
                                        "(operator)")
    p.add_argument("id", help="the held prompt's id")
    p.add_argument("--sha256", metavar="HEX",
                   help="the SHA-256 of the text you saw (`hold list`); then nothing is asked")
    _common(p)
    p = acts.add_parser("reject", help="reject a held prompt")
    p.add_argument("id", help="the held prompt's id")
    _common(p)
