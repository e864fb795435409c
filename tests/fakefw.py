#!/usr/bin/env python3
"""A stand-in for ``nvme`` (nvme-cli) and ``hdparm`` that records every invocation and never
touches a device: the firmware updater plug's commands are tested with it, as fio's are with
``tests/fakefio.py``. Installed as two links named ``nvme`` and ``hdparm`` in a folder put first
on ``PATH`` (``tests/unit/test_firmware_updater.py``'s ``fakefw`` fixture); the name it is
called by picks the tool.

Each call appends one JSON line to ``$FAKEFW_LOG``: ``{"tool": "nvme", "argv": [...]}``. The
drive's firmware state is a JSON file, ``$FAKEFW_STATE``::

    {"slots": {"1": "FW100", "2": null, "3": null}, "afi": 1, "frmw": 22,
     "pending": null, "downloaded": null, "hdparm_rev": "FW100"}

``frmw`` is Identify Controller FRMW (22 = 0x16: three slots, slot 1 writable, activation
without reset supported). Behaviour:

* ``nvme id-ctrl DEV -o json`` -> ``{"frmw": N}``; ``nvme fw-log DEV -o json`` -> nvme-cli's
  JSON (``{"nvme0n1": {"Active Firmware Slot (afi)": N, "Firmware Rev Slot 1": "U64 (REV)"}}``,
  AFI bits 6:4 = the slot pending activation);
* ``nvme fw-download DEV --fw=IMAGE``: the image's first line is the revision it carries;
* ``nvme fw-commit DEV --slot=N --action=A``: A 0/1/3 place the download in slot N, 1/2 mark
  it pending, 3 activates now. ``$FAKEFW_COMMIT``: ``ok`` (default), ``subsystem`` (answers
  as nvme-cli does for status 10h: "... but firmware requires subsystem reset", exit 0),
  ``conventional`` (status 0Bh, "requires conventional reset"), ``fail`` (exit 1,
  "NVMe status: INVALID_FW_IMAGE");
* ``nvme reset CTRL`` / ``nvme subsystem-reset CTRL``: activates the pending slot;
  ``$FAKEFW_RESET=fail`` makes it exit 1 ("Resetting failed: Input/output error") and activate
  nothing;
* any other name (a lab's own tool behind a ``cmd:`` plug) is recorded and exits
  ``$FAKEFW_CMD_EXIT`` (default 0);
* ``hdparm -I DEV`` prints ``Firmware Revision: REV``; ``hdparm --fwdownload IMAGE
  --yes-i-know-what-i-am-doing --please-destroy-my-drive DEV`` sets REV from the image and
  exits 1 without both safety flags, as hdparm does.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path


def _state() -> dict:
    return json.loads(Path(os.environ["FAKEFW_STATE"]).read_text())


def _save(state: dict) -> None:
    Path(os.environ["FAKEFW_STATE"]).write_text(json.dumps(state))


def _opt(argv: list[str], name: str) -> str | None:
    for word in argv:
        if word.startswith(f"--{name}="):
            return word.split("=", 1)[1]
    return None


def _nvme(argv: list[str]) -> int:
    state = _state()
    verb = argv[0] if argv else ""
    if verb == "id-ctrl":
        print(json.dumps({"frmw": state["frmw"]}))
    elif verb == "fw-log":
        pending = state.get("pending") or 0
        entry: dict[str, object] = {"Active Firmware Slot (afi)": state["afi"] | (pending << 4)}
        for slot, rev in sorted(state["slots"].items()):
            if rev:
                entry[f"Firmware Rev Slot {slot}"] = f"{sum(map(ord, rev))} ({rev})"
        print(json.dumps({Path(argv[1]).name: entry}))
    elif verb == "fw-download":
        image = _opt(argv, "fw")
        state["downloaded"] = Path(image).read_text().splitlines()[0].strip()
        _save(state)
        print("Firmware download success")
    elif verb == "fw-commit":
        slot, action = int(_opt(argv, "slot") or 0), int(_opt(argv, "action") or 0)
        mode = os.environ.get("FAKEFW_COMMIT", "ok")
        if mode == "fail":
            print("NVMe status: INVALID_FW_IMAGE: The firmware image specified for activation "
                  "is invalid and not loaded by the controller(0x4107)", file=sys.stderr)
            return 1
        if action in (0, 1, 3) and state.get("downloaded"):
            state["slots"][str(slot)], state["downloaded"] = state["downloaded"], None
        if action in (1, 2):
            state["pending"] = slot
        elif action == 3:
            state["afi"] = slot
        _save(state)
        if mode in ("subsystem", "conventional"):
            state["pending"] = slot
            _save(state)
            print(f"Success activating firmware action:{action} slot:{slot}, but firmware "
                  f"requires {mode} reset")
            return 0
        print(f"Success committing firmware action:{action} slot:{slot}")
    elif verb in ("reset", "subsystem-reset"):
        if os.environ.get("FAKEFW_RESET") == "fail":
            print("Resetting failed: Input/output error", file=sys.stderr)
            return 1
        if state.get("pending"):
            state["afi"], state["pending"] = state["pending"], None
            _save(state)
    else:
        print(f"fakefw: nvme {verb} is not emulated", file=sys.stderr)
        return 2
    return 0


def _hdparm(argv: list[str]) -> int:
    state = _state()
    if argv[:1] == ["-I"]:
        print(f"\nATA device, with non-removable media\n\tFirmware Revision:  "
              f"{state['hdparm_rev']}\n")
        return 0
    if argv[:1] == ["--fwdownload"]:
        if "--yes-i-know-what-i-am-doing" not in argv or "--please-destroy-my-drive" not in argv:
            print("Use of --fwdownload is VERY DANGEROUS.", file=sys.stderr)
            return 1
        state["hdparm_rev"] = Path(argv[1]).read_text().splitlines()[0].strip()
        _save(state)
        print("Done.")
        return 0
    print(f"fakefw: hdparm {argv} is not emulated", file=sys.stderr)
    return 2


def main() -> int:
    tool = Path(sys.argv[0]).name
    with open(os.environ["FAKEFW_LOG"], "a") as log:
        log.write(json.dumps({"tool": tool, "argv": sys.argv[1:]}) + "\n")
    if tool not in ("nvme", "hdparm"):  # a lab's own tool (cmd: plug): recorded only
        return int(os.environ.get("FAKEFW_CMD_EXIT", "0"))
    return _hdparm(sys.argv[1:]) if tool == "hdparm" else _nvme(sys.argv[1:])


if __name__ == "__main__":
    sys.exit(main())
