"""A deflate body decodes the same however the network splits it.

SPEC §8.1: the body is capped as received and as decoded; the engine decodes
deflate itself, zlib-wrapped (the standard) or raw (some servers), telling
them apart by the first two bytes. A server is free to send its body in
pieces of any size.

Found in round 19: the decoder chose raw or zlib on the first piece alone, so
a zlib body whose first piece was one byte was read as raw deflate and the
fetch failed (FETCH_FAILED, ``encoding``).
"""

from __future__ import annotations

import zlib

import pytest

from engine.effects.transport import BodyDecoder

TEXT = b"hello world, " * 50


def _pieces(data: bytes, first: int) -> list[bytes]:
    return [data[:first]] + [data[i:i + 7] for i in range(first, len(data), 7)]


@pytest.mark.parametrize("wrapped", [True, False], ids=["zlib", "raw"])
@pytest.mark.parametrize("first", [1, 2, 3])
def test_deflate_decodes_from_any_first_piece(wrapped: bool, first: int) -> None:
    if wrapped:
        body = zlib.compress(TEXT)
    else:
        raw = zlib.compressobj(wbits=-zlib.MAX_WBITS)
        body = raw.compress(TEXT) + raw.flush()
    decoder = BodyDecoder("deflate", 10_000)
    assert b"".join(decoder.feed(piece) for piece in _pieces(body, first)) == TEXT


def test_an_empty_piece_first_changes_nothing() -> None:
    decoder = BodyDecoder("deflate", 10_000)
    body = zlib.compress(TEXT)
    assert decoder.feed(b"") + decoder.feed(body) == TEXT
