"""A person can say no to an update: ``POST /v1/packages/{name}/decline`` discards the
pending version, the package is the approved version again (its manifest, files and
hash), its cards work again and the history records the decline; the declined files are
gone with it, so re-offering the approved version's files gives the approved hash
(SPEC §4.4, §10.1 ``…/approve|decline``).

(Found by a helper: decline answered 400 ``installed`` for an installed package with a
pending version, and re-offering the approved files kept the update's files merged in,
so every card failed with PACKAGE_PENDING until the unwanted version was approved.)"""

from __future__ import annotations

from pathlib import Path

from tests.service.conftest import MANIFEST, build_canvas, mint


def _prompt(op) -> dict:
    return op.post("/v1/calls", json={"card": "c1", "call": "agents.prompt", "target": "a1",
                                      "args": {"text": "hi"}}).json()


def _offer_unwanted(op) -> str:
    r = op.post("/v1/packages", json={"manifest": MANIFEST,
                                      "files": {"payload.js": "fetch('https://evil.example')"}})
    assert r.status_code == 201 and r.json()["state"] == "pending", r.text
    assert _prompt(op)["code"] == "PACKAGE_PENDING"
    return str(r.json()["hash"])


def test_declining_an_update_puts_the_approved_version_back(unix_server, tmp_path: Path) -> None:
    """Decline discards the pending version; the approved hash holds and cards work again."""
    op = unix_server.client()
    build_canvas(op, tmp_path / "ws")  # acme.standup offered without files, installed
    approved = op.get("/v1/packages/acme.standup/review").json()["hash"]
    assert _prompt(op)["outcome"] == "queued"
    unwanted = _offer_unwanted(op)
    # GIVEN a pending update WHEN someone other than the operator declines it THEN refused
    card = unix_server.client(mint(op, "card:c1"))
    assert card.post("/v1/packages/acme.standup/decline").status_code == 403
    # WHEN the person declines it
    r = op.post("/v1/packages/acme.standup/decline")
    assert r.status_code == 200, r.text
    assert (r.json()["hash"], r.json()["installed"]) == (approved, True)
    # THEN nothing waits, the approved version holds, and the decline is recorded
    assert op.get("/v1/packages/acme.standup/diff").status_code == 404
    assert op.get("/v1/packages/acme.standup/review").json()["hash"] == approved
    assert _prompt(op)["outcome"] == "queued"
    entries = op.get("/v1/history", params={"package": "acme.standup"}).json()["entries"]
    assert [(e["action"], e["accepted"]) for e in entries[-1:]] == [("decline", True)]
    assert unwanted in str(entries[-1])
    # AND a second decline, with nothing pending, is refused naming why
    r = op.post("/v1/packages/acme.standup/decline")
    assert (r.status_code, r.json()["reason"]) == (404, "nothing-pending"), r.text


def test_reoffering_the_approved_files_after_a_decline_gives_the_approved_hash(
        unix_server, tmp_path: Path) -> None:
    """The declined version's files are not merged into later offers."""
    op = unix_server.client()
    build_canvas(op, tmp_path / "ws")
    approved = op.get("/v1/packages/acme.standup/review").json()["hash"]
    _offer_unwanted(op)
    assert op.post("/v1/packages/acme.standup/decline").status_code == 200
    again = op.post("/v1/packages", json={"manifest": MANIFEST})
    assert again.status_code == 201 and again.json()["hash"] == approved, again.text
    assert op.get("/v1/packages/acme.standup/diff").status_code == 404
    assert _prompt(op)["outcome"] == "queued"
