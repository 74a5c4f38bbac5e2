"""The HTTP service (SPEC §10.1): ``arrowgate serve``.

`register` adds the ``serve`` subcommand (`engine.service.command`); it imports
nothing heavy, so the command line starts as fast as before: the service itself is
imported when ``serve`` runs. The application is
`engine.service.app.create_app`, the process `engine.service.serve.serve`.
"""

from __future__ import annotations

from engine.service.command import register

__all__ = ["register"]
