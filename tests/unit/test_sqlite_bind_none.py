"""The SQLite store binds None through an adapter that gives None back (`_bind_none_plainly`)."""

from __future__ import annotations

import sqlite3

import pytest

import engine.store.sqlite as store_sqlite


def test_none_still_binds_null() -> None:
    """With the store imported, None is stored as NULL, as sqlite3 stores it without one."""
    assert (type(None), sqlite3.PrepareProtocol) in sqlite3.adapters
    db = sqlite3.connect(":memory:")
    db.execute("create table t (a, b)")
    db.execute("insert into t values (?, ?)", (None, "x"))
    db.executemany("insert into t values (?, ?)", [(None, None), (1, None)])
    assert db.execute("select a is null, typeof(a), b is null from t").fetchall() == [
        (1, "null", 0), (1, "null", 1), (0, "integer", 1)]


def test_an_adapter_the_application_registered_is_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    """Only a registry without an adapter for None gets the store's."""
    mine = {(type(None), sqlite3.PrepareProtocol): lambda _none: "app's"}
    monkeypatch.setattr(sqlite3, "adapters", mine)
    monkeypatch.setattr(sqlite3, "register_adapter", lambda *_args: pytest.fail("replaced"))
    store_sqlite._bind_none_plainly()
    assert sqlite3.adapters is mine
