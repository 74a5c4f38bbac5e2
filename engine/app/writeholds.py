"""The hold verbs: ``hold list``, ``hold approve`` (by the digest of the text shown) and
``hold reject``."""

from __future__ import annotations

import argparse
import string
from collections.abc import Callable
from typing import Any

from engine.app.asking import Answer, Asking
from engine.app.common import with_reason
from engine.app.writebackends import Backend, Reader
from engine.app.writefailure import OK, REFUSED, USAGE, Failure
from engine.app.writetext import inert, text_sha256
from engine.core.text import clipped, visible

__all__ = ["read", "register", "run"]


async def run(verb: str, args: argparse.Namespace, backend: Backend,
              ask: Asking) -> Answer:
    """Carry out ``hold approve`` or ``hold reject``: (exit code, JSON answer, text answer)."""
    if verb == "hold approve":
        digest = args.sha256
        if digest is None:
            hold = next((h for h in await backend.holds() if h.get("id") == args.id), None)
            if hold is None:
                raise Failure.coded(USAGE, "NOT_FOUND", f"no held prompt {args.id}")
            text = str(hold.get("text", ""))
            ask.show(f"held prompt {args.id}: card {hold.get('card')} ({hold.get('package')})"
                     f" -> agent {hold.get('agent')} on arrow {hold.get('arrow')}")
            ask.show("----- the whole text -----")
            ask.show(inert(text))
            ask.show("----- end -----")
            ask.confirm(f"approve prompt {args.id}?")
            # The digest of the text shown here, not one the service reports.
            digest = text_sha256(text)
        decision = await backend.approve_hold(args.id, digest)
        allowed = decision.get("outcome") in ("ok", "queued", "held")
        # A re-check at approval (SPEC §7) or a full queue cancels the prompt: said as
        # such, never as an approval that went through.
        if allowed:
            # The engine's message names the prompt again ("prompt p2: delivered"):
            # what happened to it is said once, after the approval's outcome.
            happened = str(decision.get("message") or "").removeprefix(f"prompt {args.id}: ")
            return OK, decision, f"prompt {args.id} approved: {decision.get('outcome')}" + (
                f" ({happened})" if happened else "")
        state = (decision.get("value") or {}).get("state", "cancelled")
        text = f"prompt {args.id}: {state} at its approval — {decision.get('message', '')}"
        return REFUSED, decision, with_reason(text.rstrip(), decision.get("reason"))
    if verb == "hold reject":
        decision = await backend.reject_hold(args.id)
        return OK, decision, f"prompt {args.id} rejected"
    raise Failure(USAGE, f"unknown verb {verb!r}")  # argparse's choices stop this first


async def read(reader: Reader) -> Answer:
    """``hold list``, which only reads: (exit code, JSON answer, text answer)."""
    holds = await reader.holds()
    blocks = [f"{h['id']}  card {h.get('card')} ({h.get('package')}) -> agent "
              f"{h.get('agent')} on arrow {h.get('arrow')}\n  sha256 {h.get('text_sha256')}"
              f"\n  " + inert(str(h.get("text", ""))).replace("\n", "\n  ")
              for h in holds]
    return OK, holds, "\n".join(blocks) or "no held prompts"


def _whole_sha256(value: str) -> str:
    """An argparse ``type`` for ``--sha256``: the whole hex SHA-256 `hold list` shows, in
    either case. A prefix (copied as a commit's) or any other text is no digest of the
    text shown: a usage error saying so, never an approval refused as ``stale``."""
    if len(value) == 64 and all(c in string.hexdigits for c in value):
        return value.lower()
    raise argparse.ArgumentTypeError(
        f"{clipped(visible(value), 80)!r} is not a SHA-256: give its 64 hex digits, as `arrowgate hold "
        "list` shows them (the whole digest, not its start)")


def register(sub: Any, common: Callable[[argparse.ArgumentParser], None]) -> None:
    """Add ``hold`` to the command line; ``common`` adds each verb's shared options
    (``--db``, ``--service``, ``--token-file``, ``--json``) last."""
    hold = sub.add_parser("hold", help="list, approve or reject held prompts")
    acts = hold.add_subparsers(dest="action", required=True, metavar="ACTION",
                                help="what to do; `--help` after it explains each")
    p = acts.add_parser("list", help="held prompts with their whole text and its SHA-256")
    common(p)
    p = acts.add_parser("approve", help="show the whole text and approve it by its SHA-256 "
                                        "(operator)")
    p.add_argument("id", help="the held prompt's id")
    p.add_argument("--sha256", metavar="HEX", type=_whole_sha256,
                   help="the SHA-256 of the text you saw, its 64 hex digits (`hold list`); "
                        "then nothing is asked")
    common(p)
    p = acts.add_parser("reject", help="reject a held prompt")
    p.add_argument("id", help="the held prompt's id")
    common(p)
