"""``json.dumps`` for the hot write path, with its C encoder set up once.

``json.dumps(x)`` with any keyword argument builds a `json.JSONEncoder` and
then a C encoder on every call (with none, still the C encoder): a few
microseconds and several objects for the collector, on every log row, prompt
and delivered agent. These give the very same text (each is checked against
``json.dumps`` in tests/unit/test_store_encoding.py), except that a
self-referencing value raises `RecursionError` instead of `ValueError`: what
the store writes is always parsed JSON or built from it, never circular.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

__all__ = ["dumps", "dumps_sorted"]


def _encoder(sort_keys: bool) -> Callable[[Any], str]:
    plain = json.JSONEncoder(sort_keys=sort_keys)
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:  # no C accelerator: json.dumps' own way
        return plain.encode
    encode = make(None, plain.default, json.encoder.encode_basestring_ascii, None,
                  plain.key_separator, plain.item_separator, sort_keys, False, True)

    def dumps(value: Any) -> str:
        if isinstance(value, str):
            # JSONEncoder.encode's own shortcut for a bare string.
            return json.encoder.encode_basestring_ascii(value)
        return "".join(encode(value, 0))

    return dumps


#: ``json.dumps(value)``.
dumps: Callable[[Any], str] = _encoder(False)
#: ``json.dumps(value, sort_keys=True)``.
dumps_sorted: Callable[[Any], str] = _encoder(True)
