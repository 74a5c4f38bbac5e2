"""Confined file access (SPEC §8.3): ``fs.*`` calls inside the workspace folder.

Paths are resolved by `engine.pathwalk`: one component at a time relative to
an open directory, links followed by hand, and the final open done again by
the kernel's ``openat2`` with ``RESOLVE_BENEATH`` where it exists. A link
that stays inside the folder works; one that leaves it is refused.
"""

from __future__ import annotations

import asyncio
import base64
import errno
import fnmatch
import os
import secrets
import stat
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import watchfiles
from send2trash import send2trash

from .checks import Passed, denial
from .decision import Decision
from .pathwalk import Escape, Walked, open_beneath, walk

if TYPE_CHECKING:
    from .engine import Engine

__all__ = ["ConfinedFiles", "PathRefused", "is_protected", "is_secret"]

_SECRET_PATTERNS = (".env", ".env.*", "credentials*", "aws-credentials", "*.pem", "*.key",
                    "*.pfx", "id_rsa*", "id_ed25519*", "id_ecdsa*", "id_dsa*")
_PROTECTED_NAMES = frozenset({".git", ".claude", ".mcp.json", "claude.md", "agents.md",
                              "gemini.md", ".cursor", ".codex", ".vscode", ".idea",
                              ".gitlab-ci.yml", ".circleci", ".cursorrules", ".windsurfrules",
                              ".aider.conf.yml", ".continue", ".gemini", ".arrowgate"})


# OS errors after the scope checks, as (code, reason).
_OS_ERRORS = {
    errno.ENOENT: ("NOT_FOUND", "missing"),
    errno.ENOTDIR: ("NOT_FOUND", "missing"),
    errno.EEXIST: ("INVALID_ARGUMENT", "exists"),
    errno.EISDIR: ("INVALID_ARGUMENT", "is-a-directory"),
    errno.ENOTEMPTY: ("INVALID_ARGUMENT", "not-empty"),
    errno.ELOOP: ("SCOPE_REFUSED", "path-escape"),
    errno.EXDEV: ("SCOPE_REFUSED", "path-escape"),
    errno.EACCES: ("SCOPE_REFUSED", "os-denied"),
    errno.EPERM: ("SCOPE_REFUSED", "os-denied"),
    errno.ENOSPC: ("SCOPE_REFUSED", "disk-full"),
}


class PathRefused(Exception):
    """A path outside the scope; ``reason`` is the SPEC §8.3 reason."""

    def __init__(self, reason: str, why: str) -> None:
        super().__init__(why)
        self.reason = reason
        self.why = why


def is_secret(parts: list[str]) -> bool:
    """A secret-like name anywhere in the path (case-insensitive), or inside ``.ssh``."""
    for i, part in enumerate(parts):
        low = part.lower()
        if low == ".ssh" and i < len(parts) - 1:
            return True
        if low == ".ssh" or any(fnmatch.fnmatchcase(low, p) for p in _SECRET_PATTERNS):
            return True
    return False


def is_protected(parts: list[str]) -> bool:
    """Under .git, agent or editor settings, CI workflows, or the app's data."""
    low = [p.lower() for p in parts]
    if any(p in _PROTECTED_NAMES for p in low):
        return True
    return any(low[i] == ".github" and low[i + 1] == "workflows" for i in range(len(low) - 1))


def _inside(path: Path, folder: Path) -> bool:
    # Only used to classify (the app's data is protected); confinement
    # itself never rests on comparing path strings.
    return path == folder or folder in path.parents


