"""Confined file access (SPEC §8.3): ``fs.*`` calls inside the workspace folder.

Paths are resolved by `engine.effects.pathwalk`: one component at a time relative to
an open directory, links followed by hand, and the final open done again by
the kernel's ``openat2`` with ``RESOLVE_BENEATH`` where it exists. A link
that stays inside the folder works; one that leaves it is refused.

All file work runs in a small thread pool of its own, never on the event
loop, so no file call can stall the engine's other calls (a slow disk, a
huge folder). A call's thread is handed out on the loop, where its consent is
read from the store once more as its work is about to begin (another engine may
have withdrawn it meanwhile); watches walk their trees in a pool of their own.
Writes go through a temporary file (`engine.effects.leftovers`). Only regular files and folders are read or written: a FIFO,
socket or device is refused (``not-regular``) from ``fstat`` of a
descriptor opened with ``O_PATH`` and then ``O_NONBLOCK`` — never by a
blocking open for reading — and files larger than the workspace's
``fs_max_bytes`` are refused (``too-large``), read or written. Which names
are secret or protected is `engine.core.fsrules`, which folders are unsafe
`engine.effects.folders`; moving to the trash is `engine.effects.trashcan`.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import errno
import functools
import itertools
import os
import stat
import threading
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engine.core.checks import Passed, denial
from engine.core.decision import Decision
from engine.core.events import Event
from engine.core.fsrules import is_protected, is_secret
from engine.core.text import named_path as _named
from engine.effects import mounts
from engine.effects.folders import MOVED, opened_path, unsafe_folder
from engine.effects.leftovers import TempFiles, write_atomically
from engine.effects.pathwalk import Escape, Walked, flush_folder, open_beneath, walk
from engine.effects.sameness import Ident, folded_within, holds, identity, lineage, within
from engine.effects.threadwork import DaemonPool, ThreadSlots, submit
from engine.effects.trashcan import Trash, TrashRefused, scan_tree
from engine.effects.treewatch import Armed, Change, TooDeep, TooManyFolders, arm, watch_tree

if TYPE_CHECKING:
    from engine.core.state import State
    from engine.effects.host import ScopeHost

__all__ = ["LIST_BYTES", "LIST_NAMES", "LIST_SCAN", "WATCH_LIMIT", "ConfinedFiles",
           "PathRefused", "is_protected", "is_secret"]

#: Watches one card may hold at once (SPEC §8.3).
WATCH_LIMIT = 8
#: The most names one ``fs.list`` answers, and the most bytes (UTF-8) of them: a
#: folder of more is refused (``too-large``), as a file past ``fs_max_bytes`` is.
LIST_NAMES = 10_000
LIST_BYTES = 1 << 20
#: The most entries of a folder one ``fs.list`` reads, secret-like ones included: a
#: folder of millions is refused without being read to its end.
LIST_SCAN = 100_000
_FILE_THREADS = 4
_WATCH_THREADS = 4

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

    code = "SCOPE_REFUSED"

    def __init__(self, reason: str, why: str) -> None:
        super().__init__(why)
        self.reason = reason
        self.why = why


class NotAFolder(PathRefused):
    """A file where only a folder will do (``fs.list``, ``fs.watch``): a wrong argument,
    not a scope's refusal, and never ``NOT_FOUND`` of what exists."""

    code = "INVALID_ARGUMENT"

    def __init__(self) -> None:
        super().__init__("not-a-directory", "that is a file, not a folder")


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
    if any(_only_dots_and_spaces(p) for p in parts):
        # SMB/NTFS and FAT drop trailing dots and spaces: there ".. " is "..".
        raise PathRefused("path-escape", "a path may not have a component of only dots "
                          "and spaces ('.. ' is '..' on SMB and FAT)")
    if any(len(p.encode()) > 255 for p in parts):
        raise PathRefused("bad-path", "a path component is longer than 255 bytes")
    return parts


def _only_dots_and_spaces(name: str) -> bool:
    """Whether a name is dots and spaces alone, which a lax filesystem reads as ``.``
    or ``..`` (SMB/NTFS and FAT drop trailing dots and spaces)."""
    return not name.strip(". ")


def _nameable(name: str) -> bool:
    """Whether a name read from the disk is one a card can pass back to the fs calls:
    UTF-8 (no lone surrogates, which no call argument may hold), with no backslash and
    not of dots and spaces alone (`_split` refuses both). Others are left out of
    listings and watches' reports."""
    if "\\" in name or _only_dots_and_spaces(name):
        return False
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


@dataclass(frozen=True, slots=True)
class _Judged:
    """What `ConfinedFiles._judge` found of a workspace folder."""

    #: Why no file call may be made there (`unsafe_folder`), or None.
    unsafe: str | None
    #: The folders it lies in, as the kernel names it opened (their names).
    above: tuple[str, ...]
    #: The device and inode of each of them and of the folder itself (`lineage`);
    #: None when they could not be looked at.
    line: tuple[Ident, ...] | None
    #: Whether the folder lies in the app's data folder on the filesystem they share,
    #: told by the mount table (`engine.effects.mounts`): a bind mount of a folder of
    #: it at another place, which no folder of ``line`` is.
    mounted_in_data: bool = False


