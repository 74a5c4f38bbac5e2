"""The values a write verb reads from its options: ``--set KEY=VALUE`` fields and the JSON
objects of ``--args`` and ``--settings``, read as the service reads a request."""

from __future__ import annotations

from typing import Any

from engine.app.writefailure import USAGE, Failure

__all__ = ["field_values", "json_object"]


def field_values(pairs: list[str] | None) -> dict[str, Any]:
    """The fields ``--set KEY=VALUE`` name, each once, VALUE as JSON or a bare string.

    A field given twice, or a key named twice in a VALUE that is JSON, is refused: its
    last value would count, and a person reading the command line may take the first
    (``--set dangerous=true --set dangerous=false``), as in `json_object`.
    """
    from engine.core.uniquekeys import loads_unique
    from engine.service.jsonread import loads

    out: dict[str, Any] = {}
    for pair in pairs or []:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise Failure(USAGE, f"--set {pair!r}: write KEY=VALUE")
        if key in out:
            raise Failure(USAGE, f"--set {key!r} is given twice: name each field once "
                                 "(which value would count is not what a reader sees)")
        try:
            # Not json.loads: nested past the recursion limit, it raises RecursionError.
            out[key] = loads(value)
        except ValueError:
            out[key] = value  # a bare word is a string: name=Claude
            continue
        try:
            loads_unique(value)
        except ValueError as exc:
            raise Failure(USAGE, f"--set {key!r}: {exc}") from None
        except RecursionError:  # `loads` read it at the very edge of the stack
            raise Failure(USAGE, f"--set {key!r}: nested too deeply") from None
    return out


def json_object(text: str, option: str) -> dict[str, Any]:
    """The JSON object an option holds, read as the service reads a request body."""
    from engine.core.uniquekeys import loads_unique
    from engine.service.jsonread import loads

    try:
        # Strictly: NaN, Infinity, a lone surrogate and nesting past 1,024 levels
        # are not JSON; then each key once (within those levels: safe to recurse).
        value = loads(text, strict=True)
        loads_unique(text)
    except ValueError as exc:
        raise Failure(USAGE, f"{option}: not JSON: {exc}") from None
    if not isinstance(value, dict):
        raise Failure(USAGE, f"{option}: must be a JSON object")
    return value
