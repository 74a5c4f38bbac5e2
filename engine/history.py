"""The consent history (SPEC §8): who changed consent, or tried to, and when."""

from __future__ import annotations

import json
from typing import Any

from sqlite_utils import Database

__all__ = ["ConsentHistory"]


class ConsentHistory:
    """Appends and reads rows of the ``consent`` table."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def record(
        self,
        t: float,
        principal: str,
        action: str,
        subject: dict[str, Any],
        *,
        accepted: bool,
        code: str | None = None,
        reason: str | None = None,
        detail: str = "",
    ) -> None:
        """Append one entry (inside the caller's write transaction)."""
        self.db.execute(
            "insert into consent (t, principal, action, subject, accepted, code, reason, detail)"
            " values (?, ?, ?, ?, ?, ?, ?, ?)",
            [t, principal, action, json.dumps(subject, sort_keys=True), int(accepted), code,
             reason, detail],
        )

    def entries(self, *, package: str | None = None) -> list[dict[str, Any]]:
        """Entries oldest first, optionally those about one package."""
        out = []
        for row in self.db.query("select * from consent order by seq"):
            row = dict(row)
            row["subject"] = json.loads(row["subject"])
            row["accepted"] = bool(row["accepted"])
            if package is None or row["subject"].get("package") == package:
                out.append(row)
        return out
