"""arrowgate's consent engine: grants, decisions, limits, holds, the arrow log.

This package never imports textual, rich or the TUI.
"""

from __future__ import annotations

from engine.core.catalogue import CALLS, PERMISSIONS, Permission
from engine.core.decision import CallDenied, Decision
from engine.core.errors import (
    ApprovalRefused,
    CardLimit,
    CardUnknown,
    CaseInvalid,
    ConsentError,
    EngineClosed,
    InvalidArgument,
    InvalidArrow,
    InvalidNode,
    InvalidRequest,
    ManifestInvalid,
    NotFound,
    PackageNotInstalled,
    PackagePending,
    RequestRefused,
    StoreFailed,
)
from engine.core.manifest import Manifest, content_hash, file_digests, parse_manifest
from engine.core.principal import Principal
from engine.core.prompts import Prompt
from engine.core.review import Diff, Review
from engine.effects.packages import load_package_folder
from engine.effects.world import World
from engine.engine import Engine, Event, Update
from engine.store.log import Verification

__all__ = [
    "ApprovalRefused",
    "CALLS",
    "CallDenied",
    "CardLimit",
    "CardUnknown",
    "CaseInvalid",
    "ConsentError",
    "Decision",
    "Diff",
    "Engine",
    "EngineClosed",
    "Event",
    "InvalidArgument",
    "InvalidArrow",
    "InvalidNode",
    "InvalidRequest",
    "Manifest",
    "ManifestInvalid",
    "NotFound",
    "PERMISSIONS",
    "PackageNotInstalled",
    "PackagePending",
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
    "load_package_folder",
    "parse_manifest",
]
