#!/usr/bin/env python3
"""A stand-in for fio that records every invocation and never touches a device.

Used (via ``--fio-bin``) wherever the real fio must not run: the disk holding ``/``, refusal
tests, plugin tests. Each call appends one JSON line to ``$FAKEFIO_LOG``:
``{"argv": [...], "job": "<job file text>", "rw": [...]}``.

Behaviour:
  * ``--version`` prints ``$FAKEFIO_VERSION`` (default ``fio-3.33``).
  * a run writes a fio-3.x JSON document to ``--output`` (or stdout) whose figures come from
    ``$FAKEFIO_BW_MBPS`` (default 500), ``$FAKEFIO_IOPS`` (default 50000) and
    ``$FAKEFIO_P99_US`` (default 200) for every direction the job's ``rw`` does.
  * ``$FAKEFIO_MODE``: ``ok`` (default), ``error5`` (job error 5, EIO), ``garbage`` (no JSON),
    ``exit1`` (exit status 1, no output), ``hang`` (sleep forever).
"""

from __future__ import annotations

import json
import os
import re
import sys
import time


def _job_options(text: str) -> dict[str, str]:
    opts: dict[str, str] = {}
    for line in text.splitlines():
        m = re.match(r"\s*([a-z_]+)\s*=\s*(.*?)\s*$", line)
        if m:
            opts[m.group(1)] = m.group(2)
    return opts


def _direction(bw_mbps: float, iops: float, p99_us: float, runtime_ms: int) -> dict:
    io_bytes = int(bw_mbps * 1e6 * runtime_ms / 1000)
    pct = {
        "50.000000": int(p99_us * 300), "99.000000": int(p99_us * 1000),
        "99.900000": int(p99_us * 1500), "99.990000": int(p99_us * 2000),
    }
    return {
        "io_bytes": io_bytes, "io_kbytes": io_bytes // 1024, "bw_bytes": int(bw_mbps * 1e6),
        "bw": int(bw_mbps * 1e6 / 1024), "iops": iops, "runtime": runtime_ms,
        "total_ios": int(iops * runtime_ms / 1000),
        "clat_ns": {"min": 1000, "max": int(p99_us * 4000), "mean": p99_us * 400.0,
                    "stddev": 1.0, "N": int(iops * runtime_ms / 1000), "percentile": pct},
    }


def _idle() -> dict:
    return {"io_bytes": 0, "io_kbytes": 0, "bw_bytes": 0, "bw": 0, "iops": 0.0, "runtime": 0,
            "total_ios": 0, "clat_ns": {"min": 0, "max": 0, "mean": 0.0, "stddev": 0.0, "N": 0}}


def main(argv: list[str]) -> int:
    job_text = ""
    output = None
    for arg in argv:
        if arg.startswith("--output="):
            output = arg.split("=", 1)[1]
        elif not arg.startswith("--") and os.path.isfile(arg):
            with open(arg) as fh:
                job_text = fh.read()
    opts = _job_options(job_text)
    for arg in argv:  # command-line job options (the engine probe uses them)
        m = re.match(r"--([a-z_]+)=(.*)$", arg)
        if m and m.group(1) not in ("output", "output-format"):
            opts.setdefault(m.group(1), m.group(2))
    log = os.environ.get("FAKEFIO_LOG")
    if log:
        with open(log, "a") as fh:
            fh.write(json.dumps({"argv": argv, "job": job_text, "rw": opts.get("rw")}) + "\n")
    if "--version" in argv:
        print(os.environ.get("FAKEFIO_VERSION", "fio-3.33"))
        return 0
    mode = os.environ.get("FAKEFIO_MODE", "ok")
    if "--name=probe" in argv:  # the I/O-engine probe always works
        mode = "ok"
    if mode == "hang":
        while True:
            time.sleep(1)
    if mode == "exit1":
        print("fio: something went wrong", file=sys.stderr)
        return 1
    if mode == "garbage":
        text = "fio: engine io_uring not loadable\n"
    else:
        runtime_ms = int(float(re.sub(r"[a-z]+$", "", opts.get("runtime", "3")) or 3) * 1000)
        rw = opts.get("rw", "read")
        bw = float(os.environ.get("FAKEFIO_BW_MBPS", "500"))
        iops = float(os.environ.get("FAKEFIO_IOPS", "50000"))
        p99 = float(os.environ.get("FAKEFIO_P99_US", "200"))
        reads = rw in ("read", "randread", "rw", "randrw", "readwrite")
        writes = rw in ("write", "randwrite", "rw", "randrw", "readwrite")
        job = {
            "jobname": opts.get("name", "fake"), "groupid": 0,
            "error": 5 if mode == "error5" else 0,
            "job_runtime": runtime_ms,
            "read": _direction(bw, iops, p99, runtime_ms) if reads else _idle(),
            "write": _direction(bw, iops, p99, runtime_ms) if writes else _idle(),
            "trim": _idle(),
        }
        text = json.dumps({"fio version": "fio-3.33", "timestamp": int(time.time()),
                           "global options": {}, "jobs": [job]}, indent=1) + "\n"
    if output:
        with open(output, "w") as fh:
            fh.write(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
