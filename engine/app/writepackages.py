"""The package verbs: ``package offer|review|install|grant|revoke|approve|decline``."""

from __future__ import annotations

import argparse
import difflib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from engine.app.asking import Answer, Asking
from engine.app.writebackends import Backend, Reader
from engine.app.writefailure import OK, REFUSED, USAGE, Failure

__all__ = ["read", "register", "run"]


async def run(verb: str, args: argparse.Namespace, backend: Backend,
              ask: Asking) -> Answer:
    """Carry out a package verb that may change consent: (exit code, JSON answer, text answer)."""
    if verb == "package offer":
        folder = Path(args.folder)
        if not (folder / "manifest.json").is_file():
            raise Failure(USAGE, _not_a_package_folder(folder))
        out = await backend.offer(folder)
        note = {"pending": " (an update: approve it with `package approve`)",
                "installed": " (the version installed: nothing to approve)"}.get(
                    str(out.get("state")), "")
        return OK, out, f"offered {out.get('package')} ({out.get('hash')}){note}"
    if verb == "package install":
        grant: str | list[str] = args.grant if args.grant in ("required", "all") else \
            [g.strip() for g in args.grant.split(",") if g.strip()]
        review = await backend.review(args.name)
        if isinstance(grant, list):
            _require_declared(review, args.name, grant)
        digest = args.review_hash
        if digest is None:
            ask.show(_review_text(review))
            ask.show(f"review hash: {review.get('hash')}")
            ask.confirm(f"install {args.name}, granting {args.grant}?")
            digest = str(review.get("hash"))
        out = await backend.install(args.name, grant, digest)
        return OK, out, f"installed {args.name} ({digest})"
    if verb == "package grant":
        digest = args.review_hash
        if digest is None:
            review = await backend.review(args.name)
            _require_declared(review, args.name, [args.permission])
            ask.show(_grant_text(review, args.name, args.permission))
            ask.confirm(f"grant {args.permission} to {args.name}?")
            digest = str(review.get("hash"))
        granted = await backend.grant(args.name, args.permission, digest)
        # ``granted`` is a list, as install's and the service's grant answer's are: every
        # permission the package holds now; the one this grant gave is ``permission``.
        return OK, {"package": args.name, "permission": args.permission, "granted": granted}, \
            f"{args.name}: granted {args.permission}"
    if verb == "package revoke":
        if not await backend.revoke(args.name, args.permission):
            # The state asked for holds, but what the person believed (granted) did
            # not: a finding, as a diff that widens is, told on standard output.
            return REFUSED, {"package": args.name, "not_granted": args.permission}, \
                f"{args.name}: {args.permission} was not granted; nothing changed"
        return OK, {"package": args.name, "revoked": args.permission}, \
            f"{args.name}: revoked {args.permission}"
    if verb == "package approve":
        digest = args.review_hash or await _pending_seen(backend, args.name, "approve", ask)
        out = await backend.approve(args.name, digest)
        return OK, out, f"approved {args.name} ({digest})"
    if verb == "package decline":
        digest = args.pending_hash or await _pending_seen(backend, args.name, "decline", ask)
        out = await backend.decline(args.name, digest)
        return OK, out, f"declined the update of {args.name}; {out.get('hash')} holds again"
    raise Failure(USAGE, f"unknown verb {verb!r}")  # argparse's choices stop this first


async def read(args: argparse.Namespace, reader: Reader) -> Answer:
    """``package review``, which only reads: (exit code, JSON answer, text answer)."""
    review = await reader.review(args.name)
    return OK, review, _review_text(review) + f"\nreview hash: {review.get('hash')}"


def _not_a_package_folder(path: Path) -> str:
    """What ``path``, given as a package folder, is instead, and what to give."""
    if path.name == "manifest.json" and path.is_file():
        return (f"{path} is the manifest; give its folder, {path.parent} (a package is "
                "offered with all its files)")
    if not path.exists():
        return f"no folder {path}: give the package's folder, the one holding its manifest.json"
    if not path.is_dir():
        return f"{path} is no folder: give the package's folder, holding its manifest.json"
    return f"{path} holds no manifest.json: a package folder holds one, with its other files"


def _review_text(review: dict[str, Any]) -> str:
    if isinstance(review.get("text"), str):
        return str(review["text"])
    if isinstance(review.get("lines"), list):
        return "\n".join(str(line) for line in review["lines"])
    return json.dumps(review, indent=2)


