"""Confined file access (SPEC §8.3): ``fs.*`` calls inside the workspace folder.

Paths are resolved one component at a time relative to an open directory
(``os.open(..., dir_fd=..., O_NOFOLLOW)``); a symbolic link is read and
followed by hand, so a link that stays inside the folder works and one that
leaves it is refused — never a string-prefix check on a resolved path.
"""

from __future__ import annotations

import base64
import fnmatch
import os
import stat
import secrets
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .checks import Passed, denial
from .decision import Decision

if TYPE_CHECKING:
    from .engine import Engine

__all__ = ["ConfinedFiles", "PathRefused", "is_protected", "is_secret"]

_SECRET_PATTERNS = (".env", ".env.*", "credentials*", "aws-credentials", "*.pem", "*.key",
                    "*.pfx", "id_rsa*", "id_ed25519*", "id_ecdsa*", "id_dsa*")
_PROTECTED_NAMES = frozenset({".git", ".claude", ".mcp.json", "claude.md", "agents.md",
                              "gemini.md", ".cursor", ".codex", ".vscode", ".idea",
                              ".gitlab-ci.yml", ".circleci", ".cursorrules", ".windsurfrules",
                              ".aider.conf.yml", ".continue", ".gemini", ".arrowgate"})
_MAX_LINKS = 40


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


def _split(path: str) -> list[str]:
    if "\0" in path:
        raise PathRefused("bad-path", "a path may not contain NUL bytes")
    if "\\" in path:
        raise PathRefused("bad-path", "a path may not contain backslashes")
    if path.startswith("/") or (len(path) > 1 and path[1] == ":"):
        raise PathRefused("absolute-path", "paths are relative to the workspace folder")
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
        trash: moves a file to the trash (Send2Trash-like); the default refuses,
            since there is no hard delete.
    """

    def __init__(self, *, data_dir: str | Path | None = None,
                 trash: Callable[[str], None] | None = None) -> None:
        self.data_dir = Path(data_dir).resolve() if data_dir else None
        self.trash = trash

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
            return self._perform(passed, root, str(args["path"]), args,
                                 ws.settings.secret_denylist)
        except PathRefused as exc:
            return self._refuse(passed, exc.reason, exc.why)
        except FileNotFoundError:
            return self._refuse(passed, "missing", f"{args['path']!r} does not exist",
                                code="NOT_FOUND")
        except OSError as exc:
            return self._refuse(passed, "os-error", f"{args['path']!r}: {exc.strerror}",
                                code="NOT_FOUND" if exc.errno == 2 else "SCOPE_REFUSED")

    def _walk(self, root_fd: int, parts: list[str], *, follow_last: bool
              ) -> tuple[int, list[str], str | None]:
        """Resolve ``parts`` beneath root: (fd of the parent dir, real parts, last name).

        Every directory is opened with O_NOFOLLOW relative to the one before;
        links are read and their targets walked the same way.
        """
        stack = [os.dup(root_fd)]
        real: list[str] = []
        todo = list(parts)
        links = 0
        try:
            while todo:
                name = todo.pop(0)
                if name in ("", "."):
                    continue
                if name == "..":
                    if len(stack) == 1:
                        raise PathRefused("path-escape", "a link leads outside the workspace")
                    os.close(stack.pop())
                    real.pop()
                    continue
                last = not todo
                try:
                    st = os.stat(name, dir_fd=stack[-1], follow_symlinks=False)
                except FileNotFoundError:
                    if last:
                        return stack.pop(), real, name
                    raise
                if stat.S_ISLNK(st.st_mode) and (follow_last or not last):
                    links += 1
                    if links > _MAX_LINKS:
                        raise PathRefused("path-escape", "too many links (a link loop)")
                    target = os.readlink(name, dir_fd=stack[-1])
                    if target.startswith("/"):
                        raise PathRefused("path-escape", "a link leads outside the workspace")
                    todo = target.split("/") + todo
                    continue
                if last:
                    return stack.pop(), real, name
                fd = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW,
                             dir_fd=stack[-1])
                stack.append(fd)
                real.append(name)
            # The path named the root itself.
            return stack.pop(), real, None
        finally:
            for fd in stack:
                os.close(fd)

    def _perform(self, passed: Passed, root: Path, path: str, args: dict[str, Any],
                 denylist: bool) -> Any:
        name = passed.spec.name
        parts = _split(path)
        if denylist and is_secret(parts):
            raise PathRefused("secret-path", f"{path!r} looks like a secret")
        writes = passed.permission == "fs.write"
        if writes and is_protected(parts):
            raise PathRefused("protected-path", f"{path!r} is protected from card writes")
        root_fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
        try:
            parent, real, last = self._walk(root_fd, parts, follow_last=True)
        finally:
            os.close(root_fd)
        try:
            full = [*real, last] if last else real
            # Links may land on a secret or protected name: check where it went.
            if denylist and is_secret(full):
                raise PathRefused("secret-path", f"{path!r} leads to a secret")
            if writes and is_protected(full):
                raise PathRefused("protected-path", f"{path!r} leads to a protected path")
            return self._op(name, parent, last, args, denylist, root, full)
        finally:
            os.close(parent)

    def _op(self, name: str, parent: int, last: str | None, args: dict[str, Any],
            denylist: bool, root: Path, full: list[str]) -> Any:
        if name == "fs.list":
            fd = parent if last is None else os.open(
                last, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=parent)
            try:
                names = os.listdir(fd)
            finally:
                if fd != parent:
                    os.close(fd)
            return sorted(n for n in names if not (denylist and is_secret([n])))
        if last is None:
            if name == "fs.stat":
                return {"type": "dir", "size": 0}
            raise PathRefused("bad-path", "that names the workspace folder itself")
        if name == "fs.stat":
            st = os.stat(last, dir_fd=parent, follow_symlinks=False)
            return {"type": "dir" if stat.S_ISDIR(st.st_mode) else "file", "size": st.st_size}
        if name in ("fs.readText", "fs.readBytes"):
            fd = os.open(last, os.O_RDONLY | os.O_NOFOLLOW, dir_fd=parent)
            with os.fdopen(fd, "rb") as fh:
                data = fh.read()
            if name == "fs.readBytes":
                return base64.b64encode(data).decode()
            return data.decode("utf-8", errors="replace")
        if name in ("fs.writeText", "fs.writeBytes"):
            data = (str(args["text"]).encode() if name == "fs.writeText"
                    else base64.b64decode(str(args["base64"]), validate=True))
            self._atomic_write(parent, last, data)
            return None
        if name == "fs.mkdir":
            os.mkdir(last, dir_fd=parent)
            return None
        if name == "fs.trash":
            os.stat(last, dir_fd=parent, follow_symlinks=False)  # NOT_FOUND before trashing
            if self.trash is None:
                raise PathRefused("no-trash", "there is no trash here, and no hard delete")
            self.trash(str(root.joinpath(*full)))
            return None
        if name == "fs.watch":
            raise PathRefused("unavailable", "watching files is not available in this engine")
        raise AssertionError(name)

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
