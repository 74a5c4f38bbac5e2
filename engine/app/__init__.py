"""Interfaces apart from the engine: the command line, the replay, the demo
narrative, reach analysis, docs, schemas and export."""
