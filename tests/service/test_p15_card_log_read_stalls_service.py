"""p15: a card's own ``GET /v1/log?limit=100000`` is read, turned into JSON and sent
whole, synchronously on the service's event loop (routes.py ``log``): any card with a
token stalls every other caller — other cards' calls, a person's hold approval — for
seconds per request, and may repeat it at will. Spec silent; a careful user expects no
card to be able to stop the engine answering others (SPEC §8 "No card can exhaust the
store"; §8.3 "File work never blocks the engine's other calls")."""

from __future__ import annotations

import asyncio
import subprocess
import threading
import time
from pathlib import Path

import httpx

from tests.service.test_p15_log_export_in_memory import ARROWGATE, _fill


def test_a_card_reading_its_log_does_not_stall_others(tmp_path: Path) -> None:
    db = tmp_path / "a.db"
    asyncio.run(_fill(db, 60_000, 1024))  # the card's own allowed calls
    proc = subprocess.Popen([*ARROWGATE, "serve", "--db", str(db), "--listen", "127.0.0.1:0"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        address = proc.stdout.readline().strip()
        assert proc.stdout.readline().strip() == "ready"
        operator = Path(str(db) + ".operator-token").read_text().strip()
        with httpx.Client(base_url=address, timeout=60,
                          headers={"Authorization": f"Bearer {operator}"}) as op:
            r = op.post("/v1/tokens", json={"principal": "card:c1"})
            assert r.status_code == 201, r.text
            card_token = r.json()["token"]
        waits: list[float] = []
        done = threading.Event()

        def probe() -> None:
            with httpx.Client(base_url=address, timeout=60) as h:
                while not done.is_set():
                    t = time.monotonic()
                    h.get("/v1/health")
                    waits.append(time.monotonic() - t)
                    time.sleep(0.02)

        prober = threading.Thread(target=probe)
        prober.start()
        try:
            with httpx.Client(base_url=address, timeout=60,
                              headers={"Authorization": f"Bearer {card_token}"}) as card, \
                    card.stream("GET", "/v1/log", params={"limit": 100_000}) as r:
                assert r.status_code == 200
                size = sum(len(chunk) for chunk in r.iter_bytes())
        finally:
            done.set()
            prober.join()
        assert size > 60_000_000
        assert max(waits) < 0.5, \
            f"/v1/health waited {max(waits):.2f} s behind a card's read of its own log"
    finally:
        proc.terminate()
        proc.communicate(timeout=60)
