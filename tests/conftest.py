"""Shared fixtures: an engine on a temporary database with a virtual clock."""

from __future__ import annotations

import asyncio
import itertools
import json
import re
import sqlite3
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from engine import Engine, World, file_digests
from engine.app.replay import VirtualClock

# PostgreSQL: the session's server and a fresh database per test (pg_dsn).
pytest_plugins = ["tests.pgfixtures"]

#: The folders whose modules the tests' child processes import.
_SOURCES = ("canvas", "engine", "tui", "tests", "bench")


def pytest_configure(config: pytest.Config) -> None:
    """Compile arrowgate's sources to bytecode once, before any worker or child starts.

    The suite starts ~700 Python processes (`arrowgate serve`, the log verifier, the
    command line's verbs). Where ``PYTHONDONTWRITEBYTECODE`` is set (this workplace's
    machines set it) nothing caches the compiled modules, so a fresh clone's children
    each compiled the engine from source again: 0.7 s of processor time for a verb that
    takes 0.35 s from bytecode, for as long as no child without the setting had written
    them. `compileall` writes them whatever the setting (2.5 s, once; a folder it cannot
    write only leaves the children to compile, as before).
    """
    if hasattr(config, "workerinput"):
        return  # an xdist worker: its controller compiled before starting it
    import compileall

    root = Path(__file__).resolve().parents[1]
    for name in _SOURCES:
        compileall.compile_dir(root / name, quiet=2)


#: Numbers the folders `_new_folder` makes, in this process (each xdist worker has a
#: base folder of its own, new each session).
_folders = itertools.count()


def _new_folder(factory: pytest.TempPathFactory, name: str) -> Path:
    """A new, empty folder (mode 0700) in the session's temporary folder, named
    ``name``, a dash and a number (a name made from a test's holds no dash: two never meet).

    pytest's own `mktemp` finds its next number by listing the whole session folder, so
    a worker making two folders a test for ~1,700 tests spent its processor's time in
    those listings: 7 % of the samples of `tests/unit` and `tests/durability` run in one
    process (py-spy). A number counted here costs nothing. The names are one character
    longer than pytest's: Unix socket paths under them are limited to about 100 bytes.
    """
    path = factory.getbasetemp() / f"{name}-{next(_folders)}"
    path.mkdir(mode=0o700)
    return path


