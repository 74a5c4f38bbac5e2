"""The snapshot tests run the app as the Pilot tests do: with their heap fixtures."""

from __future__ import annotations

from tests.appheap import _app_heap  # noqa: F401 - the app's heap freeze, kept out
