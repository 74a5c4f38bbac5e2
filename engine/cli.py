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

__all__ = ["default_db_path", "main"]


def default_db_path() -> Path:
    """The embedded default database: ``$ARROWGATE_DB`` or ``~/.local/share/arrowgate``."""
    env = os.environ.get("ARROWGATE_DB")
    if env:
        return Path(env)
    base = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    return base / "arrowgate" / "arrowgate.db"


def _read_manifest(path: str) -> tuple[dict[str, Any], dict[str, str]]:
    from .manifest import file_digests, load_package_folder

    p = Path(path)
    if p.is_dir():
        return load_package_folder(p)
    try:
        text = p.read_text()
        raw = json.loads(text)
    except (OSError, ValueError) as exc:
        raise SystemExit(f"arrowgate: cannot read manifest {path}: {exc}") from exc
    return raw, file_digests({"manifest.json": text})


def _cmd_replay(args: argparse.Namespace) -> int:
    from .replay import run_files

    return run_files(args.cases, as_json=args.json)


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

    path = Path(args.db) if args.db else default_db_path()
    if not path.exists():
        raise SystemExit(f"arrowgate: no database at {path}")
    db = open_database(path)
    migrations.apply(db)
    log = ArrowLog(db)
    if args.action == "verify":
        from .anchor import AnchorFile

        anchor_file = AnchorFile(str(path) + ".anchor")
        try:
            anchor = anchor_file.read()
        except ValueError as exc:
            print(f"log verify: FAILED: {exc}")
            return 1
        result = log.verify(anchor, anchored=anchor_file.exists() or log.anchored())
        print(f"log verify: {'ok' if result.ok else 'FAILED'}: {result.rows} rows"
              + (f"; first bad row {result.first_bad}: {result.problem}" if not result.ok else ""))
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