@pytest.fixture
def tmp_path(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """pytest's `tmp_path` (a new folder for the test, named after it, kept after the
    session as pytest keeps its own), made in constant time (`_new_folder`)."""
    return _new_folder(tmp_path_factory, re.sub(r"\W", "_", request.node.name)[:30])


@pytest.fixture(autouse=True)
def _determinism(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                 tmp_path_factory: pytest.TempPathFactory) -> None:
    """Colour settings, the cursor's blink, the database, the app's data folder and the
    keymap: all fixed."""
    from textual.widgets import Input

    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.delenv("TEXTUAL_THEME", raising=False)
    monkeypatch.setenv("ARROWGATE_DB", str(tmp_path / "default.db"))
    # The app's data folder (`engine.store.database.app_data_folder`: the key of the
    # file writes' temporary names, every engine's) is the test's own, not the user's
    # ~/.local/share/arrowgate, which the suite wrote to. Beside ``tmp_path``, not in
    # it: many tests make ``tmp_path`` a workspace, and a workspace may not hold it.
    monkeypatch.setenv("XDG_DATA_HOME", str(_new_folder(tmp_path_factory, "data-home")))
    monkeypatch.setenv("ARROWGATE_KEYMAP", str(tmp_path / "no-keymap.json"))
    monkeypatch.setattr(Input, "_toggle_cursor", lambda _self: None)


@pytest.fixture(autouse=True)
def _events_match_their_schemas(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Every event the engine offers to cards, and every ``events.dropped`` the service
    writes, is what its schema in openapi.json says (`engine.service.eventschemas`):
    a field added, renamed or retyped without the schema fails the test that made it."""
    from pydantic import ValidationError

    from engine.service import events as sse
    from engine.service.eventschemas import check_event
    from engine.services.subscriptions import CARD_EVENTS, EventHub

    wrong: list[str] = []

    def check(type_: str, data: Any) -> None:
        try:
            check_event(type_, data)
        except ValidationError as exc:
            wrong.append(f"{type_} {data!r}: {exc}")

    publish, frame = EventHub.publish, sse.sse_frame

    def checked_publish(self: EventHub, event: Any) -> None:
        if event.type in CARD_EVENTS:
            check(event.type, event.data)
        publish(self, event)

    def checked_frame(seq: int | None, type_: str, data: dict[str, Any]) -> bytes:
        if type_ == "events.dropped":
            check(type_, data)
        return frame(seq, type_, data)

    monkeypatch.setattr(EventHub, "publish", checked_publish)
    monkeypatch.setattr(sse, "sse_frame", checked_frame)
    yield
    assert not wrong, "events unlike their schemas (engine/service/eventschemas.py):\n" + \
        "\n".join(wrong[:5])


@pytest.fixture
def clock() -> VirtualClock:
    """A clock that moves only when a test says so."""
    return VirtualClock(1000.0)


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    """Where the engine's SQLite file lives."""
    return tmp_path / "arrowgate.db"


@pytest.fixture
def make_engine(db_path: Path, clock: VirtualClock) -> Iterator[Any]:
    """Open engines on the same file (a restart is opening another)."""
    opened: list[Engine] = []

    def make(**kwargs: Any) -> Engine:
        # Tests never reach the real network or the real file scope unless
        # they pass a world of their own.
        kwargs.setdefault("world", World(net=None, fs=None))
        engine = Engine.open(db_path, clock=clock, **kwargs)
        opened.append(engine)
        return engine

    yield make
    for engine in opened:
        try:
            engine.close()
        except Exception:
            pass


@pytest.fixture
def open_engine(store: str) -> Iterator[Any]:
    """Open engines on one store, each as another process would: a SQLite file, then
    a PostgreSQL database (skipped without one), as `store` gives them."""
    opened: list[Engine] = []

    def make() -> Engine:
        engine = open_store(store)
        opened.append(engine)
        return engine

    yield make
    for engine in opened:
        engine.close()


@pytest.fixture(params=["sqlite", "postgres"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """Where an engine's store is, for `open_store`: a SQLite file, then a PostgreSQL
    database's URL (skipped without one). A test that opens the engine again on it
    sees a restart."""
    if request.param == "postgres":
        return str(request.getfixturevalue("pg_dsn"))
    return str(tmp_path / "arrowgate.db")


def open_store(store: str, **kwargs: Any) -> Engine:
    """An engine on ``store`` (`store`'s SQLite path or PostgreSQL URL); no real network
    or file scope unless ``world`` is given (the test closes it)."""
    kwargs.setdefault("world", World(net=None, fs=None))
    if store.startswith("postgresql://"):
        return Engine.open(store=store, **kwargs)
    return Engine.open(store, **kwargs)


def manifest(name: str, permissions: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    """A manifest dict."""
    return {"name": name, "version": "1.0.0", "permissions": permissions or {}, **extra}


async def offer_install(engine: Engine, raw: dict[str, Any], grant: Any = "required") -> None:
    """Offer a package and install it."""
    digests = file_digests({"manifest.json": json.dumps(raw, sort_keys=True),
                            "index.js": f"// {raw['name']}"})
    await engine.offer(raw["name"], raw, digests)
    if grant is not None:
        await engine.install(raw["name"], grant=grant)


@pytest.fixture
async def world(make_engine: Any, tmp_path: Path) -> AsyncIterator[Engine]:
    """A workspace with a prompter card c1, agents a1 and a2, a terminal and a note."""
    engine = make_engine()
    (tmp_path / "ws").mkdir(exist_ok=True)
    await engine.create_workspace("w1", tmp_path / "ws")
    await offer_install(engine, manifest("acme.prompter", {
        "agents.prompt": {}, "terminals.write": {}, "cards.connected": {},
        "clipboard.write": {"optional": True}}, tools=["relay"],
        ports={"inputs": [], "outputs": ["out"]}))
    for node in ({"id": "c1", "type": "card", "package": "acme.prompter"},
                 {"id": "a1", "type": "agent", "name": "A1", "tool": "claude-code"},
                 {"id": "a2", "type": "agent", "name": "A2", "tool": "codex"},
                 {"id": "t1", "type": "terminal"},
                 {"id": "n1", "type": "note"}):
        await engine.add_node(node, workspace="w1")
    await engine.add_arrow({"id": "e1", "from": "c1", "to": "a1"})
    await engine.add_arrow({"id": "e3", "from": "c1", "to": "t1"})
    await engine.add_arrow({"id": "e4", "from": "c1", "to": "n1"})
    yield engine


async def notes_world(db: Path | str, folder: Path, cards: int) -> Engine:
    """An engine on ``db`` with cards c0..c<n-1> of acme.notes, each wired to note n1.

    ``db`` is a SQLite file, or a ``postgresql://`` URL for the shared store.
    """
    if str(db).startswith(("postgresql://", "postgres://")):
        engine = Engine.open(store=str(db), world=World(net=None, fs=None))
    else:
        engine = Engine.open(db, world=World(net=None, fs=None))
    (folder / "ws").mkdir(parents=True, exist_ok=True)
    # Its users append as fast as they can, the calls' durability their subject: the
    # window of a card's note writes (60 a minute by default) set out of their way.
    await engine.create_workspace("w1", folder / "ws",
                                  settings={"card_write_limit": 1_000_000})
    await offer_install(engine, manifest("acme.notes", {"cards.connected": {}}))
    await engine.add_node({"id": "n1", "type": "note"}, workspace="w1")
    for i in range(cards):
        await engine.add_node({"id": f"c{i}", "type": "card", "package": "acme.notes"},
                              workspace="w1")
        await engine.add_arrow({"id": f"e{i}", "from": f"c{i}", "to": "n1"})
    return engine


def fail_saving_node(engine: Engine, node_id: str,
                     monkeypatch: pytest.MonkeyPatch) -> Callable[[], None]:
    """Make the SQLite store fail (an injected disk error) whenever it saves node ``node_id``.

    Returns what puts the store's own save back.
    """
    # Both ways the store writes a node: a new or moved one (the canvas's
    # `save_node`) and the changed data of one it holds (`update_node`, which
    # leaves the row to the commit).
    canvas, store = engine.store.canvas, engine.store  # type: ignore[attr-defined]
    save_node, update_node = canvas.save_node, store.update_node

    def failing(save: Callable[[Any], None]) -> Callable[[Any], None]:
        def fail(node: Any) -> None:
            if node.id == node_id:
                raise sqlite3.OperationalError("disk I/O error (injected)")
            save(node)
        return fail

    monkeypatch.setattr(canvas, "save_node", failing(save_node))
    monkeypatch.setattr(store, "update_node", failing(update_node))

    def restore() -> None:
        monkeypatch.setattr(canvas, "save_node", save_node)
        monkeypatch.setattr(store, "update_node", update_node)

    return restore


def polls(seconds: float = 30.0) -> Iterator[None]:
    """The turns of a polling loop, for up to ``seconds``: the loop breaks as soon as its
    condition holds, and asserts it after (the bound is generous, as `until`'s).

    ``for _ in polls(): ...`` in place of ``for _ in range(n)``, whose bound counts
    turns, not time, and so ends early when a loaded machine makes each turn slow.
    """
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        yield None


async def until(check: Callable[[], Any], timeout: float = 30.0) -> Any:
    """Poll a real process's effect until it shows, failing after ``timeout`` seconds.

    The bound is generous on purpose: the poll ends as soon as ``check`` holds, so it
    costs nothing when things go right, and a loaded machine (CI's two shared cores)
    can stall a process, a thread or a child for seconds at the wrong moment.
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not (value := check()):
        if loop.time() > deadline:
            raise AssertionError(f"not within {timeout} s")
        await asyncio.sleep(0.02)
    return value


#: Another program reading the database (`arrowgate log show`, `hold list`): how many
#: consent entries it holds. It closes its connection after, as each of them does.
_CONSENT_ENTRIES = ("import sqlite3, sys\n"
                    "conn = sqlite3.connect(sys.argv[1])\n"
                    "print(conn.execute('select count(*) from consent').fetchone()[0])\n"
                    "conn.close()\n")


def another_program_reads_consent(path: Path) -> int:
    """How many consent history entries another program reading the SQLite file
    ``path`` finds (a process of its own, closing the database after)."""
    done = subprocess.run([sys.executable, "-c", _CONSENT_ENTRIES, str(path)],
                          capture_output=True, text=True, timeout=60, check=True)
    return int(done.stdout)

