#!/usr/bin/env python3
"""A recording stand-in for a lab power switch command (a PDU's or ``ipmitool``'s), as
``tests/fakefio.py`` is for fio: never touches hardware.

Use it as a ``cmd:`` power switch::

    --power-switch="cmd:python tests/fakepower.py --outlet 3 {action} {serial} {device}"

Each call appends one JSON line to ``$FAKEPOWER_LOG`` (required): ``{"argv": [...], "t": ...}``
(``t``: ``time.monotonic()``), so a test reads the exact commands and their order.
``FAKEPOWER_FAIL=ACTION`` makes that action fail like a PDU that does not answer: exit status
3 and ``outlet 3: no answer from pdu-rack3 (timeout)`` on stderr, after recording the call.
"""

from __future__ import annotations

import json
import os
import sys
import time


def main(argv: list[str]) -> int:
    log = os.environ.get("FAKEPOWER_LOG")
    if not log:
        print("fakepower: FAKEPOWER_LOG is not set", file=sys.stderr)
        return 2
    with open(log, "a", encoding="utf-8") as fh:
        fh.write(json.dumps({"argv": argv, "t": time.monotonic()}) + "\n")
    action = next((a for a in argv if a in ("on", "off")), None)
    if action is not None and os.environ.get("FAKEPOWER_FAIL") == action:
        print("outlet 3: no answer from pdu-rack3 (timeout)", file=sys.stderr)
        return 3
    print(f"outlet 3: power {action}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
