"""`delete_secret` checks a secret's name as `set_secret` does, and `secret_is_set` that
it is text: INVALID_ARGUMENT naming what is wrong (`SecretVault.name_problem`), nothing
recorded. (A text name no secret can have is a question `secret_is_set` answers: False.)

(Found by a helper: a list raised a bare TypeError, "unhashable type", and
``delete_secret(None)`` succeeded with a ``secret.delete`` history entry.)
"""

from __future__ import annotations

from typing import Any

import pytest

from engine.core.errors import InvalidArgument


async def test_delete_secret_of_a_list_is_invalid_argument(make_engine: Any) -> None:
    """A list is no secret's name."""
    engine = make_engine()
    with pytest.raises(InvalidArgument, match="text, not list"):
        await engine.delete_secret(["x"])


async def test_delete_secret_of_none_is_invalid_argument_and_records_nothing(
        make_engine: Any) -> None:
    """None is refused before anything is recorded in the consent history."""
    engine = make_engine()
    before = engine.store.history.written
    with pytest.raises(InvalidArgument, match="text, not NoneType"):
        await engine.delete_secret(None)
    assert engine.store.history.written == before


def test_secret_is_set_of_a_list_is_invalid_argument(make_engine: Any) -> None:
    """A list is no secret's name to ask about either."""
    engine = make_engine()
    with pytest.raises(InvalidArgument, match="text, not list"):
        engine.secret_is_set(["x"])


async def test_deleting_a_badly_named_secret_is_invalid_argument_unless_stored(
        make_engine: Any) -> None:
    """Deleting a name `set_secret` refuses is refused, but a secret an older version
    stored under such a name can still be asked about and deleted."""
    engine = make_engine()
    with pytest.raises(InvalidArgument, match="letters, digits"):
        await engine.delete_secret("bad name")
    assert not engine.secret_is_set("bad name")
    # GIVEN a secret stored under a name today's rules refuse (older code let it through)
    engine.store.db.execute("insert into secrets (name, host, value, t) values (?, ?, ?, ?)",
                            ["old\n", "example.com", "v", 0.0])
    engine.store.db.conn.commit()
    engine.store.secrets.reload()
    # THEN it is known, and can be deleted
    assert engine.secret_is_set("old\n")
    await engine.delete_secret("old\n")
    assert not engine.secret_is_set("old\n")
    with pytest.raises(InvalidArgument):
        await engine.delete_secret("old\n")