def _split(path: str) -> list[str]:
    """The path's components, refusing what may never be a workspace path."""
    if "\0" in path:
        raise PathRefused("bad-path", "a path may not contain NUL bytes")
    if path.startswith(("/", "\\")) or (len(path) > 1 and path[1] == ":" and path[0].isalpha()):
        raise PathRefused("absolute-path", "paths are relative to the workspace folder")
    if "\\" in path:
        raise PathRefused("bad-path", "a path may not contain backslashes")
    if len(path.encode()) > 4096:
        raise PathRefused("bad-path", "the path is longer than 4096 bytes")
    parts = [p for p in path.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise PathRefused("path-escape", "a path may not have a '..' component")
    if any(len(p.encode()) > 255 for p in parts):
        raise PathRefused("bad-path", "a path component is longer than 255 bytes")
    return parts


class ConfinedFiles:
    """The ``fs.*`` scope handler.

    Args:
        data_dir: the app's own data folder: a workspace containing it is unsafe.
        trash: moves a file to the operating system's trash (Send2Trash by
            default); there is no hard delete.
    """

    def __init__(self, *, data_dir: str | Path | None = None,
                 trash: Callable[[str], None] | None = None) -> None:
        self.data_dir = Path(data_dir).resolve() if data_dir else None
        self.trash = trash or send2trash
        self.watches: dict[str, asyncio.Task[None]] = {}
        self._stop = asyncio.Event()

    def _refuse(self, passed: Passed, reason: str, why: str, code: str = "SCOPE_REFUSED"
                ) -> Decision:
        return denial(passed.spec.name, passed.card.id, code, package=passed.package.name,
                      permission=passed.permission, reason=reason, why=why)

    def _unsafe(self, root: Path) -> str | None:
        resolved = root.resolve()
        if resolved == Path.home().resolve():
            return "the workspace folder is the home folder"
        if resolved.parent == resolved:
            return "the workspace folder is a filesystem root"
        if self.data_dir is not None and (self.data_dir == resolved
                                          or resolved in self.data_dir.parents):
            return "the workspace folder contains the app's own data"
        return None

    def __call__(self, engine: Engine, passed: Passed, args: dict[str, Any]) -> Any:
        ws = engine.state.workspaces[passed.card.workspace]
        root = Path(ws.folder)
        unsafe = self._unsafe(root)
        if unsafe:
            return self._refuse(passed, "workspace-unsafe", unsafe)
        try:
            return self._perform(engine, passed, root, str(args["path"]), args,
                                 ws.settings.secret_denylist)
        except PathRefused as exc:
            return self._refuse(passed, exc.reason, exc.why)
        except FileNotFoundError:
            return self._refuse(passed, "missing", f"{args['path']!r} does not exist",
                                code="NOT_FOUND")
        except OSError as exc:
            code, reason = _OS_ERRORS.get(exc.errno or 0, ("SCOPE_REFUSED", "os-error"))
            return self._refuse(passed, reason, f"{args['path']!r}: {exc.strerror}", code=code)

    def _perform(self, engine: Engine, passed: Passed, root: Path, path: str,
                 args: dict[str, Any], denylist: bool) -> Any:
        name = passed.spec.name
        parts = _split(path)
        if denylist and is_secret(parts):
            raise PathRefused("secret-path", f"{path!r} looks like a secret")
        writes = passed.permission == "fs.write"
        if writes and is_protected(parts):
            raise PathRefused("protected-path", f"{path!r} is protected from card writes")
        root_fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            try:
                walked = walk(root_fd, parts, follow_last=True)
            except Escape as exc:
                raise PathRefused("path-escape", exc.why) from exc
            except NotADirectoryError as exc:
                raise FileNotFoundError(errno.ENOENT, "not found", path) from exc
            try:
                full = [*walked.parts, walked.name] if walked.name else list(walked.parts)
                # Links may land on a secret or protected name: check where it went.
                if denylist and is_secret(full):
                    raise PathRefused("secret-path", f"{path!r} leads to a secret")
                if writes and is_protected(full):
                    raise PathRefused("protected-path", f"{path!r} leads to a protected path")
                if self.data_dir is not None and _inside(root.joinpath(*full), self.data_dir):
                    raise PathRefused("protected-path", f"{path!r} is the app's own data")
                if not walked.exists and name not in ("fs.writeText", "fs.writeBytes",
                                                      "fs.mkdir"):
                    raise FileNotFoundError(errno.ENOENT, "not found", path)
                return self._op(engine, passed, name, root, root_fd, walked, tuple(full), args,
                                denylist)
            finally:
                os.close(walked.parent)
        except Escape as exc:
            raise PathRefused("path-escape", exc.why) from exc
        finally:
            os.close(root_fd)

    def _op(self, engine: Engine, passed: Passed, name: str, root: Path, root_fd: int,
            walked: Walked, full: tuple[str, ...], args: dict[str, Any], denylist: bool) -> Any:
        last = walked.name
        if name == "fs.list":
            fd = open_beneath(root_fd, full, os.O_RDONLY | os.O_DIRECTORY)
            try:
                names = os.listdir(fd)
            finally:
                os.close(fd)
            # Sorted by code point; secret-like names are left out.
            return sorted(n for n in names if not (denylist and is_secret([n])))
        if name == "fs.stat":
            fd = open_beneath(root_fd, full, os.O_PATH)
            try:
                st = os.fstat(fd)
            finally:
                os.close(fd)
            return {"type": "dir" if stat.S_ISDIR(st.st_mode) else "file", "size": st.st_size}
        if name == "fs.watch":
            fd = open_beneath(root_fd, full, os.O_RDONLY | os.O_DIRECTORY)
            os.close(fd)
            return self._watch(engine, passed, root, full, denylist)
        if last is None:
            raise PathRefused("bad-path", "that names the workspace folder itself")
        if name in ("fs.readText", "fs.readBytes"):
            fd = open_beneath(root_fd, full, os.O_RDONLY)
            with os.fdopen(fd, "rb") as fh:
                data = fh.read()
            if name == "fs.readBytes":
                return base64.b64encode(data).decode()
            return data.decode("utf-8", errors="replace")
        if name in ("fs.writeText", "fs.writeBytes"):
            try:
                data = (str(args["text"]).encode() if name == "fs.writeText"
                        else base64.b64decode(str(args["base64"]), validate=True))
            except ValueError as exc:
                raise PathRefused("bad-content", "base64 is not valid base64") from exc
            self._atomic_write(walked.parent, last, data)
            return None
        if name == "fs.mkdir":
            os.mkdir(last, dir_fd=walked.parent)
            return None
        if name == "fs.trash":
            self._trash(root, root_fd, full)
            return None
        raise AssertionError(name)

    def _trash(self, root: Path, root_fd: int, full: tuple[str, ...]) -> None:
        # Send2Trash takes a path, so check right before that the path still
        # names the very file the walk found (no swap in between).
        fd = open_beneath(root_fd, full, os.O_PATH)
        try:
            walked_st = os.fstat(fd)
        finally:
            os.close(fd)
        target = root.joinpath(*full)
        now_st = os.lstat(target)
        if (now_st.st_dev, now_st.st_ino) != (walked_st.st_dev, walked_st.st_ino):
            raise PathRefused("path-escape", "the path changed while it was resolved")
        self.trash(str(target))

    def _watch(self, engine: Engine, passed: Passed, root: Path, full: tuple[str, ...],
               denylist: bool) -> dict[str, str]:
        watch_id = f"w{len(self.watches) + 1}"
        task = asyncio.get_running_loop().create_task(
            self._watch_loop(engine, passed.card.id, passed.package.name, root, full, denylist,
                             watch_id))
        self.watches[watch_id] = task
        return {"watch": watch_id}

    async def _watch_loop(self, engine: Engine, card: str, package: str, root: Path,
                          full: tuple[str, ...], denylist: bool, watch_id: str) -> None:
        """Deliver file changes under the watched folder, filtered by the same rules."""
        from .engine import Event

        base = root.joinpath(*full)
        try:
            async for changes in watchfiles.awatch(base, stop_event=self._stop,
                                                   recursive=True, debounce=50, step=20):
                # Permissions are checked at delivery time: a revoke ends the watch.
                pkg = engine.state.packages.get(package)
                node = engine.state.canvas.node(card)
                if node is None or pkg is None or pkg.is_pending or not engine.state.granted(
                        package, "fs.read"):
                    return
                for change, changed in sorted(changes):
                    try:
                        rel = Path(changed).relative_to(root)
                    except ValueError:
                        continue
                    parts = list(rel.parts)
                    if denylist and is_secret(parts):
                        continue
                    engine.notify(Event("fs.changed", card, {
                        "watch": watch_id, "path": "/".join(parts),
                        "change": watchfiles.Change(change).name}))
        finally:
            self.watches.pop(watch_id, None)

    def stop_watches(self) -> None:
        """End every watch (the engine is closing)."""
        self._stop.set()
        for task in list(self.watches.values()):
            task.cancel()

    @staticmethod
    def _atomic_write(parent: int, last: str, data: bytes) -> None:
        """Write to a temporary file in the same folder, then rename over the target."""
        tmp = f".{last}.{secrets.token_hex(6)}.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644,
                     dir_fd=parent)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
            os.rename(tmp, last, src_dir_fd=parent, dst_dir_fd=parent)
        except BaseException:
            try:
                os.unlink(tmp, dir_fd=parent)
            except OSError:
                pass
            raise
