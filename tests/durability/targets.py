"""Where a durability test's store lives: a SQLite file, or a PostgreSQL database.

The durability, tamper and state-machine tests run on both stores (issue 20):
the ``target`` fixture (tests/durability/conftest.py) gives each test a
`Target` of each kind. A test that is inherently about the SQLite file (its
anchor file beside it, its page limit, its busy timeout, its migrations of old
files) is marked ``sqlite_only("why")`` and its PostgreSQL run is skipped,
naming why.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import psycopg

from engine import Engine

__all__ = ["Statement", "Target", "is_postgres"]

#: A statement that differs between the stores: {"sqlite": ..., "postgresql": ...}.
Statement = str | Mapping[str, str]


def is_postgres(location: str | Path) -> bool:
    """True when ``location`` is a PostgreSQL URL rather than a SQLite file."""
    return str(location).startswith(("postgresql://", "postgres://"))


class Target:
    """One store for one test: ``db`` (a SQLite file) or ``dsn`` (a PostgreSQL database).

    Direct SQL (``execute``, ``query``) goes around the engine, as a forger or
    a checker would; ``?`` placeholders are written for SQLite and translated.
    """

    def __init__(self, kind: str, db: Path, dsn: str | None = None) -> None:
        if kind not in ("sqlite", "postgresql") or (kind == "postgresql") != (dsn is not None):
            raise ValueError(f"a target is sqlite (a file) or postgresql (a URL), not {kind!r}")
        self.kind, self.db, self.dsn = kind, db, dsn
        self._conn: psycopg.Connection[Any] | None = None

    @property
    def postgres(self) -> bool:
        """The store is PostgreSQL."""
        return self.kind == "postgresql"

    @property
    def location(self) -> str:
        """The file path or the URL, as a writer process takes it."""
        return self.dsn if self.dsn is not None else str(self.db)

    def open(self, **kwargs: Any) -> Engine:
        """An engine on this store (every test's engine stays off the network)."""
        from engine import World

        kwargs.setdefault("world", World(net=None, fs=None))
        if self.dsn is not None:
            return Engine.open(store=self.dsn, **kwargs)
        return Engine.open(self.db, **kwargs)

    def anchor_path(self) -> Path:
        """The log's anchor file: beside the SQLite file, or this machine's anchor of the
        PostgreSQL database (`engine.store.pg.anchoring`)."""
        if self.dsn is None:
            return Path(str(self.db) + ".anchor")
        from engine.store.pg.store import PGStore

        store = PGStore.open(self.dsn)
        try:
            return store.anchor.path
        finally:
            store.close()

    def args(self) -> list[str]:
        """The CLI's options naming this store (``log verify`` and friends)."""
        return ["--store", self.dsn] if self.dsn is not None else ["--db", str(self.db)]

    def _statement(self, statement: Statement) -> str:
        return statement if isinstance(statement, str) else statement[self.kind]

    def execute(self, *statements: Statement) -> None:
        """Run statements around the engine and commit them (a script may hold several)."""
        if self.dsn is None:
            conn = sqlite3.connect(self.db)
            try:
                for statement in statements:
                    conn.executescript(self._statement(statement))
                conn.commit()
            finally:
                conn.close()
            return
        with psycopg.connect(self.dsn, autocommit=True) as pg:
            for statement in statements:
                pg.execute(self._statement(statement).encode())

    def query(self, sql: str, params: list[Any] | None = None) -> list[tuple[Any, ...]]:
        """Rows of one SELECT, read around the engine (committed data only)."""
        if self.dsn is None:
            conn = sqlite3.connect(self.db)
            try:
                return list(conn.execute(sql, params or []))
            finally:
                conn.close()
        if self._conn is None or self._conn.closed:
            self._conn = psycopg.connect(self.dsn, autocommit=True)
        return [tuple(r) for r in self._conn.execute(sql.replace("?", "%s"), params or [])]

    def log_seqs(self) -> list[int]:
        """The arrow log's row numbers, in order."""
        return [int(r[0]) for r in self.query("select seq from log order by seq")]

    def close(self) -> None:
        """Close the reading connection, if one was opened."""
        if self._conn is not None:
            self._conn.close()
            self._conn = None
