"""Reading stored prompts by id and as listings, for both stores' readers.

Memory keeps only the prompts in play and the newest finished ones
(`engine.core.prompt_memory`); every other prompt is read here when asked
for. The statements use ``?`` placeholders (the PostgreSQL reader,
`engine.store.pg.parts.Reader`, translates them).
"""

from __future__ import annotations

from typing import Any

from engine.core.prompts import IN_PLAY

__all__ = ["BY_ID", "IN_PLAY_SQL", "listing"]

#: The prompts in play (`engine.core.prompts.IN_PLAY`), as the partial index on
#: them says it (SQLite m019, PostgreSQL m007): a query says it so to use it.
IN_PLAY_SQL = "(state = 'delivered' or state = 'held' or state = 'queued')"
if IN_PLAY_SQL != f"({' or '.join(f'state = {s!r}' for s in sorted(IN_PLAY))})":
    raise ImportError("engine.store.promptrows.IN_PLAY_SQL does not name the states in play")

#: One prompt's row by id (the primary key).
BY_ID = "select * from prompts where id = ?"


def listing(state: str | None, arrow: str | None,
            newest: int | None = None) -> tuple[str, list[Any]]:
    """The statement and parameters of the prompts in ``state`` on ``arrow`` (None:
    any), in order of arrival (the index on position); only the ``newest`` of them
    when given: read newest first with a limit, so the history's length costs
    nothing, then put back in order of arrival."""
    where: list[str] = []
    params: list[Any] = []
    if state is not None:
        where.append("state = ?")
        params.append(state)
    if arrow is not None:
        where.append("arrow = ?")
        params.append(arrow)
    clause = f" where {' and '.join(where)}" if where else ""
    if newest is None:
        return f"select * from prompts{clause} order by position", params
    return (f"select * from (select * from prompts{clause} order by position desc limit ?)"
            f" as newest order by position", [*params, newest])
