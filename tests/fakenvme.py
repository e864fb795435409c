#!/usr/bin/env python3
"""A stand-in for nvme-cli (and smartctl) that records every invocation and answers from files.

For plugin tests of drive health on an NVMe drive we must not touch: the plugin runs the
commands it would run on a drive, and the test reads back exactly which (argv) and in which
order. Installed as ``nvme`` and ``smartctl`` (copies of this file) in a folder put first on
PATH.

* ``$FAKENVME_DIR``: the answers and the log. Each call appends one JSON line
  ``{"argv": [...]}`` (``argv[0]`` the program's basename) to ``$FAKENVME_DIR/calls.jsonl``.
* The answer's key is the words of argv before the first option, joined with ``_``:
  ``nvme ocp smart-add-log -o json /dev/x`` -> ``ocp_smart-add-log``; ``smartctl ...`` ->
  ``smartctl``. The n-th call (from 0) of a key prints ``<key>.<n>.json``, else ``<key>.json``,
  and exits 0.
* No answer file: as a drive that refuses the log (or a tool that reads nothing): nvme exits 1
  with a message on stderr and nothing on stdout; smartctl exits 2 (smartctl(8): device open
  failed) with nothing on stdout.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path


def key_of(argv: list[str]) -> str:
    """``['nvme', 'ocp', 'smart-add-log', '-o', 'json', DEV]`` -> ``'ocp_smart-add-log'``."""
    if argv[0] == "smartctl":
        return "smartctl"
    words = []
    for arg in argv[1:]:
        if arg.startswith("-"):
            break
        words.append(arg)
    return "_".join(words)


def main() -> int:
    program = Path(sys.argv[0]).name
    folder = Path(os.environ["FAKENVME_DIR"])
    log = folder / "calls.jsonl"
    previous = [json.loads(line)["argv"] for line in log.read_text().splitlines()] if (
        log.exists()) else []
    argv = [program, *sys.argv[1:]]
    with log.open("a") as fh:
        fh.write(json.dumps({"argv": argv}) + "\n")
    key = key_of(argv)
    n = sum(1 for old in previous if key_of(old) == key)
    for name in (f"{key}.{n}.json", f"{key}.json"):
        answer = folder / name
        if answer.exists():
            sys.stdout.write(answer.read_text())
            return 0
    if program == "smartctl":
        return 2
    sys.stderr.write(f"NVMe status: Invalid Log Page: The log page indicated is invalid "
                     f"(stand-in: no answer for {key!r})\n")
    return 1


if __name__ == "__main__":
    sys.exit(main())
