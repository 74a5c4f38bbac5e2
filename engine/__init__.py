"""arrowgate's consent engine: grants, decisions, limits, holds, the arrow log.

This package never imports textual, rich or the TUI.
"""

from __future__ import annotations

from .catalogue import CALLS, PERMISSIONS, Permission
from .decision import Decision
from .engine import Engine, Event, Update
from .errors import (
    ApprovalRefused,
    CallDenied,
    CaseInvalid,
    ConsentError,
    InvalidRequest,
    ManifestInvalid,
    RequestRefused,
    StoreFailed,
)
from .log import Verification
from .manifest import Manifest, content_hash, file_digests, parse_manifest
from .principal import Principal
from .prompts import Prompt
from .review import Diff, Review
from .world import World

__all__ = [
    "ApprovalRefused",
    "CALLS",
    "CallDenied",
    "CaseInvalid",
    "ConsentError",
    "Decision",
    "Diff",
    "Engine",
    "Event",
    "InvalidRequest",
    "Manifest",
    "ManifestInvalid",
    "PERMISSIONS",
    "Permission",
    "Principal",
    "Prompt",
    "RequestRefused",
    "Review",
    "StoreFailed",
    "Update",
    "Verification",
    "World",
    "content_hash",
    "file_digests",
    "parse_manifest",
]