@dataclass(frozen=True, slots=True)
class _WatchFolder:
    """The thread's answer to ``fs.watch``: this checked folder may be watched."""

    full: tuple[str, ...]
    #: The folders the workspace folder lies in (`ConfinedFiles._judge`).
    above: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class _Watcher:
    """The card node a watch was made for: its id, its workspace and its package.

    A watch belongs to that node, not to the id: a card added later under the
    same id (in another workspace, or of another package) never hears of it.
    """

    card: str
    workspace: str
    package: str

    def holds(self, state: State, permission: str = "fs.read") -> bool:
        """Whether the watch may go on reporting (or a call go on with ``permission``):
        its card is there (`card_here`), and its package, installed and not pending,
        holds ``fs.read`` (``permission``)."""
        pkg = state.packages.get(self.package)
        return (self.card_here(state)
                and pkg is not None and pkg.installed and not pkg.is_pending
                and state.granted(self.package, permission))

    def card_here(self, state: State) -> bool:
        """Whether its card is there: the same node, a card of its package in its
        workspace (not another node given its id)."""
        node = state.canvas.node(self.card)
        return (node is not None and node.type == "card" and node.workspace == self.workspace
                and node.data.get("package") == self.package)


class _Queued:
    """A file call's work waiting for a file thread: it begins only if, by then, its
    consent has not gone (`ConfinedFiles.withhold_withdrawn` sets ``refusal``)."""

    __slots__ = ("consent", "passed", "refusal")

    def __init__(self, passed: Passed) -> None:
        self.passed = passed
        #: Whose consent it runs on: the card node and its package.
        self.consent = _Watcher(passed.card.id, passed.card.workspace, passed.package.name)
        #: Its answer instead, once its consent went before it began.
        self.refusal: Decision | None = None


