"""The HTTP service (SPEC §10.1): ``arrowgate serve``.

`register` adds the ``serve`` subcommand; it imports nothing heavy, so the
command line starts as fast as before. The application itself is
`engine.service.app.create_app`, the process `engine.service.serve.serve`.
"""

from __future__ import annotations

from engine.service.serve import register

__all__ = ["register"]
