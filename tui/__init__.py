"""arrowgate's Textual TUI (canvas, arrow logs, holds, grants, the install review).

The engine and the canvas never import this package; the TUI imports them.
"""
