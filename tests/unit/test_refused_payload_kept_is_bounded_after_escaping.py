"""SPEC §8 "Bounds": what a refused call's row keeps of its payload is at most 4 KiB as
stored, after lone surrogates are escaped, cut between characters (never inside an escape),
with the whole payload's length and SHA-256.

(Found by a helper: `clip_payload` cut the payload's bytes to 4 KiB and escaped them
afterwards: each lone surrogate's three bytes became twelve characters, so a payload of
lone surrogates was stored at about 16 KiB.)"""

from __future__ import annotations

import hashlib

from engine import Engine
from engine.store.log import PAYLOAD_KEPT, clip_payload


def _escaped(text: str) -> str:
    return text.encode("utf-8", "surrogatepass").decode("utf-8", "backslashreplace")


def test_lone_surrogates_are_cut_after_escaping() -> None:
    """A payload of lone surrogates keeps at most 4 KiB of escapes, each one whole."""
    text = "\ud800" * 5000
    kept, size, digest = clip_payload(text)
    raw = text.encode("utf-8", "surrogatepass")
    assert len(kept.encode()) <= PAYLOAD_KEPT, len(kept.encode())
    assert kept == "\\xed\\xa0\\x80" * (PAYLOAD_KEPT // 12)
    assert (size, digest) == (len(raw), hashlib.sha256(raw).hexdigest())
    # Under 4 KiB as sent (3,000 bytes), over it escaped: cut all the same.
    kept, size, _ = clip_payload("\ud800" * 1000)
    assert (kept, size) == ("\\xed\\xa0\\x80" * (PAYLOAD_KEPT // 12), 3000)


def test_mixed_text_is_cut_at_the_last_whole_character_that_fits() -> None:
    """Text, multi-byte characters and surrogates mixed: the longest prefix fitting in 4 KiB."""
    text = ("ab€\udfff" * 2000)
    kept, size, _ = clip_payload(text)
    assert len(kept.encode()) <= PAYLOAD_KEPT
    escaped = _escaped(text)
    assert escaped.startswith(kept)
    # One more character would not fit.
    chars = len(kept.replace("\\xed\\xbf\\xbf", "S"))
    assert len(_escaped(text[:chars + 1]).encode()) > PAYLOAD_KEPT
    assert size == len(text.encode("utf-8", "surrogatepass"))
    # Short text with a surrogate is kept whole, escaped, with its length and digest.
    assert clip_payload("a\ud800")[0] == "a\\xed\\xa0\\x80"
    assert clip_payload("a\ud800")[1] == 4


async def test_a_refused_row_of_surrogates_stores_4_kib(world: Engine) -> None:
    """A refused prompt of lone surrogates is stored in 4 KiB at most; the log verifies."""
    text = "\udc80" * 4096
    d = await world.call("c1", "agents.prompt", "t1", {"text": text})
    assert d.outcome == "denied", d
    row = world.log_rows()[-1]
    assert len(row["payload"].encode()) <= PAYLOAD_KEPT, len(row["payload"])
    raw = text.encode("utf-8", "surrogatepass")
    assert (row["payload_bytes"], row["payload_sha256"]) == (
        len(raw), hashlib.sha256(raw).hexdigest())
    assert world.verify_log().ok
