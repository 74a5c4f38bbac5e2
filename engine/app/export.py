"""The stable JSON Lines export of the arrow log (``arrowgate log export --jsonl``).

One decision per line, in the style of OPA's decision logs. Schema version 1;
fields are only ever added, never renamed or removed:

====================  ==========================================================
``schema``            ``"arrowgate.decision/1"``
``decision_id``       ``"<seq>-<first 16 hex of the row hash>"``
``seq``               the row's sequence number in the log (1, 2, …)
``timestamp``         seconds (the engine's clock), as a number
``workspace``         workspace id, or null
``input``             ``{"card", "package", "version", "call", "target",
                      "arrow", "payload", "chain", "payload_bytes",
                      "payload_sha256"}`` — what was asked, on which arrow; the
                      last two (null unless set) are the full UTF-8 length and
                      SHA-256 of a refused call's payload when the row keeps only
                      its first 4 KiB (SPEC §8 "Bounds")
``result``            ``{"outcome", "code", "reason", "approver", "prompt"}`` — what
                      was decided (``outcome``: ok, queued, held, denied,
                      rate-limited, approved, rejected, expired, cancelled,
                      suppressed)
``chain``             ``{"prev", "hash"}`` — the hash chain, for independent checks
====================  ==========================================================

The JSON Schema of a record is ``schemas/decision-record.json``. Anyone can check
an export without arrowgate: the README's "Verifying an exported log" gives the
canonical JSON of a row and the hash inputs (``chain.hash`` is the SHA-256 of
``chain.prev``, a newline and the row's 16 fields as canonical JSON, with
``payload_bytes`` and ``payload_sha256`` appended when either is set).
"""

from __future__ import annotations

from typing import Any

__all__ = ["SCHEMA", "decision_record"]

SCHEMA = "arrowgate.decision/1"


def decision_record(row: dict[str, Any]) -> dict[str, Any]:
    """One log row as a decision record of the export schema."""
    return {
        "schema": SCHEMA,
        "decision_id": f"{row['seq']}-{row['hash'][:16]}",
        "seq": row["seq"],
        "timestamp": row["t"],
        "workspace": row["workspace"],
        "input": {k: row.get(k) for k in ("card", "package", "version", "call", "target", "arrow",
                                       "payload", "chain", "payload_bytes",
                                       "payload_sha256")},
        "result": {k: row[k] for k in ("outcome", "code", "reason", "approver", "prompt")},
        "chain": {"prev": row["prev"], "hash": row["hash"]},
    }
