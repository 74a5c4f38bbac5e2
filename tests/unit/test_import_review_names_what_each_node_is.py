"""An import's review says what each node is, so its SHA-256 binds what the arrows reach.

SPEC §4.5: drawing an arrow is consent, given by a person, and `import_canvas` takes the
SHA-256 of the review the person saw (`preview_import`). An arrow's meaning is its ends':
a card's arrow to an agent gives it the agent's prompt, to a terminal its keyboard. So the
review names every node with its type, a card with its package (and whether it is shown
or runs in the background), an agent in dangerous mode as such; a file whose nodes are
other things than those reviewed is ``stale``, nothing imported.

(Found in round 23: the review listed the arrows by their ends' ids and counted nodes by
type only, so a file that swapped an agent's and a terminal's types, or a card's package,
had the same review and digest, and imported under the review of another.)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from engine import ApprovalRefused, Engine


def _doc(kinds: dict[str, dict[str, Any]]) -> dict[str, Any]:
    box = {"x": 0, "y": 0, "width": 10, "height": 10}
    return {"nodes": [{"id": i, "type": "text", "text": i, **box} for i in sorted(kinds)],
            "edges": [{"id": "e1", "fromNode": "c", "toNode": "a"}],
            "arrowgate": {"version": 1, "nodes": kinds}}


_SEEN = {"c": {"type": "card", "package": "acme.notes"}, "a": {"type": "agent"},
         "t": {"type": "terminal"}}

#: Same ids, same arrows, same count of each type: only what the nodes are differs.
_OTHERS = {
    "agent and terminal swapped": {**_SEEN, "a": {"type": "terminal"}, "t": {"type": "agent"}},
    "another package": {**_SEEN, "c": {"type": "card", "package": "acme.shell"}},
    "a hidden card": {**_SEEN, "c": {"type": "card", "package": "acme.notes",
                                     "visible": False}},
    "a background card": {**_SEEN, "c": {"type": "card", "package": "acme.notes",
                                         "background": True}},
    "a dangerous agent": {**_SEEN, "a": {"type": "agent", "dangerous": True}},
}


@pytest.mark.postgres
@pytest.mark.parametrize("other", sorted(_OTHERS))
async def test_a_file_of_other_nodes_is_stale_under_the_review_seen(
        open_engine: Any, tmp_path: Path, other: str) -> None:
    engine: Engine = open_engine()
    seen = await engine.preview_import("w", tmp_path, _doc(_SEEN))
    with pytest.raises(ApprovalRefused) as refused:
        await engine.import_canvas("w", tmp_path, _doc(_OTHERS[other]),
                                   review_sha256=seen.sha256)
    assert refused.value.reason == "stale"
    for one in (engine, open_engine()):
        assert "w" not in one.state.workspaces and one.state.canvas.arrow("e1") is None


@pytest.mark.postgres
async def test_the_review_names_each_node_and_what_it_is(open_engine: Any,
                                                         tmp_path: Path) -> None:
    engine: Engine = open_engine()
    review = await engine.preview_import("w", tmp_path, _doc(_OTHERS["a dangerous agent"]))
    text = "\n".join(review.lines)
    assert "c: card of package acme.notes" in text, text
    assert "a: agent, dangerous" in text and "t: terminal" in text, text
    # The same file reviewed again is the same review: its digest imports it.
    await engine.import_canvas("w", tmp_path, _doc(_OTHERS["a dangerous agent"]),
                               review_sha256=review.sha256)
    assert engine.state.canvas.node("a") is not None


@pytest.mark.postgres
async def test_settings_other_than_the_reviewed_are_stale(open_engine: Any,
                                                          tmp_path: Path) -> None:
    """Settings are consent too (SPEC §4.5): an import given settings its review did not
    show (the secret deny-list off) is ``stale``; the review names those it sets."""
    engine: Engine = open_engine()
    seen = await engine.preview_import("w", tmp_path, _doc(_SEEN))
    with pytest.raises(ApprovalRefused) as refused:
        await engine.import_canvas("w", tmp_path, _doc(_SEEN), review_sha256=seen.sha256,
                                   settings={"secret_denylist": False})
    assert refused.value.reason == "stale"
    assert "w" not in engine.state.workspaces
    shown = await engine.preview_import("w", tmp_path, _doc(_SEEN),
                                        settings={"secret_denylist": False})
    assert any("secret_denylist" in line for line in shown.lines), shown.lines
