"""PostgreSQL groundwork for the shared store (SPEC §10 "Storage").

The schema and its migrations (`schema`), exact rolling-window admission
across processes (`admission`), the log's chain-head lock (`chain`), and the
change feed with LISTEN/NOTIFY and catch-up reads (`changes`). Each takes a
psycopg connection; the PostgreSQL `Store` builds on them.
"""