class ConfinedFiles:
    """The ``fs.*`` scope handler.

    Args:
        data_dir: the app's own data folder: a workspace containing it is unsafe, and
            nothing in it is a card's to touch.
        trash: the folder trashed items go to (laid out like the
            freedesktop.org trash, so they stay recoverable); None means the
            user's own trash. There is no hard delete.
        database: the database file the engine is on, when it is one: a workspace
            containing it is unsafe too, but the folder it lies in is no more the app's
            than any other (a database kept beside projects). The file writes' key is
            kept beside it, else in ``data_dir``.
    """

    def __init__(self, *, data_dir: str | Path | None = None,
                 trash: str | Path | None = None, database: str | Path | None = None) -> None:
        self.data_dir = Path(data_dir).resolve() if data_dir else None
        self.database = Path(database).resolve() if database else None
        #: What a workspace folder may not be or hold (`unsafe_folder`).
        self._held = tuple(p for p in (self.data_dir, self.database) if p is not None)
        self.trash = Trash(trash)
        self._temp = TempFiles(self.database.parent if self.database else self.data_dir)
        #: Live watches' tasks by watch id.
        self.watches: dict[str, asyncio.Task[None]] = {}
        self._watchers: dict[str, _Watcher] = {}
        #: Per live watch, the event that ends it (`watch_tree`'s ``end``).
        self._ends: dict[str, asyncio.Event] = {}
        self._ending: set[asyncio.Task[None]] = set()  # withdrawn, not yet at their end
        self._watch_ids = itertools.count(1)
        self._stop = asyncio.Event()
        self._pool: DaemonPool | None = None
        self._call_slots: ThreadSlots | None = None
        self._watch_pool: DaemonPool | None = None
        self._safety: dict[tuple[str, int, int], _Judged] = {}
        #: The database's folder's and file's (device, inode), once both were found
        #: (`_database_ids`).
        self._database_found: frozenset[Ident] | None = None
        #: File work submitted and not yet begun in a thread; the lock guards it and
        #: each one's ``refusal`` (set on the loop, read as its thread begins it).
        self._queued: dict[_Queued, None] = {}
        self._queue_lock = threading.Lock()

    def _refuse(self, passed: Passed, reason: str, why: str, code: str = "SCOPE_REFUSED"
                ) -> Decision:
        return denial(passed.spec.name, passed.card.id, code, package=passed.package.name,
                      permission=passed.permission, reason=reason, why=why)

    def _executor(self) -> DaemonPool:
        # A pool of its own: a stuck file system can hold these threads but
        # never the loop's default executor (which resolves host names).
        if self._pool is None:
            self._pool = DaemonPool(_FILE_THREADS, "arrowgate-fs")
        return self._pool

    def _slots(self) -> ThreadSlots:
        # The file calls' threads, handed out on the loop (`_consent_now` decides as
        # each begins). The watches walk their trees in a pool of their own, so a
        # call given a slot never waits behind them for a thread.
        if self._call_slots is None:
            self._call_slots = ThreadSlots(_FILE_THREADS)
        return self._call_slots

    def _watch_executor(self) -> DaemonPool:
        if self._watch_pool is None:
            self._watch_pool = DaemonPool(_WATCH_THREADS, "arrowgate-fs-watch")
        return self._watch_pool

    async def __call__(self, engine: ScopeHost, passed: Passed, args: dict[str, Any]) -> Any:
        """Perform an allowed file call in a thread: its value, or a refusing Decision."""
        queued = _Queued(passed)
        # Consent may have gone between the engine's decision and this first step of
        # the call's task (a revoke or a removal run by another task as the loop
        # turned): decided once here, as a fetch is; then `withhold_withdrawn` while
        # the work waits for a thread, and again from the store as it begins.
        if not queued.consent.holds(engine.state, passed.permission):
            return self._withheld(queued, engine.state)
        with self._queue_lock:
            self._queued[queued] = None
        try:
            slots = self._slots()
            await slots.take()
        except BaseException:
            with self._queue_lock:
                self._queued.pop(queued, None)
            raise
        loop = asyncio.get_running_loop()
        try:
            refusal = self._consent_now(engine, queued)
            if refusal is not None:
                with self._queue_lock:
                    self._queued.pop(queued, None)
                slots.give_back(loop)
                return refusal
            ws = engine.state.workspaces[passed.card.workspace]
            settings = ws.settings
            path = str(args["path"])
            job = functools.partial(self._begin, queued, functools.partial(
                self._perform, Path(ws.folder), passed.spec.name, passed.permission == "fs.write",
                path, args, settings.secret_denylist, settings.fs_max_bytes))
            # Submitted through `submit`, so that an engine closing meanwhile can wait
            # for the thread and log its outcome without the loop (`Engine.close`).
            work = submit(self._executor(), job, functools.partial(self._answer, passed, path),
                          effect=passed.spec.name != "fs.watch")
        except BaseException:
            with self._queue_lock:
                self._queued.pop(queued, None)
            slots.give_back(loop)
            raise
        # The slot is the thread's until its job ends, whether or not this task is
        # still there to see it (the engine closing cancels it).
        work.future.add_done_callback(lambda _done: slots.give_back(loop))
        with contextlib.suppress(Exception):  # the job's error: `_answer` reads it below
            await asyncio.wrap_future(work.future)
        value = work.answer()
        if isinstance(value, _WatchFolder):
            return await self._watch(engine, passed, Path(ws.folder), value.full, value.above)
        return value

    def _consent_now(self, engine: ScopeHost, queued: _Queued) -> Decision | None:
        """As the work is about to begin in a free thread: the refusal it gets instead,
        if its consent went while it waited — withdrawn here (`withhold_withdrawn`), or
        by another engine on the store, which this engine's state shows only once it
        catches up: so it catches up now (one look at the store), and a store that
        cannot be read refuses the work (it never begins on consent not read)."""
        with self._queue_lock:
            if queued.refusal is not None:
                self._queued.pop(queued, None)
                return queued.refusal
        try:
            engine.sync()
        except Exception:  # noqa: BLE001 - the store's failure: the work never begins
            return self._refuse(queued.passed, "store", "consent could not be read again "
                                "before the file work began; nothing was done",
                                code="STORE_FAILED")
        # Catching up ran `withhold_withdrawn` on what it narrowed; asked again here
        # all the same, as the state now stands.
        if not queued.consent.holds(engine.state, queued.passed.permission):
            return self._withheld(queued, engine.state)
        return None

    def _begin(self, queued: _Queued, perform: Callable[[], Any]) -> Any:
        """In a file thread: the call's work, unless its consent went while it waited
        for the thread (then the refusal it was given instead)."""
        with self._queue_lock:
            self._queued.pop(queued, None)
            refusal = queued.refusal
        return perform() if refusal is None else refusal

    def withhold_withdrawn(self, state: State) -> None:
        """Consent narrowed: file work still waiting for a thread whose card was removed,
        or whose package lost the call's permission (or is pending or gone), never
        begins — as a fetch in flight is abandoned (SPEC §8.1), it is answered
        ``PERMISSION_DENIED`` and logged ``cancelled``. Work begun goes on to its end
        (a thread's write cannot be stopped) and is logged as it ended."""
        with self._queue_lock:
            for queued in list(self._queued):
                if not queued.consent.holds(state, queued.passed.permission):
                    del self._queued[queued]
                    queued.refusal = self._withheld(queued, state)

    def _withheld(self, queued: _Queued, state: State) -> Decision:
        passed = queued.passed
        if not queued.consent.card_here(state):
            reason, why = "not-connected", f"card {passed.card.id} was removed"
        else:
            reason, why = "withdrawn", f"{passed.package.name} lost {passed.permission}"
        refusal = self._refuse(passed, reason, f"{why} before the file call began: it was "
                               "abandoned", code="PERMISSION_DENIED")
        return refusal.with_(extra={**refusal.extra, "logged": "cancelled"})

    def _answer(self, passed: Passed, path: str, done: Future[Any]) -> Any:
        """An ended job's answer: its value, or the refusal its error means."""
        try:
            return done.result()
        except PathRefused as exc:
            return self._refuse(passed, exc.reason, exc.why, code=exc.code)
        except TrashRefused as exc:
            return self._refuse(passed, exc.reason, exc.why)
        except FileNotFoundError:
            return self._refuse(passed, "missing", f"{_named(path)} does not exist", code="NOT_FOUND")
        except OSError as exc:
            code, reason = _OS_ERRORS.get(exc.errno or 0, ("SCOPE_REFUSED", "os-error"))
            return self._refuse(passed, reason, f"{_named(path)}: {exc.strerror}", code=code)

    def _perform(self, root: Path, name: str, writes: bool, path: str, args: dict[str, Any],
                 denylist: bool, max_bytes: int) -> Any:
        """The whole file call, in a pool thread (it touches no engine state)."""
        parts = _split(path)
        root_fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            judged = self._judge(root, root_fd)
            above = judged.above
            if judged.unsafe:
                raise PathRefused("workspace-unsafe", judged.unsafe)
            # A write to a path both protected and secret (``.git/config``) is told
            # protected-path, as every write under ``.git`` is.
            if writes and is_protected(parts, above=above):
                raise PathRefused("protected-path", f"{_named(path)} is protected from card writes")
            if denylist and is_secret(parts, above=above):
                raise PathRefused("secret-path", f"{_named(path)} looks like a secret")
            try:
                # Trashing a name trashes that entry: a link moves as a link, and
                # what it names (inside or outside the folder) is never touched.
                walked = walk(root_fd, parts, follow_last=name != "fs.trash")
            except Escape as exc:
                raise PathRefused("path-escape", exc.why) from exc
            except NotADirectoryError as exc:
                raise FileNotFoundError(errno.ENOENT, "not found", path) from exc
            try:
                full = [*walked.parts, walked.name] if walked.name else list(walked.parts)
                # Links may land on a secret or protected name: check where it went.
                if writes and is_protected(full, above=above):
                    raise PathRefused("protected-path", f"{_named(path)} leads to a protected path")
                if denylist and is_secret(full, above=above):
                    raise PathRefused("secret-path", f"{_named(path)} leads to a secret")
                if self._in_data(judged, full, walked):
                    raise PathRefused("protected-path", f"{_named(path)} is the app's own data")
                if self._mounted_from_data(root_fd, walked):
                    raise PathRefused("protected-path", f"{_named(path)} reaches a folder "
                                      "of the app's data folder through a mount: it is "
                                      "the app's own data")
                if self._reaches_database(walked):
                    raise PathRefused("protected-path", f"{_named(path)} reaches the "
                                      "database or its folder by another path (a mount, "
                                      "a hard link): it is the app's own data")
                if not walked.exists and name not in ("fs.writeText", "fs.writeBytes",
                                                      "fs.mkdir"):
                    raise FileNotFoundError(errno.ENOENT, "not found", path)
                return self._op(name, root, root_fd, walked, tuple(full), above, args,
                                denylist, max_bytes)
            finally:
                os.close(walked.parent)
        except Escape as exc:
            raise PathRefused("path-escape", exc.why) from exc
        finally:
            os.close(root_fd)

    def _in_data(self, judged: _Judged, full: list[str], walked: Walked) -> bool:
        """Whether the walked workspace path ``full`` is the app's data folder or lies in
        it: the data folder's device and inode among the folders the workspace lies in
        (``judged.line``), the folders walked through and what the path names — so a
        workspace named by a link into the data folder is in it, and so is a path that
        spells it otherwise (``Arrowgate`` on a case-folding file system) or reaches it
        through a bind mount; and a workspace that is a bind mount of a folder in it
        (``judged.mounted_in_data``). One `os.stat` a call, of the data folder."""
        if self.data_dir is None:
            return False
        if judged.mounted_in_data:
            return True
        path = Path("/", *judged.above, *full)
        try:
            data = identity(self.data_dir)
        except OSError:
            return folded_within(path, self.data_dir)
        found = () if walked.found is None else (walked.found,)
        line = None if judged.line is None else {*judged.line, *walked.folders, *found}
        return holds(self.data_dir, data, path, line=line)

    def _reaches_database(self, walked: Walked) -> bool:
        """Whether the walk passed through the database's folder or named it or the
        database file: by their device and inode among the folders walked and what the
        path names, as the walk saw them (no more system calls). Only a second path to
        them inside the workspace does: a mount made there (whenever: each call is
        judged so), or a hard link to the database file; for a workspace that is or
        holds the database's folder is unsafe, and one beside it never walks into it."""
        ids = self._database_ids()
        return bool(ids) and (walked.found in ids or not ids.isdisjoint(walked.folders))

    def _mounted_from_data(self, root_fd: int, walked: Walked) -> bool:
        """Whether the path reached, through a mount made inside the workspace (whenever:
        each call is judged so), what lies in the app's data folder on its filesystem
        (`mounts.within`): ``sub/`` a bind mount of the data folder's ``trash/``, which
        no folder on the path is by its own path (`_in_data` cannot tell).

        Asked of the walk's last folder and of what the path names, only where either
        is on another mount than the workspace folder (`mounts.mount_id`): a path within
        the workspace's own mount costs a few reads of ``/proc``, not the mount table.
        False where the mounts cannot be read (not Linux): then the device and inode of
        the folders walked decide alone (`_in_data`)."""
        if self.data_dir is None:
            return False
        home = mounts.mount_id(root_fd)
        if home is None:
            return False
        found = -1
        if walked.name is not None and walked.exists:
            try:
                found = os.open(walked.name, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC,
                                dir_fd=walked.parent)
            except OSError:
                found = -1  # gone since the walk: the call itself finds it gone
        try:
            away = [fd for fd in (walked.parent, found)
                    if fd >= 0 and mounts.mount_id(fd) != home]
            if not away:
                return False
            table = mounts.table()
            data = mounts.place_at(self.data_dir, table)
            return any(mounts.within(mounts.place(fd, table), data) for fd in away)
        finally:
            if found >= 0:
                os.close(found)

    def _database_ids(self) -> frozenset[Ident]:
        """The (device, inode) of the database's folder and of the database file, looked
        up once both exist and then kept: the engine's database stays the one opened in
        that folder (a folder put at its path later holds no database of this engine).
        Empty without a database file; looked up again at each call until both are
        there, and as far as they can be looked at."""
        if self.database is None:
            return frozenset()
        if self._database_found is not None:
            return self._database_found
        try:
            found = (identity(self.database.parent), identity(self.database))
        except OSError:
            return frozenset()
        ids = frozenset(i for i in found if i is not None)
        if None not in found:
            self._database_found = ids
        return ids

    def _mounted_in_data(self, root_fd: int) -> bool:
        """Whether the workspace folder opened as ``root_fd`` lies in the app's data folder
        on their filesystem (`mounts.within`): a mount of the data folder's ``trash/`` at
        ``/tmp/x`` is in it, though nothing above ``/tmp/x`` is the data folder. False
        where the mount table cannot be read: then the device and inode of the folders
        it lies in decide alone (`_in_data`)."""
        if self.data_dir is None:
            return False
        table = mounts.table()
        return mounts.within(mounts.place(root_fd, table), mounts.place_at(self.data_dir, table))

    def _named_in_data(self, above: tuple[str, ...], parts: list[str]) -> bool:
        """Whether workspace path ``parts`` is spelled as the app's data folder or a path
        in it: a watch's reports, judged without a look at the disk. A tree watched holds
        the data folder by no other spelling: the watch was made only in a folder that
        neither holds it nor lies in it, each told by device and inode."""
        return self.data_dir is not None and within(Path("/", *above, *parts), self.data_dir)

    def _judge(self, root: Path, root_fd: int) -> _Judged:
        """`unsafe_folder`'s verdict on the workspace folder opened as ``root_fd``, and the
        folders it lies in (its path's components, as the kernel names the folder
        opened): a file in it is inside them, for the secret and protected rules
        (``~/.ssh`` or a project's ``.git`` made a workspace), and their device and
        inode, for the app's data (`_in_data`). Remembered per folder and the very
        directory it names.

        Keyed by the open folder's device and inode as well as its name, so
        a folder replaced, moved or mounted over is judged again.
        """
        st = os.fstat(root_fd)
        key = (str(root), st.st_dev, st.st_ino)
        if key not in self._safety:
            verdict = unsafe_folder(root, root_fd, self._held)
            where = opened_path(root, root_fd)
            if verdict == MOVED or where is None:
                # Not a verdict on the folder: judged again next time.
                return _Judged(MOVED, (), None)
            try:
                line: tuple[Ident, ...] | None = lineage(where)
            except OSError:
                line = None  # `_in_data` looks along the path by its name (`holds`)
            if len(self._safety) > 256:
                self._safety.clear()
            self._safety[key] = _Judged(verdict, where.parts[1:], line,
                                        self._mounted_in_data(root_fd))
        return self._safety[key]

    def _op(self, name: str, root: Path, root_fd: int, walked: Walked, full: tuple[str, ...],
            above: tuple[str, ...], args: dict[str, Any], denylist: bool, max_bytes: int
            ) -> Any:
        last = walked.name
        if name == "fs.list":
            return _listing(_open_folder(root_fd, full), full, denylist, above)
        if name == "fs.stat":
            fd = open_beneath(root_fd, full, os.O_PATH)
            try:
                st = os.fstat(fd)
            finally:
                os.close(fd)
            kind = ("dir" if stat.S_ISDIR(st.st_mode) else
                    "file" if stat.S_ISREG(st.st_mode) else "other")
            return {"type": kind, "size": st.st_size}
        if name == "fs.watch":
            os.close(_open_folder(root_fd, full))
            return _WatchFolder(full, above)
        if last is None:
            raise PathRefused("bad-path", "that names the workspace folder itself")
        if name in ("fs.readText", "fs.readBytes"):
            data = _read_regular(root_fd, full, max_bytes)
            if name == "fs.readBytes":
                return base64.b64encode(data).decode()
            return data.decode("utf-8", errors="replace")
        if name in ("fs.writeText", "fs.writeBytes"):
            try:
                data = (str(args["text"]).encode() if name == "fs.writeText"
                        else base64.b64decode(str(args["base64"]), validate=True))
            except ValueError as exc:
                raise PathRefused("bad-content", "base64 is not valid base64") from exc
            if len(data) > max_bytes:
                raise PathRefused("too-large", f"{len(data)} bytes is more than fs_max_bytes "
                                               f"({max_bytes})")
            mode = None
            if walked.exists:
                st = os.stat(last, dir_fd=walked.parent, follow_symlinks=False)
                if stat.S_ISDIR(st.st_mode):
                    raise IsADirectoryError(errno.EISDIR, "is a directory", last)
                if not stat.S_ISREG(st.st_mode):
                    raise PathRefused("not-regular", "only regular files are written")
                # The new file takes the old one's mode (a private file stays
                # private, a script executable), never its set-user or set-group bit.
                mode = stat.S_IMODE(st.st_mode) & ~(stat.S_ISUID | stat.S_ISGID)
            self._atomic_write(walked.parent, last, data, mode)
            return None
        if name == "fs.mkdir":
            os.mkdir(last, dir_fd=walked.parent)
            flush_folder(walked.parent)  # as a write's rename: the new name on the disk
            return None
        if name == "fs.trash":
            self._trash(root, walked.parent, last, full, denylist, above)
            return None
        raise AssertionError(name)

    def _trash(self, root: Path, parent: int, last: str, full: tuple[str, ...],
               denylist: bool, above: tuple[str, ...]) -> None:
        """Check the entry under its parent's descriptor, then move it from there.
        ``above``: the folders the workspace lies in, which its names are judged with
        (``~/.local`` made a workspace: ``share/Trash`` is the home trash)."""
        st = os.stat(last, dir_fd=parent, follow_symlinks=False)
        # A link is trashed as it is (the walk did not follow the last name): the
        # move renames the entry, never what it names. Swapped for something else
        # after this lstat, `Trash.move` finds out and puts it back.
        if stat.S_ISDIR(st.st_mode):
            fd = os.open(last, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC,
                         dir_fd=parent)
            try:
                now = os.fstat(fd)
                if (now.st_dev, now.st_ino) != (st.st_dev, st.st_ino):
                    raise PathRefused("path-escape", "the path changed while it was resolved")

                def guarded(parts: list[str]) -> str | None:
                    if is_protected(parts, above=above) or (
                            denylist and is_secret(parts, above=above)):
                        return "protected-path"
                    return None

                scan_tree(fd, full, guarded)
            finally:
                os.close(fd)
        elif not (stat.S_ISREG(st.st_mode) or stat.S_ISLNK(st.st_mode)):
            raise PathRefused("not-regular", "only regular files, folders and links are "
                                             "trashed")
        self.trash.move(parent, last, st, root.joinpath(*full))

    async def _watch(self, engine: ScopeHost, passed: Passed, root: Path,
                     full: tuple[str, ...], above: tuple[str, ...]
                     ) -> dict[str, str] | Decision:
        watcher = _Watcher(passed.card.id, passed.card.workspace, passed.package.name)
        # The watches of this card node only (`_Watcher` equality: id, workspace and
        # package). A card removed by another process keeps its watches here until
        # its folder next changes; they must not count against a new card with its id.
        held = sum(1 for w in self._watchers.values() if w == watcher)
        if held >= WATCH_LIMIT:
            return self._refuse(passed, "watch-limit",
                                f"a card holds at most {WATCH_LIMIT} watches", code="CARD_LIMIT")
        watch_id = f"w{next(self._watch_ids)}"
        # Counted from now (a second call while this one walks sees it), and
        # ended like any watch if consent goes meanwhile.
        self._watchers[watch_id] = watcher
        end = self._ends[watch_id] = asyncio.Event()
        # Armed before the answer: a card that changes a file the moment it has
        # its watch must hear of it, and a tree that cannot be watched is this
        # call's refusal rather than a watch that ends at once.
        try:
            armed = await arm(root, full, self._watch_executor())
        except BaseException as exc:
            self._unarm(watch_id, None)
            if isinstance(exc, (TooManyFolders, TooDeep)):
                return self._refuse(passed, "too-large", str(exc))
            if isinstance(exc, FileNotFoundError | NotADirectoryError):
                return self._refuse(passed, "missing", "the folder is gone", code="NOT_FOUND")
            if isinstance(exc, OSError):
                # Not `_OS_ERRORS`: inotify's ENOSPC is the user's watches used up, no
                # full disk, and EMFILE its instances.
                return self._refuse(passed, "os-error", f"cannot watch the folder: {exc.strerror}")
            raise
        try:
            # What the store holds now decides, as for a fetch's answer: another
            # engine's revoke made while the tree was walked ends this watch here
            # (`end_withdrawn_watches`, on catching up).
            engine.sync()
        except Exception:
            self._unarm(watch_id, armed)
            return self._refuse(passed, "store", "consent could not be read again before "
                                "the answer; no watch was made")
        if end.is_set() or not watcher.holds(engine.state):
            # Consent went while the tree was walked (`end_withdrawn_watches` set
            # ``end``, or the state says so): refused like any withdrawn call, never
            # answered with a watch that ends at its first step.
            self._unarm(watch_id, armed)
            return self._withdrawn(watcher, engine.state, passed)
        task = asyncio.get_running_loop().create_task(
            self._watch_loop(engine, watcher, end, root, full, above, watch_id, armed))
        # Closed however the task ends, even cancelled before its first step
        # (the engine closing), when `watch_tree` never ran to close it.
        task.add_done_callback(lambda _task: armed.close())
        self.watches[watch_id] = task
        return {"watch": watch_id}

    def _unarm(self, watch_id: str, armed: Armed | None) -> None:
        """Forget a watch never answered, closing what was armed for it (if anything)."""
        if armed is not None:
            armed.close()
        self._watchers.pop(watch_id, None)
        self._ends.pop(watch_id, None)

    def _withdrawn(self, watcher: _Watcher, state: State, passed: Passed) -> Decision:
        """The refusal of a watch whose consent went while it was armed, always
        ``PERMISSION_DENIED``: reason ``not-connected`` for its card removed (or its id
        another node's now), else ``withdrawn`` (``fs.read`` revoked, the package
        pending or gone)."""
        if not watcher.card_here(state):
            return self._refuse(passed, "not-connected", f"card {watcher.card} was removed "
                                "while its watch was armed", code="PERMISSION_DENIED")
        return self._refuse(passed, "withdrawn", f"{passed.package.name} lost "
                            f"{passed.permission} while the watch was armed",
                            code="PERMISSION_DENIED")

    def end_withdrawn_watches(self, state: State) -> None:
        """End at once every watch whose card was removed or lost ``fs.read``.

        Called when consent narrows (a node removed, a permission revoked, a
        package gone pending), so a watch does not wait for the next change to
        find out — by when a new card may hold its card's id. Each ends with
        ``fs.watch.ended``, reason ``withdrawn``.
        """
        for watch_id, watcher in list(self._watchers.items()):
            if not watcher.holds(state):
                # Forgotten now, not when its task gets to its end (the
                # watcher's next step): the card's watch count must not see it.
                del self._watchers[watch_id]
                task = self.watches.pop(watch_id, None)
                self._ends[watch_id].set()
                if task is not None:  # still cancelled if the engine closes first
                    self._ending.add(task)
                    task.add_done_callback(self._ending.discard)

    async def _watch_loop(self, engine: ScopeHost, watcher: _Watcher, end: asyncio.Event,
                          root: Path, full: tuple[str, ...], above: tuple[str, ...],
                          watch_id: str, armed: Armed) -> None:
        """Deliver changes under the watched folder that `_visible` lets through,
        until ``end`` is set (`end_withdrawn_watches`, `stop_watches`).

        Secret-like names are judged by the workspace's denylist as it stands when
        the changes are sent, not as it stood when the watch was made: an operator
        who turns it on again is obeyed by the watches already live.

        Any failure (the folder removed, no inotify instances left) ends the
        watch with an ``fs.watch.ended`` event: nothing escapes the task.
        """
        loop = asyncio.get_running_loop()
        reason = "ended"

        def withdrawn() -> bool:
            # Asked again before anything is sent: ``end`` set while the
            # thread looked (the card removed, even if re-added since), or a
            # change another process made, which `end_withdrawn_watches` did
            # not see.
            return end.is_set() or not watcher.holds(engine.state)

        try:
            async for changes in watch_tree(root, full, end, self._watch_executor(), armed=armed):
                if withdrawn():
                    return
                found = await loop.run_in_executor(
                    self._watch_executor(), self._visible, root, changes,
                    _denylist_now(engine.state, watcher.workspace), above)
                if found:
                    # What the store holds now decides, as for a fetch's answer: another
                    # engine's revoke reaches this engine's state only at its next
                    # operation, and no change may slip through meanwhile. Catching up
                    # ends this watch (`end_withdrawn_watches`) when consent went; a
                    # store that cannot be read ends it too (StoreFailed).
                    engine.sync()
                if withdrawn():
                    return
                if _denylist_now(engine.state, watcher.workspace):  # as caught up with
                    found = [(change, rel) for change, rel in found
                             if not is_secret(rel.split("/"), above=above)]
                for change, rel in found:
                    engine.notify(Event("fs.changed", watcher.card, {
                        "watch": watch_id, "workspace": watcher.workspace,
                        "package": watcher.package, "path": rel, "change": change.name}))
        except Exception as exc:  # noqa: BLE001 - the watch ends, the engine goes on
            reason = type(exc).__name__
        finally:
            if reason == "ended" and withdrawn():
                reason = "withdrawn"
            self.watches.pop(watch_id, None)
            self._watchers.pop(watch_id, None)
            self._ends.pop(watch_id, None)
            if not self._stop.is_set():
                engine.notify(Event("fs.watch.ended", watcher.card, {
                    "watch": watch_id, "workspace": watcher.workspace,
                    "package": watcher.package, "reason": reason}))

    def _visible(self, root: Path, changes: list[tuple[Change, tuple[str, ...]]],
                 denylist: bool, above: tuple[str, ...]) -> list[tuple[Change, str]]:
        """The changes a card may hear of: inside the folder, through no link, not denied."""
        out: list[tuple[Change, str]] = []
        try:
            root_fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        except OSError:
            return out
        try:
            for change, changed in changes:
                parts = list(changed)
                if (not parts or ".." in parts or not all(map(_nameable, parts))
                        or (denylist and is_secret(parts, above=above))):
                    continue
                if self._named_in_data(above, parts):
                    continue
                if _through_real_folders(root_fd, parts[:-1]):
                    out.append((change, "/".join(parts)))
        finally:
            os.close(root_fd)
        return out

    def stop_watches(self) -> None:
        """End every watch and the file threads (the engine is closing)."""
        self._stop.set()
        for end in self._ends.values():
            end.set()
        for task in [*self.watches.values(), *self._ending]:
            task.cancel()
        for pool in (self._pool, self._watch_pool):
            if pool is not None:
                pool.shutdown(wait=False, cancel_futures=True)
        self._pool = self._watch_pool = None
        self._call_slots = None

    def _atomic_write(self, parent: int, last: str, data: bytes, mode: int | None) -> None:
        """`write_atomically` with this handler's temporary files (their leftovers
        cleaned from the folder at its first write)."""
        write_atomically(self._temp, parent, last, data, mode)


