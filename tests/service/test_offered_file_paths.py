"""An offer's file paths are package paths, so one content hash names one set of files.

(Found by a helper, p15: file paths were never checked, and the content hash
joins ``path NUL digest newline``; a path holding a NUL and a newline spelled out
entries of its own, so two offers with different manifests shared one hash and
the hash of a review with no permissions installed ``fs.write`` and
``agents.prompt``.)
"""

from __future__ import annotations

import hashlib
import json

import pytest

from engine.core.errors import ManifestInvalid
from engine.core.manifest import content_hash, file_path_problem

NARROW = {"name": "acme.twin", "version": "1.0.0", "permissions": {}}
WIDE = {"name": "acme.twin", "version": "1.0.0",
        "permissions": {"fs.write": {}, "agents.prompt": {}}}


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def test_a_path_spelling_out_entries_is_refused_and_nothing_is_offered(unix_server) -> None:
    op = unix_server.client()
    forged = f"a\0{_sha('y')}\nmanifest.json\0{_sha(json.dumps(WIDE))}\nzz"
    r = op.post("/v1/packages", json={"manifest": NARROW,
                                      "files": {"manifest.json": json.dumps(NARROW),
                                                forged: "z"}})
    assert r.status_code == 400, r.text
    problem = r.json()
    assert problem["code"] == "MANIFEST_INVALID"
    assert problem["problems"][0]["problem"] == "a file path holds U+0000 (NUL)"
    assert op.get("/v1/packages/acme.twin/review").status_code == 404


@pytest.mark.parametrize("path", ["", "/etc/passwd", "../x", "a/../b", "a//b", "./a", "a/.",
                                  "a\\b", "a\nb", "a\0b", "a\u202eb", "a\ufe0fb", "x" * 1025])
def test_a_path_that_is_not_a_package_file_has_no_content_hash(path: str) -> None:
    assert file_path_problem(path) is not None
    with pytest.raises(ManifestInvalid) as caught:
        content_hash({"manifest.json": _sha("m"), path: _sha("x")})
    assert caught.value.problems[0][0] == f"$.files[{json.dumps(path)}]"


@pytest.mark.parametrize("path", ["manifest.json", "src/index.js", "a b/c-d_e.f", "ünï/ℂ.txt",
                                  "x" * 1024, ".hidden/a", "a..b"])
def test_package_paths_are_accepted(path: str) -> None:
    assert file_path_problem(path) is None
    assert content_hash({path: _sha("x")}).startswith("sha256:")
