"""Errors of the canvas model.

The canvas is the lowest layer, so it has its own small tree; the engine
translates these into its `ConsentError` tree at its boundary::

    CanvasError            base, carries a stable ``code``
     ├── InvalidArrow      INVALID_ARROW: self, missing node, unknown port, wrong direction
     ├── InvalidNode       INVALID_NODE: unknown type, duplicate id, bad field
     └── InvalidSetting    INVALID_ARGUMENT: an unknown workspace setting or a bad value
"""

from __future__ import annotations

__all__ = ["CanvasError", "InvalidArrow", "InvalidNode", "InvalidSetting"]


class CanvasError(ValueError):
    """Base of every canvas error; ``code`` is stable and machine-readable."""

    code = "CANVAS_ERROR"

    def __init__(self, message: str, *, reason: str | None = None) -> None:
        super().__init__(message)
        #: A short machine-readable reason (``self-arrow``, ``missing-node``, ...).
        self.reason = reason

    @property
    def message(self) -> str:
        """The human-readable message."""
        return str(self.args[0])


class InvalidArrow(CanvasError):
    """An arrow that cannot exist on this canvas; nothing was changed."""

    code = "INVALID_ARROW"


class InvalidNode(CanvasError):
    """A node that cannot exist on this canvas; nothing was changed."""

    code = "INVALID_NODE"


class InvalidSetting(CanvasError):
    """A workspace setting that does not exist or a value it cannot take; nothing was changed.

    Not an ``InvalidNode``: settings belong to the workspace, and a caller told
    "the node cannot exist" about a setting looks for the wrong mistake.
    """

    code = "INVALID_ARGUMENT"
