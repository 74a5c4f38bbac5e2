"""Schema of the engine's tables; it evolves only through these migrations."""

from __future__ import annotations

from sqlite_utils import Database
from sqlite_utils.migrations import Migrations

__all__ = ["migrations"]

migrations = Migrations("engine")


@migrations()
def m001_engine(db: Database) -> None:
    """Packages, grants, prompts, rate counters, the arrow log, consent history."""
    db.table("packages").create(
        {
            "name": str,
            "state": str,  # available | installed
            "manifest": str,  # JSON: the approved (or offered) manifest, raw
            "digests": str,  # JSON: path -> sha256
            "hash": str,
            "pending_manifest": str,
            "pending_digests": str,
            "pending_hash": str,
        },
        pk="name",
    )
    db.table("grants").create(
        {"package": str, "permission": str, "t": float, "by": str},
        pk=("package", "permission"),
    )
    db.table("prompts").create(
        {
            "id": str,
            "position": int,
            "workspace": str,
            "card": str,
            "package": str,
            "agent": str,
            "arrow": str,
            "call": str,
            "text": str,
            "chain": str,
            "state": str,
            "t": float,
            "deadline": float,
            "approver": str,
            "code": str,
            "reason": str,
            "message": str,
        },
        pk="id",
    )
    db.table("prompts").create_index(["state"])
    db.table("rate_events").create({"id": int, "card": str, "key": str, "t": float}, pk="id")
    db.execute(
        "create table log ("
        " seq integer primary key, t real, workspace text, arrow text, card text,"
        " package text, version text, call text, target text, payload text, chain text,"
        " outcome text, code text, reason text, approver text, prompt text,"
        " prev text not null, hash text not null)"
    )
    db.table("log").create_index(["arrow", "seq"])
    db.table("log").create_index(["card", "seq"])
    db.table("consent").create(
        {
            "seq": int,
            "t": float,
            "principal": str,
            "action": str,
            "subject": str,
            "accepted": int,
            "code": str,
            "reason": str,
            "detail": str,
        },
        pk="seq",
    )
    db.table("usage").create({"workspace": str, "tokens": int, "cost": float}, pk="workspace")
    db.table("meta").create({"key": str, "value": str}, pk="key")


@migrations()
def m002_secrets(db: Database) -> None:
    """Secrets stored by an operator, each for one host."""
    db.table("secrets").create({"name": str, "host": str, "value": str, "t": float}, pk="name")


@migrations()
def m003_prompt_position(db: Database) -> None:
    """An index on prompts' position: every accepted prompt reads the highest one."""
    db.table("prompts").create_index(["position"], if_not_exists=True)


@migrations()
def m004_consent_chain(db: Database) -> None:
    """Hash-chain the consent history (SPEC §8): each entry's previous hash, its own hash,
    and the digest of the grants it leaves; existing entries are hashed in order.

    The newest existing entry records the grants as they stand now: the chain
    begins trusting the store as it is at migration, and from then on a grant
    changed by hand is a finding.
    """
    from engine.store.history import GENESIS, entry_hash, grants_digest

    for column in ("prev", "hash", "grants"):
        db.execute(f"alter table consent add column {column} text")
    rows = db.execute("select seq from consent order by seq").fetchall()
    prev = GENESIS
    for i, (seq,) in enumerate(rows):
        row = db.execute("select * from consent where seq = ?", [seq]).fetchone()
        cols = [d[0] for d in db.execute("select * from consent limit 0").description]
        entry = dict(zip(cols, row))
        if i == len(rows) - 1:
            entry["grants"] = grants_digest(db)
        digest = entry_hash(prev, entry)
        db.execute("update consent set prev = ?, hash = ?, grants = ? where seq = ?",
                   [prev, digest, entry["grants"], seq])
        prev = digest


@migrations()
def m005_log_payload_digest(db: Database) -> None:
    """A refused call's row keeps 4 KiB of its payload, with the whole one's length and SHA-256."""
    db.execute("alter table log add column payload_bytes integer")
    db.execute("alter table log add column payload_sha256 text")


@migrations()
def m006_service_tokens(db: Database) -> None:
    """Bearer tokens of the HTTP service (SPEC §10.1): only their SHA-256 is kept."""
    db.table("service_tokens").create(
        {"id": str, "hash": str, "principal": str, "t": float, "revoked": float}, pk="id")
    db.table("service_tokens").create_index(["hash"], unique=True)


@migrations()
def m007_tool_calls(db: Database) -> None:
    """Agents' tool calls to cards (SPEC §9): open ones survive a restart."""
    db.table("tool_calls").create(
        {"id": str, "position": int, "workspace": str, "agent": str, "card": str,
         "package": str, "tool": str, "arrow": str, "args": str, "chain": str, "state": str,
         "t": float, "deadline": float, "result": str, "code": str, "reason": str,
         "message": str, "ended": float}, pk="id")
    db.table("tool_calls").create_index(["state"])
    db.table("tool_calls").create_index(["position"])
