#!/usr/bin/env python3
"""A recording stand-in for a ``cmd:`` power meter (``--power-meter=cmd:python3 tests/fakemeter.py
...``), as ``tests/fakefio.py`` is for fio: it never touches hardware.

It prints a header, then samples ``time_s,power_w`` at 10 per second of a constant
``$FAKEMETER_W`` watts (default 5.0) from ``$FAKEMETER_BACKFILL_S`` seconds before it started
(default 30: the stand-in fio returns at once and dates its run's window back by its
runtime) until SIGTERM. Every start and stop is appended to ``$FAKEMETER_LOG`` as a JSON line
``{"event": "start"|"stop", "argv": [...], "time_s": ...}``. ``FAKEMETER_MODE=garbage``
prints a row that is not numbers; ``FAKEMETER_MODE=fail`` exits with status 3 at once.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time


def _log(event: str) -> None:
    path = os.environ.get("FAKEMETER_LOG")
    if path:
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps({"event": event, "argv": sys.argv[1:],
                                 "time_s": time.time()}) + "\n")


def main() -> int:
    watts = float(os.environ.get("FAKEMETER_W", "5.0"))
    mode = os.environ.get("FAKEMETER_MODE", "")
    _log("start")
    if mode == "fail":
        print("fakemeter: no meter on /dev/ttyUSB9", file=sys.stderr)
        return 3
    stop = {"now": False}

    def on_term(_signo: int, _frame: object) -> None:
        stop["now"] = True

    signal.signal(signal.SIGTERM, on_term)
    out = sys.stdout
    out.write("time_s,power_w\n")
    now = time.time()
    backfill = float(os.environ.get("FAKEMETER_BACKFILL_S", "30"))
    for i in range(round(backfill * 10)):  # 10 rows per second before the start
        out.write(f"{now - backfill + i / 10:.3f},{watts}\n")
    if mode == "garbage":
        out.write("12:00:01,4.5 W\n")
    out.flush()
    while not stop["now"]:
        out.write(f"{time.time():.3f},{watts}\n")
        out.flush()
        time.sleep(0.1)
    out.write(f"{time.time():.3f},{watts}\n")
    out.flush()
    _log("stop")
    return 0


if __name__ == "__main__":
    sys.exit(main())
