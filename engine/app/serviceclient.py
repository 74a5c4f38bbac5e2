"""The write verbs' client of a running ``arrowgate serve`` (``--service ADDRESS``): its
address (a socket path or a loopback URL), the operator's or a card's token from
``--token-file``, and each verb as the service's route.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import stat
from pathlib import Path
from typing import Any
from urllib.parse import quote

from engine.app.writefailure import REFUSAL_CODES, REFUSED, USAGE, Failure, error_json
from engine.core.errors import with_code
from engine.effects.userfile import FileRefused, read_user_bytes

__all__ = ["ServiceBackend", "service_token", "service_transport"]

#: A token file is a short line; anything bigger is not one.
_TOKEN_MAX = 4096
#: Seconds the service's client waits to connect, and for each read of an answer.
_TIMEOUT = 30.0


#: A host and a port, as someone writes an address and leaves out ``http://``.
_HOST_AND_PORT = re.compile(r"(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\]):[0-9]{1,5}")


def socket_hint(address: str) -> str:
    """Words to add when ``address`` could not be reached as a Unix socket's path: that
    what is there is a file or a folder, not a socket (the database given for its
    service's socket); or that nothing is there and, when it reads as a host and a port,
    the URL meant ("" otherwise)."""
    if "://" in address:
        return ""
    try:
        mode = os.stat(address).st_mode
    except OSError:
        mode = None
    if mode is not None:
        if stat.S_ISSOCK(mode):
            return ""
        what = "folder" if stat.S_ISDIR(mode) else "file"
        return (f" ({address} is a {what}, not a socket: give the socket `arrowgate serve` "
                "listens on, <db>.serve/serve.sock unless it was given --socket)")
    if os.path.lexists(address):
        return ""  # a link to nowhere, or one that cannot be looked through: said as is
    meant = f"http://{address}" if _HOST_AND_PORT.fullmatch(address) else \
        "http://127.0.0.1:PORT"
    return (f" (an address without http:// is a Unix socket's path, and there is no "
            f"socket at {address}; over TCP give {meant})")


def service_transport(address: str) -> tuple[str, Any]:
    """The base URL and httpx transport for ``--service`` (a socket path or loopback URL).

    The address is read by the rule every client of the service holds to
    (`engine.core.serviceaddress`: no user name, query or fragment), and more
    strictly: the operator's token goes only to this machine, as ``http://`` on
    loopback with its port (the service judges a consent action by the process
    calling it, which behind a TLS proxy would be the proxy).

    Raises:
        Failure: the address is neither a socket path nor ``http://`` on loopback
            with a port (the operator's token is never sent anywhere else).
    """
    import httpx

    from engine.core.serviceaddress import AddressRefused, service_address

    try:
        where = service_address(address, remote_tls=False)
    except AddressRefused as exc:
        raise Failure(USAGE, f"--service: {exc}") from exc
    if where.socket is not None:
        return where.base, httpx.AsyncHTTPTransport(uds=where.socket)
    if where.scheme != "http" or where.port is None or where.path:
        raise Failure(USAGE, f"--service {address!r}: give the service's socket path or "
                             "http://127.0.0.1:PORT (a loopback address)")
    return where.base, httpx.AsyncHTTPTransport()


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
            # Not connected at all: most often no service is running (a socket a stopped
            # service removed, a port nobody listens on), which `arrowgate mcp` says too.
            running = " (is `arrowgate serve` running there?)" \
                if isinstance(exc, httpx.ConnectError) else ""
            raise Failure(USAGE, f"cannot reach the service at {self.address}{running}: "
                                 f"{why}{socket_hint(self.address)}") from exc
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
        # A 409 is decided by its code, as --db decides it (`Failure.of`): a stale review
        # is refused (APPROVAL_REFUSED), a package not installed or pending is invalid input.
        refused = code in REFUSAL_CODES or response.status_code in (401, 403) \
            or response.status_code >= 500
        # The error as --db gives it (`error_json`), not the HTTP problem's own fields.
        raise Failure(REFUSED if refused else USAGE, message, error_json(
            code, message, reason=problem.get("reason"), permission=problem.get("permission"),
            card=problem.get("card"), package=problem.get("package")))

    async def add_workspace(self, body: dict[str, Any]) -> dict[str, Any]:
        """``POST /v1/workspaces``."""
        return dict(await self._request("POST", "/v1/workspaces", body))

    async def add_node(self, workspace: str, node: dict[str, Any]) -> dict[str, Any]:
        """``POST /v1/workspaces/{ws}/nodes``."""
        return dict(await self._request("POST", f"/v1/workspaces/{_seg(workspace)}/nodes", node))

    async def node(self, node_id: str) -> dict[str, Any]:
        """``GET /v1/nodes/{id}``."""
        return dict(await self._request("GET", f"/v1/nodes/{_seg(node_id)}"))

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
        """``GET /v1/packages/{name}/review``, as ``--db`` answers it: its ``text``, not
        the service's ``lines`` of it too."""
        answer = dict(await self._request("GET", f"/v1/packages/{_seg(name)}/review"))
        if isinstance(answer.get("text"), str):
            answer.pop("lines", None)
        return answer

    async def install(self, name: str, grant: str | list[str],
                      review_hash: str) -> dict[str, Any]:
        """``POST /v1/packages/{name}/install`` naming the review the person saw."""
        answer = await self._request("POST", f"/v1/packages/{_seg(name)}/install",
                                     {"grant": grant, "review_hash": review_hash})
        if not isinstance(answer, dict):
            return {"package": name}
        # As --db answers it: the review's keys and what was granted (an answer at all
        # says it is installed).
        return {key: value for key, value in answer.items() if key != "installed"}

    async def grant(self, name: str, permission: str, review_hash: str) -> list[str]:
        """``POST /v1/packages/{name}/grant``; the answer's ``granted``: every permission
        the package holds then, sorted."""
        answer = await self._request("POST", f"/v1/packages/{_seg(name)}/grant",
                                     {"permission": permission, "review_hash": review_hash})
        return [str(p) for p in answer["granted"]]  # GrantsOut: always there

    async def revoke(self, name: str, permission: str) -> bool:
        """``POST /v1/packages/{name}/revoke``; whether it was granted (the answer's
        ``revoked``)."""
        answer = await self._request("POST", f"/v1/packages/{_seg(name)}/revoke",
                                     {"permission": permission})
        return bool(answer.get("revoked")) if isinstance(answer, dict) else False

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


def _db_of_socket(args: argparse.Namespace) -> str:
    """Words naming the database whose default socket ``--service`` is (``app.db`` for
    ``app.db.serve/serve.sock``), when --db was not given: the token lies beside it."""
    address = getattr(args, "service", None) or ""
    if getattr(args, "db", None) or "://" in address:
        return ""
    folder = Path(address).parent
    if Path(address).name != "serve.sock" or not folder.name.endswith(".serve") \
            or folder.name == ".serve":
        return ""
    return f": --db {folder.with_name(folder.name.removesuffix('.serve'))} for its socket " \
        f"{address}"


def service_token(args: argparse.Namespace) -> str:
    """The bearer token ``--token-file`` holds (default: the database path plus
    ``.operator-token``), read as a private file of the user's.

    Raises:
        Failure: the file cannot be read, is not private, or holds no one token.
    """
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
        if exc.problem.startswith("is larger than"):
            raise Failure(USAGE, f"the token file {path} {exc.problem}: it is no token file "
                                 "(a token is one short line, as `arrowgate serve` or "
                                 "`arrowgate token mint --out` writes it)") from exc
        hint = "" if args.token_file else \
            " (give --token-file: the one `arrowgate serve` wrote, or --db of its database" \
            f"{_db_of_socket(args)})"
        why = exc.problem.removeprefix("cannot be read: ")
        raise Failure(USAGE, f"cannot read the token file {path}: {why}{hint}") from exc
    token = raw.decode("utf-8", "replace").strip()
    if not token or any(c.isspace() for c in token):
        raise Failure(USAGE, f"the token file {path} does not hold one token")
    return token
