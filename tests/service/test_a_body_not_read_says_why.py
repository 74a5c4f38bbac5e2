"""A body the service cannot read as JSON is a 400 that says why, and changes nothing.

Rule (SPEC §10.1 "Malformed JSON ... are 400 problems and change nothing"; the
project's rule that bad input gets an error naming what was wrong): the problem's
message names the reader's reason and, for a syntax error, the character it stopped
at. A body nested past what Python's reader recurses, an integer of more digits than
Python converts, and bytes that are not UTF-8 are said as such.

(Found in round 35: those three were all "There was an error parsing the body", and
a syntax error "body: JSON decode error", naming nothing.)
"""

from __future__ import annotations

import pytest

from tests.service.conftest import build_canvas, snapshot

CASES = [
    (b'{"card": }', "body: cannot be read as JSON: Expecting value (at character 9)"),
    (b'{"card": ' + b"1" * 5000 + b"}",
     "body: cannot be read as JSON: holds a number of more than 4,300 digits"),
    (b'{"card": ' + b"[" * 5000 + b"]" * 5000 + b"}",
     "body: cannot be read as JSON: nested too deeply"),
    (b'{"card": "\xda\xff"}',
     "body: cannot be read as JSON: not UTF-8 text (invalid continuation byte at byte 10)"),
]


@pytest.mark.parametrize("path", ["/v1/calls", "/v1/workspaces", "/v1/tokens"])
def test_a_body_not_read_says_why_and_changes_nothing(unix_server, tmp_path,
                                                      path: str) -> None:
    """Each way a body cannot be read is named in its 400, and the store is unchanged."""
    # GIVEN a canvas
    op = unix_server.client()
    build_canvas(op, tmp_path / "proj")
    before = snapshot(unix_server.db)
    for body, said in CASES:
        # WHEN a body that cannot be read is sent
        r = op.post(path, content=body, headers={"Content-Type": "application/json"})
        # THEN the problem says why, as malformed JSON
        assert r.status_code == 400, (path, body[:20], r.text)
        problem = r.json()
        assert (problem["reason"], problem["message"]) == (
            "malformed-json", f"INVALID_ARGUMENT: {said}"), (path, problem)
    assert snapshot(unix_server.db) == before
