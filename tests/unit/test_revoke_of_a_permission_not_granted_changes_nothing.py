"""Revoking a permission the package does not hold is told as it is: it was not granted,
and nothing changed. The engine says so (`Engine.revoke` answers False) and writes no
consent history row, since no consent changed (SPEC §4.3: a revoke of a *granted*
permission); ``arrowgate package revoke`` prints "P: PERM was not granted; nothing
changed", exit 1, ``{"package", "not_granted"}`` under ``--json``, on the database and
through the service alike (tests/unit/test_cli_write.py, test_cli_service.py). A revoke
of a granted permission is as before: True, one row.

(Found in round 28: ``arrowgate package revoke acme.prompter clipboard.write`` of a
permission never granted answered "acme.prompter: revoked clipboard.write", exit 0, and
recorded an accepted revoke in the history.)
"""

from __future__ import annotations

import asyncio

from tests.conftest import manifest, offer_install, open_store

PERMISSIONS = {"agents.prompt": {}, "clipboard.write": {"optional": True}}


def test_the_engine_tells_a_revoke_of_what_was_not_granted(store: str) -> None:
    async def go() -> None:
        engine = open_store(store)
        try:
            await offer_install(engine, manifest("acme.prompter", PERMISSIONS))
            rows = len(engine.history.entries())
            # WHEN the person revokes the optional permission, never granted
            revoked = await engine.revoke("acme.prompter", "clipboard.write")
            # THEN the engine says nothing was revoked, and wrote nothing
            assert revoked is False
            assert len(engine.history.entries()) == rows
            assert engine.state.grants["acme.prompter"] == {"agents.prompt"}
            # AND a revoke of what is granted revokes it, one history row
            assert await engine.revoke("acme.prompter", "agents.prompt") is True
            entries = engine.history.entries()
            assert len(entries) == rows + 1 and entries[-1]["action"] == "revoke"
            assert engine.state.grants["acme.prompter"] == set()
        finally:
            engine.close()
        # AND so it stays, opened again (another process, a restart)
        again = open_store(store)
        try:
            assert len(again.history.entries()) == rows + 1
        finally:
            again.close()

    asyncio.run(go())
