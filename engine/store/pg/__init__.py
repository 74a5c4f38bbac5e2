"""The shared store on PostgreSQL (SPEC §10 "Storage").

The `Store` on PostgreSQL (`store`), its write batches under one store-wide
lock (`batches`, `locks`), the schema and its migrations (`schema`), and the
change feed with LISTEN/NOTIFY and catch-up reads (`changes`).
"""
