"""The write verbs of the canvas: ``workspace add``, ``node add|set|remove`` and ``arrow
add|remove``."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from canvas import Canvas, CanvasError, Node, check_not_engine_kept
from engine.app.asking import Answer, Asking
from engine.app.writebackends import Backend
from engine.app.writefailure import OK, USAGE, Failure
from engine.app.writevalues import field_values, json_object
from engine.core.errors import InvalidNode

__all__ = ["register", "run"]


async def run(verb: str, args: argparse.Namespace, backend: Backend,
              ask: Asking) -> Answer:
    """Carry out a verb of the canvas: (exit code, JSON answer, text answer)."""
    if verb == "workspace add":
        body: dict[str, Any] = {"id": args.id, "folder": str(Path(args.folder).resolve())}
        if args.settings is not None:
            body["settings"] = json_object(args.settings, "--settings")
        out = await backend.add_workspace(body)
        return OK, out, f"workspace {args.id} added (folder {body['folder']})"
    if verb == "node add":
        fields = field_values(args.set)
        for given in ("id", "type"):
            if given in fields:  # never silently another node than the one named
                raise Failure(USAGE, f"node add: the {given} is the positional "
                                     f"{given.upper()}, not --set {given}=…")
        node = {"id": args.id, "type": args.type, **fields}
        _check_node(node, args.workspace)
        out = await backend.add_node(args.workspace, node)
        return OK, out, f"node {args.id} ({args.type}) added to {args.workspace}"
    if verb == "node set":
        fields = field_values(args.set)
        if not fields:
            raise Failure(USAGE, "node set: give at least one --set KEY=VALUE")
        _check_change(await backend.node(args.id), fields)
        out = await backend.set_node(args.id, fields)
        return OK, out, f"node {args.id} changed: " + ", ".join(f"{k}={json.dumps(v)}"
                                                          for k, v in fields.items())
    if verb == "node remove":
        await backend.remove_node(args.id)
        return OK, {"id": args.id, "removed": True}, f"node {args.id} removed"
    if verb == "arrow add":
        arrow: dict[str, Any] = {"id": args.id, "from": args.src, "to": args.dst}
        if (args.from_port is None) != (args.to_port is None):
            raise Failure(USAGE, "arrow add: --from-port and --to-port go together (a port "
                                 "arrow names both; a plain arrow neither)")
        if args.from_port is not None:
            arrow.update(from_port=args.from_port, to_port=args.to_port)
        out = await backend.add_arrow(args.workspace, arrow)
        return OK, out, f"arrow {args.id} added: {args.src} -> {args.dst}"
    if verb == "arrow remove":
        await backend.remove_arrow(args.id)
        return OK, {"id": args.id, "removed": True}, f"arrow {args.id} removed"
    raise Failure(USAGE, f"unknown verb {verb!r}")  # argparse's choices stop this first


def _check_node(node: dict[str, Any], workspace: str) -> None:
    """Judge a new node as the engine does (its type, its fields and their types, none the
    engine keeps), so a mistake is said alike through --db and --service: the service's
    own words are about its request body (``body.type``, ``body.nme``), which nobody here
    wrote.

    Raises:
        Failure: ``INVALID_NODE`` with the canvas's reason and words, as the engine's.
    """
    try:
        check_not_engine_kept(node["id"], node)
        Node.build(node, workspace)
    except CanvasError as exc:
        raise Failure.of(InvalidNode(exc.message, reason=exc.reason)) from exc


def _check_change(current: dict[str, Any], fields: dict[str, Any]) -> None:
    """Judge a change of the node ``current`` (its JSON form, as read) as the engine does
    (`canvas.Canvas.updated_node`: id and type kept, none of the fields the engine keeps,
    each field its type's), so a mistake is said alike through --db and --service: the
    service's own words are about its request body (``body.nme``, ``body.dangerous.bool``),
    which nobody here wrote, and need no node (a node that is not there was told so
    after them).

    Raises:
        Failure: ``INVALID_NODE`` with the canvas's reason and words, as the engine's.
    """
    data = {key: value for key, value in current.items() if key not in ("id", "type")}
    graph = Canvas()
    # As the store gives it, unjudged (`Canvas.restore_node`): a field an older version
    # stored is judged only when the change names it, as the engine does.
    graph.restore_node(Node(str(current["id"]), str(current["type"]), "", data))
    try:
        graph.updated_node(str(current["id"]), fields)
    except CanvasError as exc:
        raise Failure.of(InvalidNode(exc.message, reason=exc.reason)) from exc


def register(sub: Any, common: Callable[[argparse.ArgumentParser], None]) -> None:
    """Add ``workspace``, ``node`` and ``arrow`` to the command line; ``common`` adds each verb's shared options
    (``--db``, ``--service``, ``--token-file``, ``--json``) last."""
    workspace = sub.add_parser("workspace", help="create a workspace")
    acts = workspace.add_subparsers(dest="action", required=True, metavar="ACTION",
                                help="what to do; `--help` after it explains each")
    p = acts.add_parser("add", help="create a workspace with its project folder (operator)")
    p.add_argument("id", help="the new workspace's id")
    p.add_argument("folder", help="its project folder (made absolute)")
    p.add_argument("--settings", metavar="JSON",
                   help='settings as a JSON object, e.g. {"card_cap": 50}')
    common(p)
    node = sub.add_parser("node", help="add, change or remove a node on a canvas")
    acts = node.add_subparsers(dest="action", required=True, metavar="ACTION",
                                help="what to do; `--help` after it explains each")
    p = acts.add_parser("add", help="put a node on a workspace's canvas (operator)")
    p.add_argument("workspace", help="the workspace id")
    p.add_argument("id", help="the new node's id")
    p.add_argument("type", help="card, agent, terminal, note, todo, taskboard or sticky")
    p.add_argument("--set", action="append", metavar="KEY=VALUE",
                   help="a field, VALUE as JSON or a bare string (package=acme.standup, "
                        "dangerous=true); repeat for more")
    common(p)
    p = acts.add_parser("set", help="change fields of a node (operator)")
    p.add_argument("id", help="the node's id")
    p.add_argument("--set", action="append", metavar="KEY=VALUE", required=True,
                   help="a field to change, VALUE as JSON or a bare string; repeat for more")
    common(p)
    p = acts.add_parser("remove", help="remove a node and its arrows (cancels their prompts)")
    p.add_argument("id", help="the node's id")
    common(p)

    arrow = sub.add_parser("arrow", help="draw or remove an arrow")
    acts = arrow.add_subparsers(dest="action", required=True, metavar="ACTION",
                                help="what to do; `--help` after it explains each")
    p = acts.add_parser("add", help="draw an arrow between two nodes (operator)")
    p.add_argument("workspace", help="the workspace both nodes are in")
    p.add_argument("id", help="the new arrow's id")
    p.add_argument("src", metavar="FROM", help="the node it starts at")
    p.add_argument("dst", metavar="TO", help="the node it ends at")
    p.add_argument("--from-port", metavar="PORT",
                   help="a port arrow's output port (with --to-port)")
    p.add_argument("--to-port", metavar="PORT",
                   help="a port arrow's input port (with --from-port)")
    common(p)
    p = acts.add_parser("remove", help="remove an arrow (cancels prompts on it)")
    p.add_argument("id", help="the arrow's id")
    common(p)
