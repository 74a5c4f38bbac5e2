"""The ``arrowgate`` command line (SPEC §10)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .errors import ConsentError

__all__ = ["db_path", "default_db_path", "main"]


def default_db_path() -> Path:
    """The embedded default database: ``$ARROWGATE_DB`` or ``~/.local/share/arrowgate``."""
    env = os.environ.get("ARROWGATE_DB")
    if env:
        return Path(env)
    base = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    return base / "arrowgate" / "arrowgate.db"


def db_path(args: argparse.Namespace, *, create: bool = False) -> Path:
    """The database a command works on: ``--db``, or the embedded default.

    Raises:
        SystemExit: the file does not exist and the command does not create it.
    """
    path = Path(args.db) if getattr(args, "db", None) else default_db_path()
    if not create and not path.exists():
        raise SystemExit(f"arrowgate: no database at {path}")
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def _read_manifest(path: str) -> tuple[dict[str, Any], dict[str, str]]:
    from .manifest import file_digests, load_package_folder, loads_manifest

    p = Path(path)
    if p.is_dir():
        return load_package_folder(p)
    try:
        text = p.read_text()
        raw = loads_manifest(text)  # too deep: MANIFEST_INVALID, never RecursionError
    except (OSError, ValueError) as exc:
        raise SystemExit(f"arrowgate: cannot read manifest {path}: {exc}") from exc
    return raw, file_digests({"manifest.json": text})


def _cmd_replay(args: argparse.Namespace) -> int:
    from .replay import run_files

    return run_files(args.cases, as_json=args.json, store=args.store)


def _cmd_review(args: argparse.Namespace) -> int:
    from .manifest import content_hash, parse_manifest
    from .review import install_review

    raw, digests = _read_manifest(args.manifest)
    manifest = parse_manifest(raw)
    review = install_review(manifest, content_hash(digests))
    print(json.dumps(review.to_json(), indent=2) if args.json else review.text)
    return 0


def _cmd_diff(args: argparse.Namespace) -> int:
    from .manifest import parse_manifest
    from .review import diff_manifests

    old = parse_manifest(_read_manifest(args.old)[0])
    new = parse_manifest(_read_manifest(args.new)[0])
    diff = diff_manifests(old, new)
    if args.json:
        print(json.dumps(diff.to_json()))
    else:
        print("\n".join(diff.lines) or "no change in declarations")
    return 0


def _cmd_log(args: argparse.Namespace) -> int:
    from canvas import open_database

    from .log import ArrowLog
    from .migrations import migrations

    path = db_path(args)
    db = open_database(path)
    migrations.apply(db)
    log = ArrowLog(db)
    if args.action == "verify":
        from .logindex import verify_path

        result = verify_path(path)
        if result.ok:
            print(f"log verify: ok: {result.rows} rows")
        elif result.first_bad is None:  # the anchor, or the consent history and grants
            print(f"log verify: FAILED: {result.problem}")
        else:
            print(f"log verify: FAILED: {result.rows} rows; first bad row {result.first_bad}: "
                  f"{result.problem}")
        return 0 if result.ok else 1
    rows = log.rows(arrow=args.arrow, card=args.card, package=args.package,
                    outcome=args.outcome, since=args.since, until=args.until)
    if args.action == "export":
        from .export import decision_record

        for row in rows:
            print(json.dumps(decision_record(row), sort_keys=True, separators=(",", ":")))
        return 0
    for row in rows:
        if args.json:
            print(json.dumps({k: v for k, v in row.items()}, default=str))
        else:
            print(f"{row['seq']:>6} {row['t']:>12.3f} {row['arrow'] or '-':<8} "
                  f"{row['card'] or '-':<8} {row['call']:<20} {row['target'] or '-':<8} "
                  f"{row['outcome']:<12} {row['code'] or ''} {row['reason'] or ''} "
                  f"{(row['payload'] or '')[:60]!r}")
    return 0


def _open_engine(args: argparse.Namespace, *, create: bool = False) -> Any:
    from .engine import Engine

    return Engine.open(db_path(args, create=create))


def _cmd_reach(args: argparse.Namespace) -> int:
    from .reach import analyse

    engine = _open_engine(args)
    try:
        try:
            reach = analyse(engine.state, args.card)
        except KeyError:
            raise SystemExit(f"arrowgate: no custom card {args.card!r} on any canvas") from None
        print(json.dumps(reach.to_json(), indent=2) if args.json else "\n".join(reach.lines()))
        return 0
    finally:
        engine.close()


def _cmd_import(args: argparse.Namespace) -> int:
    import asyncio

    from .operator import operator_check

    check = operator_check()
    if not check.ok:
        # Importing draws arrows, which is consent: only a person at a terminal.
        raise SystemExit(f"arrowgate: import refused: {check.reason}")
    try:
        doc = json.loads(Path(args.file).read_text())
    except (OSError, ValueError) as exc:
        raise SystemExit(f"arrowgate: cannot read {args.file}: {exc}") from exc
    workspace = args.workspace or Path(args.file).stem
    folder = Path(args.folder or Path(args.file).parent).resolve()
    engine = _open_engine(args, create=True)

    async def run() -> Any:
        return await engine.import_canvas(workspace, folder, doc)

    try:
        review = asyncio.run(run())
        nodes = engine.state.canvas.nodes(workspace)
        print(f"imported {args.file} as workspace {workspace!r} ({folder}): "
              f"{len(nodes)} nodes, {len(engine.state.canvas.arrows(workspace))} arrows")
        print("\n".join(review.lines))  # what it holds and what it left out
        return 0
    finally:
        engine.close()


def _cmd_export(args: argparse.Namespace) -> int:
    engine = _open_engine(args)
    try:
        workspace = args.workspace
        if workspace is None:
            if len(engine.state.workspaces) != 1:
                names = ", ".join(sorted(engine.state.workspaces)) or "none"
                raise SystemExit(f"arrowgate: name a workspace with --workspace (there are: "
                                 f"{names})")
            workspace = next(iter(engine.state.workspaces))
        text = json.dumps(engine.export_canvas(workspace), indent="\t")
        if args.output:
            Path(args.output).write_text(text + "\n")
        else:
            print(text)
        return 0
    finally:
        engine.close()


def _cmd_demo(args: argparse.Namespace) -> int:
    import asyncio

    from .demo import play_demo

    engine = _open_engine(args, create=True)
    folder = Path(args.folder) if args.folder else default_db_path().parent / "demo-project"

    async def run() -> int:
        try:
            await play_demo(engine, folder, print)
            if args.no_tui:
                print("")
                print("Next: `arrowgate tui --demo` to inspect the arrow logs and answer the "
                      "held prompt.")
                return 0
            launch = _plugin("apps", "tui")
            if launch is None:
                print("arrowgate: the TUI is not installed; ran the demo only", file=sys.stderr)
                return 0
            if sys.stdin.isatty():
                # Let the narrative be read before the TUI takes the screen.
                await asyncio.to_thread(input, "\nPress Enter to open the TUI "
                                               "(holds screen: a approves, r rejects) ")
            return int(await launch(engine))
        finally:
            await engine.world.aclose()

    try:
        return asyncio.run(run())
    finally:
        engine.close()


def _plugin(group: str, name: str) -> Any:
    """An entry point of group ``arrowgate.<group>``: how the TUI plugs in headlessly."""
    from importlib.metadata import entry_points

    for ep in entry_points(group=f"arrowgate.{group}"):
        if ep.name == name:
            return ep.load()
    return None


def _cmd_docs(args: argparse.Namespace) -> int:
    from .docs import permission_reference

    print(permission_reference(), end="")
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every subcommand."""
    parser = argparse.ArgumentParser(prog="arrowgate",
                                     description="A graph-aware arrow consent engine.")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("replay", help="play conformance cases")
    p.add_argument("cases", nargs="+")
    p.add_argument("--json", action="store_true", help="one JSON object per step")
    p.add_argument("--store", metavar="URL",
                   help="play every case on another store (PostgreSQL: not supported yet)")
    p.set_defaults(fn=_cmd_replay)
    p = sub.add_parser("review", help="the install review of a manifest or package folder")
    p.add_argument("manifest")
    p.add_argument("--json", action="store_true")
    p.set_defaults(fn=_cmd_review)
    p = sub.add_parser("diff", help="widening and narrowing between two manifests")
    p.add_argument("old")
    p.add_argument("new")
    p.add_argument("--json", action="store_true")
    p.set_defaults(fn=_cmd_diff)
    p = sub.add_parser("log", help="show, export (--jsonl) or verify the arrow log")
    p.add_argument("action", choices=["show", "export", "verify"])
    p.add_argument("--db")
    for name in ("arrow", "card", "package", "outcome"):
        p.add_argument(f"--{name}")
    p.add_argument("--since", type=float)
    p.add_argument("--until", type=float)
    p.add_argument("--json", action="store_true")
    p.add_argument("--jsonl", action="store_true", help="export: one decision per line (default)")
    p.set_defaults(fn=_cmd_log)
    p = sub.add_parser("docs", help="generated documentation")
    p.add_argument("topic", choices=["permissions"])
    p.set_defaults(fn=_cmd_docs)
    p = sub.add_parser("demo", help="build the demo canvas and play a narrated run")
    p.add_argument("--db", help="database file (default: the embedded default)")
    p.add_argument("--folder", help="the demo project folder")
    p.add_argument("--no-tui", action="store_true", help="print the narrative and exit")
    p.set_defaults(fn=_cmd_demo)
    p = sub.add_parser("reach", help="what a card can cause, directly and transitively")
    p.add_argument("card")
    p.add_argument("--db")
    p.add_argument("--json", action="store_true")
    p.set_defaults(fn=_cmd_reach)
    p = sub.add_parser("import", help="import a JSON Canvas 1.0 file as a new workspace")
    p.add_argument("file")
    p.add_argument("--db")
    p.add_argument("--workspace", help="workspace id (default: the file's name)")
    p.add_argument("--folder", help="project folder (default: the file's folder)")
    p.set_defaults(fn=_cmd_import)
    p = sub.add_parser("export", help="export a workspace as JSON Canvas 1.0")
    p.add_argument("--db")
    p.add_argument("--workspace")
    p.add_argument("-o", "--output", help="file to write (default: standard output)")
    p.set_defaults(fn=_cmd_export)
    from .service import register as register_serve

    register_serve(sub)  # `arrowgate serve`: the HTTP service (SPEC §10.1)
    from .mcpserver import register as register_mcp

    register_mcp(sub)  # `arrowgate mcp`: card tools for an agent over MCP (SPEC §10.2)
    register = _plugin("cli", "tui")
    if register is not None:
        register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code."""
    args = build_parser().parse_args(argv)
    try:
        return int(args.fn(args))
    except ConsentError as exc:
        print(f"arrowgate: {exc.message}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