def _denylist_now(state: State, workspace: str) -> bool:
    """Whether the workspace's secret denylist is on as ``state`` stands (on when the
    workspace is gone: nothing is told then anyway)."""
    ws = state.workspaces.get(workspace)
    return ws is None or ws.settings.secret_denylist


def _through_real_folders(root_fd: int, folders: list[str]) -> bool:
    """True when each of ``folders`` is a real folder (no link) beneath the root, in order."""
    fd = os.dup(root_fd)
    try:
        for name in folders:
            try:
                nxt = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC,
                              dir_fd=fd)
            except OSError:
                return False  # a link, gone, or not a folder: report nothing
            os.close(fd)
            fd = nxt
        return True
    finally:
        os.close(fd)


def _read_regular(root_fd: int, full: tuple[str, ...], max_bytes: int) -> bytes:
    """A regular file's bytes, at most ``max_bytes``; never waits on a FIFO or device."""
    probe = open_beneath(root_fd, full, os.O_PATH)  # opens nothing: no device side effects
    try:
        first = os.fstat(probe)
    finally:
        os.close(probe)
    _regular(first, max_bytes)
    # O_NONBLOCK: should the entry have become a FIFO meanwhile, the open
    # returns at once and the fstat below refuses it.
    fd = open_beneath(root_fd, full, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY)
    try:
        st = os.fstat(fd)
        if (st.st_dev, st.st_ino) != (first.st_dev, first.st_ino):
            raise PathRefused("path-escape", "the path changed while it was resolved")
        _regular(st, max_bytes)
        chunks, size = [], 0
        while True:
            # The file may grow after the fstat: read one byte past the cap at most.
            chunk = os.read(fd, min(1 << 20, max_bytes + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
            if size > max_bytes:
                raise PathRefused("too-large", f"the file is larger than fs_max_bytes "
                                               f"({max_bytes})")
        return b"".join(chunks)
    finally:
        os.close(fd)


def _listing(fd: int, full: tuple[str, ...], denylist: bool, above: tuple[str, ...]
             ) -> list[str]:
    """``fs.list``'s answer for the open folder ``fd`` (taken over, closed here): its
    names sorted by code point, secret-like ones (judged with the folder they are in:
    .docker/config.json) and those a card could not pass back (`_nameable`) left out.

    Bounded as ``fs.read`` is: a folder of more than `LIST_NAMES` names to answer, or
    more than `LIST_BYTES` bytes of them, or more than `LIST_SCAN` entries in all, is
    refused (``too-large``) as soon as a bound is passed, the rest never read. Never
    a part of the folder: a card would take it for all of it.

    Raises:
        PathRefused: ``too-large``, naming the bound.
    """
    names: list[str] = []
    size = 0
    try:
        with os.scandir(fd) as entries:
            for read, entry in enumerate(entries, 1):
                if read > LIST_SCAN:
                    raise PathRefused("too-large", f"the folder holds more than {LIST_SCAN:,} "
                                                   f"entries; list a folder within it")
                if not _nameable(entry.name) or (
                        denylist and is_secret([*full, entry.name], above=above)):
                    continue
                names.append(entry.name)
                size += len(entry.name.encode())
                if len(names) > LIST_NAMES or size > LIST_BYTES:
                    raise PathRefused("too-large", f"the folder holds more than "
                                                   f"{LIST_NAMES:,} names or {LIST_BYTES:,} "
                                                   f"bytes of them; list a folder within it")
    finally:
        os.close(fd)
    names.sort()
    return names


def _open_folder(root_fd: int, full: tuple[str, ...]) -> int:
    """Open a folder to list or watch; what is not one is refused by what it is.

    ``O_DIRECTORY`` fails before a FIFO is ever opened, with ``ENOTDIR`` for
    any non-folder: a regular file is a wrong argument, a FIFO, socket or
    device ``not-regular`` (SPEC §8.3), never ``NOT_FOUND`` for what exists.
    """
    try:
        return open_beneath(root_fd, full, os.O_RDONLY | os.O_DIRECTORY)
    except NotADirectoryError:
        fd = open_beneath(root_fd, full, os.O_PATH)
        try:
            mode = os.fstat(fd).st_mode
        finally:
            os.close(fd)
        if stat.S_ISREG(mode):
            raise NotAFolder from None
        raise PathRefused("not-regular", "only regular files and folders are read (a FIFO, "
                                         "socket or device never is)") from None


def _regular(st: os.stat_result, max_bytes: int) -> None:
    if stat.S_ISDIR(st.st_mode):
        raise IsADirectoryError(errno.EISDIR, "is a directory")
    if not stat.S_ISREG(st.st_mode):
        raise PathRefused("not-regular", "only regular files are read (a FIFO, socket or "
                                         "device never is)")
    if st.st_size > max_bytes:
        raise PathRefused("too-large", f"the file is {st.st_size} bytes, more than "
                                       f"fs_max_bytes ({max_bytes})")
