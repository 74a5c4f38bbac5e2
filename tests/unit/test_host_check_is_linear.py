"""A ``Host`` value (and an absolute-form target's authority) is judged in time linear in
its length, however it fails: it is judged on the event loop, before any token is asked,
so a slow one holds every connection.

(Found in round 34's review: the reg-name's pattern repeated a run of characters inside a
repeat, so a value of n name characters and one that may not follow (``aaaa…a@``) was
tried all 2ⁿ ways: 24 characters took a second, 40 took days.)
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from engine.service.framing import host_ok


@pytest.mark.parametrize("tail", [b"@", b"/", b" ", b":x", b"%zz"])
def test_a_long_name_that_fails_at_its_end_is_refused_at_once(tail: bytes) -> None:
    """Forty name characters and a tail that refuses them: refused within seconds (in a
    process of its own, which is stopped if it is not: no thread of the suite runs on)."""
    code = ("from engine.service.framing import host_ok; "
            f"assert not host_ok(b'a' * 40 + {tail!r})")
    done = subprocess.run([sys.executable, "-c", code], timeout=30, check=False,
                          capture_output=True)
    assert done.returncode == 0, done.stderr


def test_what_was_valid_still_is() -> None:
    """Names, escapes, IPv4 and IPv6 literals, with and without ports, as before."""
    for value in (b"", b"localhost", b"a%41b", b"127.0.0.1:8080", b"[::1]:80",
                  b"x" * 200 + b":65535"):
        assert host_ok(value), value
