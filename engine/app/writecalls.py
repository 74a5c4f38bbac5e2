"""The ``call`` verb: a card's call, its Decision printed (exit 1 when refused)."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from engine.app.asking import Answer
from engine.app.common import with_reason
from engine.app.writebackends import Backend
from engine.app.writefailure import OK, REFUSED
from engine.app.writevalues import json_object

__all__ = ["register", "run", "said"]


async def run(args: argparse.Namespace, backend: Backend) -> Answer:
    """Make the call: (exit code, the Decision as JSON, its text)."""
    body = {"card": args.card, "call": args.call}
    if args.target is not None:
        body["target"] = args.target
    if args.args is not None:
        body["args"] = json_object(args.args, "--args")
    if args.context is not None:
        body["context"] = args.context
    decision = await backend.call(body)
    allowed = decision.get("outcome") in ("ok", "queued", "held")
    text = said(decision)
    if not allowed:
        text = with_reason(text, decision.get("reason"))
    return (OK if allowed else REFUSED), decision, text


def said(decision: dict[str, Any]) -> str:
    """A Decision as one line: its outcome, then its message without a first word that
    repeats it (the engine's message begins ``ok:`` or ``held:``, which after "queued:"
    or "held:" reads as two answers run together); a refusal's code stays."""
    outcome = str(decision.get("outcome"))
    message = str(decision.get("message") or "")
    for said_already in (f"{outcome}: ", "ok: "):
        message = message.removeprefix(said_already)
    return f"{outcome}: {message}" if message else outcome


def register(sub: Any, common: Callable[[argparse.ArgumentParser], None]) -> None:
    """Add ``call`` to the command line; ``common`` adds each verb's shared options
    (``--db``, ``--service``, ``--token-file``, ``--json``) last."""
    p = sub.add_parser("call", help="make a card's call; prints the Decision (exit 1 if refused)")
    p.add_argument("card", help="the calling card's id")
    p.add_argument("call", help="the call, e.g. agents.prompt")
    p.add_argument("target", nargs="?", help="the node it reaches, if any")
    p.add_argument("--args", metavar="JSON", help='the arguments, a JSON object: {"text": "hi"}')
    p.add_argument("--context", metavar="ID", help="the tool call this call runs in")
    common(p)
