"""rv17: 624bf1e checked set_secret's and revoke's argument types; delete_secret and
secret_is_set still raise a bare TypeError for a name that is not text (a list:
"unhashable type"), and delete_secret(None) silently succeeds. Same rule as
set_secret: INVALID_ARGUMENT (`SecretVault.problem`).
"""

from __future__ import annotations

from typing import Any

import pytest

from engine.core.errors import InvalidArgument


async def test_rv17_delete_secret_of_a_list_is_invalid_argument(make_engine: Any) -> None:
    engine = make_engine()
    with pytest.raises(InvalidArgument):
        await engine.delete_secret(["x"])


async def test_rv17_delete_secret_of_none_is_invalid_argument(make_engine: Any) -> None:
    engine = make_engine()
    with pytest.raises(InvalidArgument):
        await engine.delete_secret(None)


def test_rv17_secret_is_set_of_a_list_is_invalid_argument(make_engine: Any) -> None:
    engine = make_engine()
    with pytest.raises(InvalidArgument):
        engine.secret_is_set(["x"])
