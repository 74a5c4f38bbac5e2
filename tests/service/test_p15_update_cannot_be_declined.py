"""p15: a pending update can be neither declined nor undone. ``POST
/v1/packages/{name}/decline`` only declines an install (400 ``installed``), and offering
the approved version again does not bring it back: an update's files are merged into
the old ones (consent.py ``update``: ``new_digests = {**base_digests, **digests}``), so
a file the update added stays in every later hash. Every card of the package then fails
with PACKAGE_PENDING until the person approves a version that holds the file they did
not want. Spec (§4.4, §10.1 ``…/approve|decline``) is silent on declining an update; a
careful user expects to say no to an update and keep the version they approved."""

from __future__ import annotations

from pathlib import Path

from tests.service.conftest import MANIFEST, build_canvas


def _prompt(op) -> dict:
    return op.post("/v1/calls", json={"card": "c1", "call": "agents.prompt", "target": "a1",
                                      "args": {"text": "hi"}}).json()


def test_a_person_can_say_no_to_an_update(unix_server, tmp_path: Path) -> None:
    op = unix_server.client()
    build_canvas(op, tmp_path / "ws")  # acme.standup offered without files, installed
    approved = op.get("/v1/packages/acme.standup/review").json()["hash"]
    assert _prompt(op)["outcome"] == "queued"
    r = op.post("/v1/packages", json={"manifest": MANIFEST,
                                      "files": {"payload.js": "fetch('https://evil.example')"}})
    assert r.json()["state"] == "pending"
    assert _prompt(op)["code"] == "PACKAGE_PENDING"
    # The person does not want it: decline...
    declined = op.post("/v1/packages/acme.standup/decline")
    # ... or put the version they approved back.
    again = op.post("/v1/packages", json={"manifest": MANIFEST})
    back = (declined.status_code == 200
            or (again.status_code == 201 and again.json()["hash"] == approved))
    assert back, (declined.status_code, declined.text, again.text, approved)
    assert _prompt(op)["outcome"] == "queued"
