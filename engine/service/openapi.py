"""The committed OpenAPI 3.1 document, generated from the application.

``python -m engine.service.openapi`` writes ``openapi.json`` at the root of
the repository (``-`` as argument: to standard output); a test fails when
the committed file and the routes drift apart.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path
from typing import Any

__all__ = ["document", "main", "render"]

#: Where the committed document lives.
COMMITTED = Path(__file__).resolve().parents[2] / "openapi.json"


def document() -> dict[str, Any]:
    """The OpenAPI document of the service's routes (built on a throw-away store)."""
    from engine.engine import Engine
    from engine.service.app import Service, create_app, openapi_document
    from engine.service.auth import TokenStore

    with tempfile.TemporaryDirectory() as tmp:
        engine = Engine.open(Path(tmp) / "openapi.db")
        tokens = TokenStore(Path(tmp) / "openapi.db")
        try:
            return openapi_document(create_app(Service(engine, tokens)))
        finally:
            tokens.close()
            engine.close()


def render() -> str:
    """The document as committed: indented, keys in route order, a final newline."""
    return json.dumps(document(), indent=2, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Write the document (to ``openapi.json``, or to standard output with ``-``)."""
    args = sys.argv[1:] if argv is None else argv
    text = render()
    if args == ["-"]:
        sys.stdout.write(text)
    else:
        target = Path(args[0]) if args else COMMITTED
        target.write_text(text)
        print(f"wrote {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
