"""The log's anchor: the newest sequence number and hash, kept outside the database.

The hash chain shows that no row was altered, removed or inserted *between*
rows; it cannot show that the newest rows were cut off, that rows were
added at the end by someone who knows the hash function, or that the whole
chain was rewritten consistently. The anchor — a small file beside the
database — closes those gaps, unless the same person rewrites both.

Each write transaction that appends rows records, before it commits,
``{"committed": <newest row before it>, "pending": <newest row it wrote>}``
and after it commits ``{"committed": <its newest row>}``. So whatever moment
a crash strikes, the database's newest row is the anchor's ``committed`` or
its ``pending`` one; anything else is a finding. Older states never replace
newer ones (`AnchorState.newer_than`, checked under a lock that every
process sharing the database takes).

How the file is written (issue 19: one ``fdatasync`` per commit)
------------------------------------------------------------------

The file is 8 KiB: two slots, A at offset 0 and B at 4096 (a page each, so
writing back one slot's page never rewrites the other's). A slot holds one
record: a magic tag, a counter that grows with every write, a "durable"
flag, the state as JSON, and a CRC32 of all of it. The reader takes the
valid slot (its CRC holds) with the highest counter; a torn write leaves a
slot whose CRC fails, and the other slot is used.

The writer keeps one slot untouched: the *base*, the newest slot that was
written with its ``fdatasync`` (flag set). Every write goes to the other
slot with ``os.pwrite``. Whether it is then synced depends on what is lost
if it never reaches the disk — after a power cut the other slot may hold
its old record, the new one, or a torn one, while the base is intact:

- A pending write ``{committed: c, pending: p}`` comes before COMMIT. Until
  it returns, the transaction has not committed, so the database's newest
  row is ``c``, which the base accepts (it is the previous pending write,
  whose ``pending`` was ``c``, or a state naming ``c`` as committed). It is
  synced (the one ``fdatasync`` of the commit) before COMMIT runs, and
  becomes the base: from then on the database may hold ``p``.
- The committed write ``{committed: p}`` after COMMIT is *not* synced: the
  base (the pending write just made) already accepts ``p``, so losing or
  tearing it leaves a state that accepts the database's newest row. The
  next transaction's pending write then overwrites that same slot — never
  the base — so the base stays whole while it is written.

When the committed write is made (issue 17): `Transactions.flush` answers
the batch's callers once COMMIT is done and leaves the committed write for
later (`Transactions.settle_anchor`): the loop's next turn, or, in
``arrowgate serve``, the first turn in which its loop finds nothing to read
and nothing else ready, within `IDLE_TURNS` turns (`engine.service.idleloop`, round
10: a request already waiting goes first). If another batch has begun by
then, that batch's pending write ``{committed: p, pending: q}`` names ``p``
as committed anyway, so under load a commit costs one write; a batch that
does not begin at ``p`` (rows were cut, or another process appended) has
the committed write made first. It is made at close too. What this leaves
open is the window the committed write always closed: until then, the
newest batch could be cut unseen — if the process then dies first (as
before, between COMMIT and the write). The crash argument is unchanged: the
committed write was never synced.

Why a commit costs two device flushes, this record's and the WAL's (round 10
looked for one): the pending record must be on the disk before any of the
commit's WAL frames can be, and one flush for both would let a power cut
keep the commit and lose the record — a database whose newest row the
anchor does not accept, a false finding. Nothing is synced without cause:
the committed record never is, and the pending one only when the base does
not already accept its rows.

The rule in `AnchorFile.write` is general rather than tied to the two
callers: a write is synced unless the base accepts every row the new state
accepts (then losing it loses nothing). A file that is missing, in the old
format (one JSON object, written by tmp file and rename) or unusable is
replaced whole, the old way — a tmp file, ``fsync``, rename and a directory
``fsync`` — once; old-format files are read as before, so existing
databases keep verifying, and are converted by their next write.

A write that finds the file byte for byte as this process's last write left
it (`_Known`: the bytes, the newest counter, the state, the base slot) goes
straight to its slot: nothing is decoded, and the bytes kept are updated in
place. What a write still costs (round 9, callgrind, ~47 k instructions): two
``os.stat`` (~10 k: the file and the lock may have been replaced), the
syscalls and their GIL hand-overs, the record's JSON, struct and CRC.

The consent history's head
--------------------------

The consent history is chained like the log and has the same blind spot: its
newest entries can be cut off (a revoke undone, with ``grants`` put back as the
entry before it recorded them) or entries added at its end. So each state also
holds ``history``, the history's newest entry (seq and hash) as of
``committed``, and ``history_pending``, its newest entry as of ``pending`` when
that commit changed it: written by the same pending and committed writes, a
commit that changes only the history writing them too. The database's newest
log row and newest history entry must then be one of the pairs the state
allows (`AnchorState.heads`), which a commit changes together. A state without
``history`` (a file written before it was recorded, or PostgreSQL's anchor)
leaves the history's tail unchecked; the next write of the SQLite store adds it
(`AnchorState.newer_than`: at the same committed row, a state that records the
history's head replaces one that does not).

What the reader cannot tell apart stays a finding for ``log verify``: a
file where neither slot holds a valid record, a record that is not an
anchor state, a cut tail or a chain rewritten consistently.

A newer format
--------------

The format's version is the last byte of each slot's magic (`VERSION`). A slot
whose magic names a higher one was written by a newer arrowgate: what it vouches
for cannot be read here, and writing a format-1 file in its place would undo
that engine's record. So it is neither a finding nor garbage to write over: a
store whose anchor it is is refused at open (`AnchorFile.refuse_newer`), and a
write that meets one raises (`newer_format`).
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import stat
import struct
import threading
import weakref
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from engine.core.errors import StoreFailed

__all__ = ["HISTORY_EMPTY", "VERSION", "Anchor", "AnchorFile", "AnchorState", "newer_format"]


class Anchor(NamedTuple):
    """A row of the log: its sequence number and hash.

    A named tuple rather than a frozen dataclass: every commit makes and
    compares several, and a tuple's construction and ``==`` run in C.
    """

    seq: int
    hash: str


class AnchorState(NamedTuple):
    """What the anchor file says: the log's newest row, and the consent history's
    newest entry written with it (see "The consent history's head" above)."""

    committed: Anchor | None
    pending: Anchor | None = None
    #: The history's newest entry as of ``committed`` (`HISTORY_EMPTY`: none yet);
    #: None when the anchor does not record it (a file older than round 16, or
    #: PostgreSQL's anchor): the history's tail is then not checked.
    history: Anchor | None = None
    #: The history's newest entry as of the pending batch, when that batch
    #: changed it (None: the batch left the history as ``history`` says).
    history_pending: Anchor | None = None

    def accepts(self, last: Anchor | None) -> bool:
        """True when ``last`` (the database's newest row) is one this state allows."""
        if last is None:
            return self.committed is None
        return last == self.committed or last == self.pending

    def heads(self) -> tuple[tuple[Anchor | None, Anchor | None], ...]:
        """The (newest log row, newest history entry) pairs this state allows: the
        committed pair, and the pending batch's (what it left unchanged as before)."""
        first = (self.committed, self.history)
        if self.pending is None and self.history_pending is None:
            return (first,)
        return first, (self.pending or self.committed, self.history_pending or self.history)

    def accepts_heads(self, last: Anchor | None, history: Anchor | None) -> bool:
        """True when the database's newest log row ``last`` and newest history entry
        ``history`` (None: not known) are a pair this state allows; a state that
        does not record the history checks the log alone."""
        if self.history is None:
            return self.accepts(last)
        return (last, history) in self.heads()

    def covers(self, other: AnchorState) -> bool:
        """True when this state accepts every newest row (and history entry) that
        ``other`` accepts."""
        if (other.history_pending is None and self.history_pending is None
                and other.history == self.history):
            # Every commit's question (is the new record synced?), usually with
            # the history's head the same in every pair: the log's rows alone
            # decide, without building the pairs (~0.9 µs a write, round 17).
            committed, pending = self.committed, self.pending
            last = other.committed
            if last is None:
                if committed is not None:
                    return False
            elif last != committed and last != pending:
                return False
            last = other.pending
            return last is None or last == committed or last == pending
        return all(self.accepts_heads(last, history) for last, history in other.heads())

    def newer_than(self, other: AnchorState | None) -> bool:
        """True when this state may replace ``other`` (never go backwards)."""
        if other is None:
            return True
        mine = self.committed.seq if self.committed is not None else 0
        theirs = other.committed.seq if other.committed is not None else 0
        if mine != theirs:
            return mine > theirs
        if self.committed != other.committed:
            # Same number, another hash: never overwritten (see below).
            return False
        if self.history != other.history:
            # Same committed row, another history entry: a batch that changed
            # only the history committed (its entry is newer), or the first
            # record of the history's head in a file older than that. An older
            # entry, or another of the same number, is never written over.
            return self.history is not None and (
                other.history is None or self.history.seq > other.history.seq)
        # Same committed row. A later "committed only" write for the same row
        # does not undo a pending one. A pending row that differs from the one
        # on file replaces it even at the same or a lower sequence number:
        # pending rows are written under the database's write lock, so a new
        # transaction that starts from the same committed row proves the
        # earlier pending one never committed (the process crashed before
        # COMMIT). A committed row of the same number but another hash is
        # never overwritten: it is the evidence `log verify` reports.
        if self.history_pending is None and other.history_pending is None:
            # Every commit's case (the history unchanged): no pairs built.
            return self.pending is not None and self.pending != other.pending
        return (self.pending is not None or self.history_pending is not None) and (
            self.pending, self.history_pending) != (other.pending, other.history_pending)


#: The history head of a history with no entry yet (its chain's genesis).
HISTORY_EMPTY = Anchor(0, "0" * 64)


def _anchor(data: Any) -> Anchor | None:
    if data is None:
        return None
    seq, digest = data["seq"], data["hash"]
    # Exact types: a bool, a float or a list in a hand-edited anchor is garbage.
    if type(seq) is not int or not isinstance(digest, str):
        raise ValueError(f"not a sequence number and hash: {json.dumps(data)[:80]}")
    return Anchor(seq, digest)


def _state(body: bytes) -> AnchorState:
    """The state a JSON body holds (a slot's, or a whole old-format file's); a body
    without ``history`` (older than round 16) records no history head."""
    data = json.loads(body.decode("utf-8"))
    return AnchorState(_anchor(data.get("committed")), _anchor(data.get("pending")),
                       _anchor(data.get("history")), _anchor(data.get("history_pending")))


def _body(state: AnchorState) -> bytes:
    """The state as JSON: ``json.dumps`` of ``{"committed": …, "pending": …}`` (then
    ``"history": …, "history_pending": …`` when it records the history's head), byte
    for byte (tests/durability/test_anchor.py checks), written out by hand because
    every commit writes two (the encoder's set-up cost more than the text)."""
    text = (f'{{"committed": {_anchor_json(state.committed)}, '
            f'"pending": {_anchor_json(state.pending)}')
    if state.history is None:
        return (text + "}").encode("utf-8")
    return (text + _history_text(state.history, state.history_pending)).encode("utf-8")


#: The history heads `_history_text` wrote last, and their text: the history's
#: head changes only with a consent change, and every commit writes it twice.
#: One tuple, replaced whole, so threads read a matching triple.
_last_history: tuple[Anchor | None, Anchor | None, str] = (None, None, "")


def _history_text(history: Anchor, pending: Anchor | None) -> str:
    # `_body`'s history part and its closing brace; not `_anchor_json`, whose one
    # remembered row is the log's.
    global _last_history
    last, last_pending, text = _last_history
    if history == last and pending == last_pending:
        return text
    text = (f', "history": {_history_json(history)}, '
            f'"history_pending": {_history_json(pending)}}}')
    _last_history = (history, pending, text)
    return text


def _history_json(anchor: Anchor | None) -> str:
    if anchor is None:
        return "null"
    return f'{{"seq": {int.__repr__(anchor.seq)}, "hash": {_json_text(anchor.hash)}}}'


#: How ``json.dumps`` writes a text (ASCII only, escaped).
_json_text = json.encoder.encode_basestring_ascii


#: The row `_anchor_json` wrote last, and its JSON: a commit's row is written as
#: "pending", then as "committed" (by the next record), so every row is encoded
#: twice in a row. One tuple, replaced whole, so threads read a matching pair.
_last_json: tuple[Anchor | None, str] = (None, "null")


def _anchor_json(anchor: Anchor | None) -> str:
    global _last_json
    if anchor is None:
        return "null"
    last, text = _last_json
    if anchor == last:
        return text
    text = f'{{"seq": {int.__repr__(anchor.seq)}, "hash": {_json_text(anchor.hash)}}}'
    _last_json = (anchor, text)
    return text


#: The two slots' size and the file's: a page each (see the module docstring).
SLOT = 4096
FILE_SIZE = 2 * SLOT
#: The format's version, the last byte of `MAGIC` (see "A newer format" above).
VERSION = 1
#: Starts every slot record.
MAGIC = b"AGANCHR" + str(VERSION).encode()
#: magic, counter, flags, body length; then the body, then the CRC32 of all before it.
_HEAD = struct.Struct(">8sQBH")
_CRC = struct.Struct(">I")
_DURABLE = 1
#: Read at most this much of a file: an anchor is 8 KiB, and a huge file put
#: in its place must not be read whole.
_READ_LIMIT = 65536
_datasync = getattr(os, "fdatasync", os.fsync)  # macOS has only fsync


@dataclass(frozen=True, slots=True)
class _Slot:
    index: int  #: 0 for A, 1 for B
    counter: int
    durable: bool
    body: bytes


def _record(counter: int, durable: bool, state: AnchorState) -> bytes:
    body = _body(state)
    head = _HEAD.pack(MAGIC, counter, _DURABLE if durable else 0, len(body))
    record = head + body
    if len(record) + _CRC.size > SLOT:
        # Hashes are 64 hex digits; only a caller's mistake gets here, and
        # nothing has been written yet.
        raise ValueError(f"an anchor state of {len(body)} bytes does not fit a slot")
    return record + _CRC.pack(zlib.crc32(record))


def _slot(index: int, data: bytes) -> _Slot | None:
    """Slot ``index`` of a slotted file, or None when it holds no whole record."""
    # Offsets into ``data`` rather than a copy of the slot: a write reads
    # both slots, and a record is a few hundred bytes of a 4 KiB page.
    start = index * SLOT
    size = min(len(data) - start, SLOT)
    if size < _HEAD.size + _CRC.size:
        return None
    magic, counter, flags, length = _HEAD.unpack_from(data, start)
    end = _HEAD.size + length
    if magic != MAGIC or end + _CRC.size > size:
        return None
    (crc,) = _CRC.unpack_from(data, start + end)
    if crc != zlib.crc32(memoryview(data)[start:start + end]):
        return None
    return _Slot(index, counter, bool(flags & _DURABLE), data[start + _HEAD.size:start + end])


class _Known:
    """The file as this process's last write left it, and what its bytes say, so
    that a write finding the very same bytes need neither decode them nor look
    for the slot to leave alone (tests/durability/test_anchor.py checks each
    field against a fresh read of the file)."""

    __slots__ = ("base", "base_durable", "base_state", "counter", "current", "data")

    def __init__(self, data: bytearray, counter: int, current: AnchorState | None,
                 base: int, base_state: AnchorState, base_durable: bool) -> None:
        #: The file's bytes, updated in place by each write (no 8 KiB copies).
        self.data = data
        #: The newest slot's counter.
        self.counter = counter
        #: The state the file holds (its newest slot's; None: that slot is garbage).
        self.current = current
        #: The slot a write leaves alone (`_base`), with its state and flag.
        self.base, self.base_state, self.base_durable = base, base_state, base_durable


def _slots(data: bytes) -> list[_Slot] | None:
    """The valid slots of a slotted file (maybe none); None for another format."""
    if len(data) != FILE_SIZE and not data.startswith(MAGIC):
        return None
    return [s for s in (_slot(0, data), _slot(1, data)) if s is not None]


def newer_format(data: bytes) -> int | None:
    """The version of the newer format a slot of ``data`` (a file's first bytes) is in,
    the higher of the two; None when neither slot's magic names a version above
    `VERSION` (this format, an old whole-file JSON anchor, or garbage)."""
    stem = len(MAGIC) - 1
    found = [data[start + stem] - ord("0") for start in (0, SLOT)
             if len(data) > start + stem and data[start:start + stem] == MAGIC[:stem]]
    newer = [version for version in found if VERSION < version <= 9]
    return max(newer) if newer else None


class _NewerFormat(ValueError):
    """`AnchorFile.read` met a file in a newer format (`newer_format`)."""


def _newer_text(path: Path, version: int) -> str:
    """What a newer format's refusal says (`newer_format`)."""
    return (f"the anchor {path} was written by a newer arrowgate (anchor format {version}; "
            f"this engine knows format {VERSION}): open the store with that engine; "
            "nothing was written to it")


def _decode(data: bytes) -> AnchorState:
    """The state a file's bytes hold, in either format.

    Raises:
        ValueError (or KeyError, TypeError, AttributeError, RecursionError):
            not an anchor.
    """
    return _state_of(data, _slots(data))


def _state_of(data: bytes, slots: list[_Slot] | None) -> AnchorState:
    """`_decode` with the file's `_slots` already read (a write needs them too)."""
    if slots is None:
        return _state(data)  # the old format: one JSON object
    if not slots:
        raise ValueError("neither of its two slots holds a whole record")
    return _state(max(slots, key=lambda s: s.counter).body)


def _regular(fd: int, path: str | Path) -> os.stat_result:
    """``fd``'s status, when it is a regular file.

    Raises:
        OSError: it is a directory, a FIFO, a socket or a device: no anchor, and
            reading one could wait for ever or never end.
    """
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        kind = ("a directory" if stat.S_ISDIR(st.st_mode) else
                "a FIFO" if stat.S_ISFIFO(st.st_mode) else
                "a socket" if stat.S_ISSOCK(st.st_mode) else "a device")
        raise OSError(errno.EINVAL, f"not a regular file but {kind}", str(path))
    return st


def _in_range(state: AnchorState) -> AnchorState:
    """``state``, when every row it names has a number a store's 64-bit row can have.

    JSON's integers have no bound: a hand-written anchor naming row 2**70 would
    otherwise reach the store's look-up of that row (round 22: SQLite raised
    OverflowError there).

    Raises:
        ValueError: a number below 0 or past 2**63 - 1.
    """
    for anchor in state:
        if anchor is not None and not 0 <= anchor.seq < 1 << 63:
            raise ValueError(f"not a sequence number a row can have: {anchor.seq}")
    return state


def _read_up_to(fd: int, limit: int) -> bytes:
    """At most ``limit`` bytes from the start of the regular file ``fd``."""
    parts: list[bytes] = []
    size = 0
    while size < limit:
        part = os.pread(fd, limit - size, size)
        if not part:
            break
        parts.append(part)
        size += len(part)
    return b"".join(parts)


#: What reading garbage as an anchor can raise.
_GARBAGE = (ValueError, KeyError, TypeError, AttributeError, RecursionError)


class AnchorFile:
    """Reads and advances ``<database>.anchor``; several processes may share it.

    The file and its lock stay open between writes (`close` closes them); a
    file replaced or removed meanwhile is noticed and opened afresh.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._lock_path = self.path.with_name(self.path.name + ".lock")
        #: Both as text, for the `os.stat` of every write (a Path converts itself each time).
        self._file_text, self._lock_text = str(self.path), str(self._lock_path)
        #: Threads of one process: flock does not exclude them on a shared descriptor.
        self._mutex = threading.Lock()
        #: Per key ("lock", "file"): the descriptor, and the device and inode it is of.
        self._fds: dict[str, tuple[int, int, int]] = {}
        self._pid = os.getpid()
        #: The file as the last write left it (`_Known`), or None.
        self._known: _Known | None = None
        weakref.finalize(self, _close_all, self._fds)

    def exists(self) -> bool:
        """True once any anchor was written."""
        return self.path.exists()

    def read(self) -> AnchorState | None:
        """The anchor state, or None when none was written yet.

        Raises:
            ValueError: the file exists but cannot be read as an anchor, or is in
                a newer format (`newer_format`), saying which.
        """
        try:
            # Non-blocking: a FIFO in the anchor's place must not make the
            # reader wait for a writer (round 22); `_regular` then refuses it.
            fd = os.open(self.path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
            try:
                _regular(fd, self.path)
                data = _read_up_to(fd, _READ_LIMIT)
            finally:
                os.close(fd)
            version = newer_format(data)
            if version is None:
                return _in_range(_decode(data))
        except FileNotFoundError:
            return None
        except (OSError, *_GARBAGE) as exc:
            # A directory, an unreadable file or garbage in its place: a
            # finding for `log verify`, never a traceback.
            raise ValueError(f"the anchor {self.path} is not readable: "
                             f"{type(exc).__name__}: {exc}") from exc
        raise _NewerFormat(_newer_text(self.path, version))

    def refuse_newer(self) -> None:
        """Refuse the store this is the anchor of when a newer arrowgate wrote the file
        in its format (`newer_format`): called before the store is migrated or written.
        A file that is missing or not one to read is left to `read` (and `log verify`)
        to tell.

        Raises:
            StoreFailed: reason ``schema-mismatch``, naming the file and the version.
        """
        try:
            self.read()
        except _NewerFormat as exc:
            raise StoreFailed(str(exc), reason="schema-mismatch") from None
        except ValueError:
            pass  # unreadable or garbage: `read`'s finding, not a newer engine's

    def write(self, state: AnchorState) -> None:
        """Write ``state`` unless the file already holds a newer one.

        Durable when it returns, unless the record already on disk accepts
        every row ``state`` accepts (see the module docstring).

        Raises:
            OSError: the file could not be written (a directory in its place,
                a full disk); nothing the reader would take was changed.
        """
        with self._mutex:
            if self._pid != os.getpid():
                # A forked child must not share its parent's lock description
                # (closing its copies leaves the parent's open).
                _close_all(self._fds)
                self._pid = os.getpid()
            lock = self._held("lock", self._lock_text, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
            # Writers may reach this point out of order; under the lock an
            # older state never replaces a newer one.
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                self._write_locked(state)
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def close(self) -> None:
        """Close the file and its lock (a later `write` opens them again)."""
        with self._mutex:
            _close_all(self._fds)

    def _held(self, key: str, path: str, flags: int) -> int:
        """The descriptor held open for ``path``, opened afresh (with ``flags``)
        when the file at ``path`` is no longer the one held (replaced, removed)."""
        held = self._fds.get(key)
        if held is not None:
            try:
                st = os.stat(path)
                if st.st_ino == held[2] and st.st_dev == held[1]:
                    return held[0]
            except FileNotFoundError:
                pass
            del self._fds[key]
            os.close(held[0])
        # Non-blocking, then refused unless a regular file: opening a FIFO for
        # writing would wait for a reader, and a device is no anchor (round 22).
        fd = os.open(path, flags | os.O_NONBLOCK | os.O_CLOEXEC, 0o666)
        try:
            st = _regular(fd, path)
        except OSError:
            os.close(fd)
            raise
        self._fds[key] = (fd, st.st_dev, st.st_ino)
        return fd

    def _write_locked(self, state: AnchorState) -> None:
        try:
            fd: int | None = self._held("file", self._file_text, os.O_RDWR)
        except (FileNotFoundError, PermissionError):
            fd = None  # replaced whole below, as a missing or unreadable file always was
        known, self._known = self._known, None
        if fd is None:
            self._replace(state)
            return
        # One byte more than a slotted file: a longer file never matches.
        data = os.pread(fd, FILE_SIZE + 1, 0)
        if known is not None and data == known.data:
            # Read under the lock, byte for byte what our last write left: no
            # other writer came between, and what it says is known. (The bytes
            # are compared, not a time or a size: any other write shows.)
            if state.newer_than(known.current):
                self._advance(fd, known, state)
            else:
                self._known = known
            return
        version = newer_format(data)
        if version is not None:
            # Never written over: this format would undo the newer engine's record.
            raise OSError(_newer_text(self.path, version))
        if len(data) > FILE_SIZE:
            data = os.pread(fd, _READ_LIMIT, 0)
        # The slots are read once, for both questions: is the file's state older
        # than ``state``, and which slot must this write leave alone.
        slots = _slots(data) if data else None
        try:
            current = _state_of(data, slots) if data else None
        except _GARBAGE:
            current = None  # neither slot whole, or garbage: replaced below
        if not state.newer_than(current):
            return
        base = _base(slots) if slots else None
        if base is None or not slots:
            self._replace(state)
            return
        slot, base_state = base
        # A file of another size still has its slots rewritten in place; only
        # one of exactly FILE_SIZE bytes can match `_Known` again, so the
        # bytes kept are the first FILE_SIZE (what the slots occupy).
        image = bytearray(data[:FILE_SIZE].ljust(FILE_SIZE, b"\0"))
        self._advance(fd, _Known(image, max(s.counter for s in slots), current,
                                 slot.index, base_state, slot.durable), state,
                      keep=len(data) == FILE_SIZE)

    def _advance(self, fd: int, known: _Known, state: AnchorState, *,
                 keep: bool = True) -> None:
        """Write ``state`` into the slot ``known`` does not leave alone; synced
        unless the base covers it. ``known`` then describes the file again and
        is kept (``keep``) for the next write."""
        durable = not known.base_state.covers(state)
        counter = known.counter + 1
        record = _record(counter, durable, state)
        written = 1 - known.base
        offset = written * SLOT
        if os.pwrite(fd, record, offset) != len(record):
            raise OSError(f"the anchor {self.path}: a short write")
        if durable:
            _datasync(fd)
        if not keep:
            return
        known.data[offset:offset + len(record)] = record
        known.counter, known.current = counter, state
        # The new base is the newest synced slot (the newest of all if none
        # is): the slot written if it was synced, else the base it left alone
        # — unless that one was not synced either.
        if durable or not known.base_durable:
            known.base, known.base_state, known.base_durable = written, state, durable
        self._known = known

    def _replace(self, state: AnchorState) -> None:
        """Write a whole new file (slot A only) by tmp file, fsync and rename."""
        image = _record(1, True, state).ljust(FILE_SIZE, b"\0")
        tmp = self.path.with_name(self.path.name + f".{os.getpid()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NONBLOCK | os.O_CLOEXEC,
                     0o666)
        try:
            try:
                _regular(fd, tmp)
                if os.write(fd, image) != len(image):
                    raise OSError(f"the anchor {tmp}: a short write")
                os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(tmp, self.path)
        except OSError:
            # A full disk or a directory in the anchor's place: leave no tmp
            # file behind (the caller reports the failure).
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
        dir_fd = os.open(self.path.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
        # The held descriptor (if any) is of the file replaced: the next write's
        # `_held` opens this one, whose bytes are known.
        self._known = _Known(bytearray(image), 1, state, 0, state, True)


def _base(slots: list[_Slot]) -> tuple[_Slot, AnchorState] | None:
    """The slot a write must leave alone — the newest synced one (the newest of
    all if none says so) — with its state; None when its record is no anchor."""
    synced = [s for s in slots if s.durable] or slots
    base = max(synced, key=lambda s: s.counter)
    try:
        return base, _state(base.body)
    except _GARBAGE:
        return None


def _close_all(fds: dict[str, tuple[int, int, int]]) -> None:
    for fd, _dev, _ino in fds.values():
        os.close(fd)
    fds.clear()
