"""A change feed whose rows were deleted by hand (a person tidying the store at a shell)
still carries the next revoke to every engine (SPEC §4.3, §10 "Storage": a revoke
through one engine is refused on every other engine's next call), on both stores.

The engines number changes after the newest in the feed: once its rows are gone, the
next changes take numbers an engine has already seen. An engine must take a feed whose
newest number is below what it has seen for what it is — cut back — and read the store
whole, never wait for numbers past it that the next changes will not have.

Found in round 25: on PostgreSQL, after ``delete from changes``, an engine that had
seen change 12 looked for changes after 12 at every call, found none, and went on
allowing calls of a permission another engine had revoked.
"""

from __future__ import annotations

from pathlib import Path

from tests.conftest import manifest, offer_install
from tests.durability.targets import Target


async def test_a_change_feed_cut_back_by_hand_still_carries_a_revoke(
        target: Target, tmp_path: Path) -> None:
    one, two = target.open(), target.open()
    try:
        # GIVEN two engines that have seen every change, and a feed emptied by hand
        (tmp_path / "ws").mkdir()
        await one.create_workspace("w1", tmp_path / "ws")
        await offer_install(one, manifest("acme.p", {"agents.prompt": {}}))
        await one.add_node({"id": "c1", "type": "card", "package": "acme.p"}, workspace="w1")
        await one.add_node({"id": "a1", "type": "agent"}, workspace="w1")
        await one.add_arrow({"id": "e1", "from": "c1", "to": "a1"})
        assert (await two.call("c1", "agents.prompt", "a1", {"text": "before"})).allowed
        assert (await one.call("c1", "agents.prompt", "a1", {"text": "before"})).allowed
        target.execute("delete from changes")
        # WHEN one engine revokes
        await one.revoke("acme.p", "agents.prompt")
        # THEN the other refuses the permission at its next call
        refused = await two.call("c1", "agents.prompt", "a1", {"text": "after"})
        assert (refused.code, refused.reason) == ("PERMISSION_DENIED", "not-granted"), refused
        # AND it goes on seeing the changes after that one
        await one.grant("acme.p", "agents.prompt")
        assert (await two.call("c1", "agents.prompt", "a1", {"text": "again"})).allowed
    finally:
        one.close()
        two.close()