def _require_declared(review: dict[str, Any], name: str, permissions: list[str]) -> None:
    """Refuse, before a person is asked, a grant no yes could give: a name no permission
    has (a typo: invalid input, naming the permission meant), or a permission the
    version reviewed does not declare (refused, as the engine refuses it).

    Raises:
        InvalidArgument: reason ``permission``.
        ApprovalRefused: reason ``undeclared``.
    """
    from engine.core.catalogue import PERMISSIONS
    from engine.core.errors import ApprovalRefused, InvalidArgument

    declared = {str(p) for kind in ("high", "medium", "low", "optional")
                for p in review.get(kind) or ()}
    for permission in permissions:
        if permission not in PERMISSIONS:
            near = difflib.get_close_matches(permission, PERMISSIONS, n=1)
            hint = f" (did you mean {near[0]}?)" if near else \
                " (`arrowgate docs permissions` lists them)"
            raise InvalidArgument(f"no permission {permission!r}{hint}", reason="permission",
                                  permission=permission, package=name)
        if permission not in declared:
            raise ApprovalRefused(f"{name} does not declare {permission}: undeclared",
                                  reason="undeclared", permission=permission, package=name)


def _grant_text(review: dict[str, Any], name: str, permission: str) -> str:
    """What a person grants: the version installed, its hash, and the permission as that
    version declares it (its line of the review: risk, hosts, what users see)."""
    lines = _review_text(review).splitlines()
    said = [line for line in lines if line.startswith(f"  {permission} (")]
    return "\n".join([f"{name} {review.get('version')} ({review.get('hash')})",
                      *(said or [f"  {permission}: not declared by this version"])])



async def _pending_seen(backend: Backend, name: str, what: str, ask: Asking) -> str:
    """Show the person ``name``'s pending version (its hash and diff), ask whether to
    ``what`` it, and return the hash they saw: the one the answer is bound to."""
    pending = await backend.pending(name)
    lines = pending.get("lines")
    ask.show(f"{name}: new version {pending.get('pending_hash')}")
    ask.show("\n".join(str(x) for x in lines) if isinstance(lines, list) and lines
             else "no change in declarations (files changed)")
    ask.confirm(f"{what} this version of {name}?")
    return str(pending.get("pending_hash"))


def register(sub: Any, common: Callable[[argparse.ArgumentParser], None]) -> None:
    """Add ``package`` to the command line; ``common`` adds each verb's shared options
    (``--db``, ``--service``, ``--token-file``, ``--json``) last."""
    package = sub.add_parser("package", help="offer, review, install, grant, revoke, approve, "
                                              "decline")
    acts = package.add_subparsers(dest="action", required=True, metavar="ACTION",
                                help="what to do; `--help` after it explains each")
    p = acts.add_parser("offer", help="offer the package in a folder with a manifest.json")
    p.add_argument("folder", help="the package folder")
    common(p)
    p = acts.add_parser("review", help="show an offered package's install review and its hash")
    p.add_argument("name", help="the package name")
    common(p)
    p = acts.add_parser("install", help="show the review and install (operator)")
    p.add_argument("name", help="the package name")
    p.add_argument("--grant", default="required",
                   help="required (default), all, or a comma-separated list of permissions "
                        "holding every required one")
    p.add_argument("--review-hash", metavar="SHA256",
                   help="the hash of the review you saw (`package review`); then nothing is "
                        "asked, and another hash is refused as stale")
    common(p)
    for action, what in (("grant", "show a declared permission and grant it (operator)"),
                         ("revoke", "revoke a permission (exit 1 when it was not granted: "
                                    "nothing changes)")):
        p = acts.add_parser(action, help=what, description=what[0].upper() + what[1:] + ".")
        p.add_argument("name", help="the package name")
        p.add_argument("permission", help="the permission, e.g. clipboard.write")
        if action == "grant":
            p.add_argument("--review-hash", metavar="SHA256",
                           help="the hash of the version you saw (`package review`); then "
                                "nothing is asked, and another version is refused as stale")
        common(p)
    p = acts.add_parser("approve", help="show the pending version's diff and approve it "
                                        "(operator)")
    p.add_argument("name", help="the package name")
    p.add_argument("--review-hash", metavar="SHA256",
                   help="the pending version's hash you reviewed; then nothing is asked, "
                        "and another version pending now is refused as stale")
    common(p)
    p = acts.add_parser("decline", help="show the pending version's diff and discard it: the "
                                        "approved one holds again (operator)")
    p.add_argument("name", help="the package name")
    p.add_argument("--pending-hash", metavar="SHA256",
                   help="the pending version's hash you looked at; then nothing is asked, and "
                        "another version pending now is refused as stale")
    common(p)
