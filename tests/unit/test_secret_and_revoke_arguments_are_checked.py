"""`set_secret` and `revoke` answer an argument of the wrong type with INVALID_ARGUMENT.

A secret's name is text of letters, digits, ``_``, ``.`` and ``-`` (no trailing
newline), its host text and its value text; anything else is refused, reason
``secret``, and nothing is stored. `revoke` given a permission that is not text
(a list) is ``no permission``, as an unknown permission is, and nothing changes.

(Found by a helper: set_secret stored a value of None, an int or bytes; a name
of 5 raised a bare TypeError from the name pattern; revoke(pkg, [list]) raised
TypeError: unhashable type.)
"""

from __future__ import annotations

from typing import Any

import pytest

from engine import InvalidArgument
from tests.conftest import manifest, offer_install


@pytest.mark.parametrize(("name", "host", "value"), [
    ("GH", "api.example.com", None),
    ("GH", "api.example.com", 5),
    ("GH", "api.example.com", b"s3cret"),
    (5, "api.example.com", "s3cret"),
    ("GH\n", "api.example.com", "s3cret"),
    ("GH", None, "s3cret"),
])
async def test_a_secret_that_is_not_text_is_refused_and_not_stored(
        make_engine: Any, name: Any, host: Any, value: Any) -> None:
    """INVALID_ARGUMENT, reason ``secret``; no secret is set."""
    engine = make_engine()
    with pytest.raises(InvalidArgument, match="secret") as refused:
        await engine.set_secret(name, host, value)
    assert refused.value.reason == "secret"
    assert not engine.secret_is_set("GH") and not engine.secret_is_set("GH\n")


async def test_revoking_a_permission_that_is_not_text_is_refused(make_engine: Any) -> None:
    """A list for a permission: INVALID_ARGUMENT ``no permission``; the grants stay."""
    engine = make_engine()
    await offer_install(engine, manifest("acme.r", {"usage.read": {}}))
    with pytest.raises(InvalidArgument, match="no permission"):
        await engine.revoke("acme.r", ["usage.read"])
    assert engine.state.grants["acme.r"] == {"usage.read"}
