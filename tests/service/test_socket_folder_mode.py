"""`arrowgate serve --socket` never changes the mode of a folder it did not make.

(Found by a hostile test, round 14, when it did not hold: it set any existing folder to 0700 (a project folder, the home folder).)

`bind_unix` chmods the socket's folder to 0700 whatever it is: `--socket ./serve.sock`
or `--socket ~/ag.sock` silently closes the project folder or the home folder to
everyone else, and as root `--socket /tmp/ag.sock` would chmod /tmp to 0700.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys

ARROWGATE = [sys.executable, "-m", "engine.app.cli"]


def test_an_existing_shared_folder_keeps_its_mode(tmp_path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o755)
    proc = subprocess.Popen([*ARROWGATE, "serve", "--db", str(tmp_path / "a.db"),
                             "--socket", str(shared / "s.sock")],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        proc.stdout.readline()
        proc.stdout.readline()  # "ready", or nothing when it refused (either is fine)
        mode = stat.S_IMODE(os.stat(shared).st_mode)
    finally:
        proc.terminate()
        proc.communicate(timeout=60)
    # Either refuse (the folder is not private) or serve, but never chmod a folder
    # that the person owns for other reasons.
    assert mode == 0o755, f"serve changed {shared} from 0755 to {mode:o}"
