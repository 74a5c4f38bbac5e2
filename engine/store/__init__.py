"""The store: the only place with SQL.

The schema and its one migration chain, group commit and savepoints,
catching up with other processes, the arrow log with its anchor, the consent
history and the secret vault.
"""
