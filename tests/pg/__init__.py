"""PostgreSQL groundwork: the throwaway server, the schema, locks and the change feed."""
