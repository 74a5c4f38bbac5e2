"""arrowgate's consent engine: grants, decisions, limits, holds, the arrow log.

This package never imports textual, rich or the TUI.

Its names are imported when first asked for (PEP 562), not with the package: a
module of ``engine`` (the command line's entry point, `engine.app.entry`) can then be
imported without the whole engine, which takes a good part of a second.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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

#: Where each public name is defined.
_WHERE = {
    "ApprovalRefused": "engine.core.errors",
    "CALLS": "engine.core.catalogue",
    "CallDenied": "engine.core.decision",
    "CardLimit": "engine.core.errors",
    "CardUnknown": "engine.core.errors",
    "CaseInvalid": "engine.core.errors",
    "ConsentError": "engine.core.errors",
    "Decision": "engine.core.decision",
    "Diff": "engine.core.review",
    "Engine": "engine.engine",
    "EngineClosed": "engine.core.errors",
    "Event": "engine.engine",
    "InvalidArgument": "engine.core.errors",
    "InvalidArrow": "engine.core.errors",
    "InvalidNode": "engine.core.errors",
    "InvalidRequest": "engine.core.errors",
    "Manifest": "engine.core.manifest",
    "ManifestInvalid": "engine.core.errors",
    "NotFound": "engine.core.errors",
    "PERMISSIONS": "engine.core.catalogue",
    "PackageNotInstalled": "engine.core.errors",
    "PackagePending": "engine.core.errors",
    "Permission": "engine.core.catalogue",
    "Principal": "engine.core.principal",
    "Prompt": "engine.core.prompts",
    "RequestRefused": "engine.core.errors",
    "Review": "engine.core.review",
    "StoreFailed": "engine.core.errors",
    "Update": "engine.engine",
    "Verification": "engine.store.log",
    "World": "engine.effects.world",
    "content_hash": "engine.core.manifest",
    "file_digests": "engine.core.manifest",
    "load_package_folder": "engine.effects.packages",
    "parse_manifest": "engine.core.manifest",
}


def __getattr__(name: str) -> Any:
    """A public name, imported from its module the first time it is asked for."""
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'engine' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # asked once
    return value


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
