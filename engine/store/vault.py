"""Secrets an operator stored for one host each (SPEC §8.2, issue: secret placeholders).

A card never reads a value: it writes ``{{secret:NAME}}`` in a request
header and the guarded fetch fills it in for that one host over https. The
card may learn only whether a secret is set. Values live in the app's
database, readable by whoever can read that file (the OS keychain is the
canvas app's to wire in, through this same interface).
"""

from __future__ import annotations

import re

from sqlite_utils import Database

from engine.core.hosts import host_pattern_problem, normalise_host

__all__ = ["SECRET_NAME", "SecretVault"]

# Matched with fullmatch: "$" alone let a trailing newline through.
SECRET_NAME = re.compile(r"[A-Za-z0-9_.-]{1,100}")


class SecretVault:
    """Reads and writes the ``secrets`` table (inside the caller's transaction)."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self._cache: dict[str, tuple[str, str]] = {
            r["name"]: (r["host"], r["value"]) for r in db.query("select * from secrets")}

    @staticmethod
    def name_problem(name: object) -> str | None:
        """What is wrong with a secret's name, or None."""
        if not isinstance(name, str):
            return f"a secret's name is text, not {type(name).__name__}"
        if not SECRET_NAME.fullmatch(name):
            return "a secret's name is letters, digits, '_', '.' and '-'"
        return None

    @staticmethod
    def problem(name: object, host: object) -> str | None:
        """What is wrong with a secret's name or host, or None."""
        problem = SecretVault.name_problem(name)
        if problem:
            return problem
        if not isinstance(host, str):
            return f"a secret's host is text, not {type(host).__name__}"
        if host.startswith("*."):
            return "a secret is for exactly one host, not a pattern"
        problem = host_pattern_problem(host)
        if problem:
            return f"host {host!r} {problem}"
        if normalise_host(host) == "localhost":
            return "secrets are never sent to this computer"
        return None

    def put(self, name: str, host: str, value: str, t: float) -> None:
        """Store (or replace) a secret for ``host``."""
        host = normalise_host(host)
        self.db.execute("insert or replace into secrets (name, host, value, t) values (?, ?, ?, ?)",
                        [name, host, value, t])
        self._cache[name] = (host, value)

    def delete(self, name: str) -> None:
        """Remove a secret."""
        self.db.execute("delete from secrets where name = ?", [name])
        self._cache.pop(name, None)

    def lookup(self, name: str) -> tuple[str, str] | None:
        """(host, value) of a secret, for the guarded fetch only."""
        return self._cache.get(name)

    def is_set(self, name: str) -> bool:
        """All a card may learn about a secret."""
        return name in self._cache

    def reload(self) -> None:
        """Re-read the table (after a failed write was rolled back)."""
        self._cache = {r["name"]: (r["host"], r["value"])
                       for r in self.db.query("select * from secrets")}
