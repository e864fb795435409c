#!/usr/bin/env -S python3 -S
"""A stand-in for fio that records every invocation and never touches a device.

Used (via ``--fio-bin``) wherever the real fio must not run: the disk holding ``/``, refusal
tests, plugin tests. It imports the standard library only and runs with ``python3 -S`` (no
``site``): the ``fake_fio`` fixture puts the interpreter of the tests first on ``PATH`` as
``python3``, so a call starts in about 20 ms (130 ms through a pyenv shim and ``site``; a
whole-suites run makes about 240 calls). Each call appends one JSON line to ``$FAKEFIO_LOG``:
``{"argv": [...], "job": "<job file text>", "rw": [...]}``.

Behaviour:
  * ``--version`` prints ``$FAKEFIO_VERSION`` (default ``fio-3.33``).
  * a run writes a fio-3.x JSON document to ``--output`` (or stdout) whose figures come from
    ``$FAKEFIO_BW_MBPS`` (default 500), ``$FAKEFIO_IOPS`` (default 50000) and
    ``$FAKEFIO_P99_US`` (default 200; the maximum latency is 4x it) for every direction the
    job's ``rw`` does; ``FAKEFIO_BW_MBPS=500,300,520`` (and ``FAKEFIO_IOPS``,
    ``FAKEFIO_P99_US``) gives the n-th job run (counted in ``$FAKEFIO_LOG``) the n-th figure,
    cycling (run-to-run noise for ``--repeat``).
  * a job with ``write_bw_log=`` gets per-second bw/iops/lat logs like fio 3.33's
    (``$FAKEFIO_BW_SERIES=100,100,62.5,25``: each second's MB/s, e.g. an SLC-cache cliff).
  * ``$FAKEFIO_BW_SCALE=1,0.5,1.1`` multiplies the n-th job run's bandwidth, IOPS and
    per-second series by the n-th factor, cycling (run-to-run noise for a methodology test
    whose figures come from the per-second series, under ``--repeat``).
  * ``$FAKEFIO_BINS=1`` with ``--output-format=json+``: each direction also gets a json+
    ``clat_ns.bins`` histogram of its ``total_ios`` I/Os whose percentiles by fio's rule are the
    bucket values of the figures above (p50, p99, p99.9, p99.99, max: 0.3x, 1x, 1.5x, 2x and 4x
    the p99), and its ``percentile`` map is then those bucket values, as fio prints them. Off by
    default: without it the percentiles stay the round figures above.
  * ``$FAKEFIO_MODE``: ``ok`` (default), ``error5`` (job error 5, EIO), ``garbage`` (no JSON),
    ``exit1`` (exit status 1, no output), ``hang`` (a line on stderr, then sleep forever),
    ``signal`` (as fio 3.33 on SIGINT: ``fio: terminating on signal 2`` before the JSON, a third
    of the asked runtime, exit status 128), ``short`` (a third of the asked runtime, exit 0),
    ``truncated`` (the JSON cut in the middle), ``empty`` (a 0-byte output file),
    ``text-before`` (a real fio warning line before the JSON), ``text-inside`` (a line of text
    in the middle of the JSON document), ``killed`` (SIGKILLs itself before writing anything),
    ``orphan`` (writes its JSON, forks a "job process" that leaves fio's process group with
    ``setsid`` as fio 3.33's jobs do, prints a line on stderr and sleeps 60 s, then SIGKILLs
    itself: fio's main process killed while a job still runs),
    ``kill-parent`` (SIGKILLs its parent -- the pytest process or xdist worker that started it,
    as an OOM kill, a hung NVMe reset or ``os._exit`` would end it -- then exits 1 after a
    second; found cases B19/B21, whose ``fio_kill_parent.sh`` did this first).
  * ``$FAKEFIO_ONLY``: apply the mode only to the job whose section is named so (a workload
    id); every other job runs ``ok``. ``$FAKEFIO_ONLY_ON``: apply it only to a job whose text
    contains this (e.g. ``/a.img``: one drive's jobs).
  * one job entry per reporting group, as fio's ``group_reporting`` gives: a section with
    ``new_group=1`` starts a group (the burst test's bursts), the sections of one group share
    an entry named after the first, with every direction any of them does (the copy test's
    reader and writer); ``runtime`` is read per group (``200ms``, ``3s``), and each entry
    echoes its ``job options`` as fio does (``verify=`` of a read-back pass);
  * a size-based group (no ``time_based=1``) moves ``io_size`` (else ``size``) x ``numjobs``
    bytes at the bandwidth above and stops then, or at its ``runtime`` when that comes first
    (fio: whichever comes first); a time-based one moves bandwidth x runtime.
"""

from __future__ import annotations

import json
import os
import re
import signal
import sys
import time


def _job_options(text: str) -> dict[str, str]:
    opts: dict[str, str] = {}
    for line in text.splitlines():
        m = re.match(r"\s*([a-z_]+)\s*=\s*(.*?)\s*$", line)
        if m:
            opts[m.group(1)] = m.group(2)
    return opts


READS = frozenset({"read", "randread", "rw", "randrw", "readwrite"})
WRITES = frozenset({"write", "randwrite", "rw", "randrw", "readwrite"})


def _groups(text: str, flat: dict[str, str]
            ) -> list[tuple[str, dict[str, str], list[dict[str, str]]]]:
    """``(name, own options, sections)`` of each reporting group of the job file: its first
    section's name and own options, and every section's options merged with ``[global]``'s.
    Without sections (the engine probe's command-line job) one group of the flat options."""
    parts = re.split(r"^\[([^\]]+)\]\s*$", text, flags=re.M)
    common: dict[str, str] = {}
    groups: list[tuple[str, dict[str, str], list[dict[str, str]]]] = []
    for name, body in zip(parts[1::2], parts[2::2], strict=True):
        own = _job_options(body)
        if name == "global":
            common = own
            continue
        if not groups or own.get("new_group") == "1":
            groups.append((name, own, []))
        groups[-1][2].append({**common, **own})
    return groups or [(flat.get("name", "fake"), {}, [flat])]


def _moved(sections: list[dict[str, str]]) -> dict[str, int] | None:
    """Bytes per direction a size-based group moves (each section's ``io_size`` or ``size`` x
    ``numjobs``, a mix's split evenly); ``None`` when a section is time based or unsized."""
    moved = {"read": 0, "write": 0}
    for opts in sections:
        planned = _planned(opts)
        if planned is None:
            return None
        rw = opts.get("rw", "read")
        dirs = [d for d, kinds in (("read", READS), ("write", WRITES)) if rw in kinds]
        for d in dirs:
            moved[d] += planned // len(dirs)
    return moved


def _seconds(value: str) -> float:
    """fio time value: ``3s``, ``3``, ``500ms`` -> seconds."""
    number = float(re.sub(r"[a-z]+$", "", value) or 3)
    return number / 1000 if value.endswith("ms") else number


def _size_bytes(value: str) -> int:
    """fio size value: ``1048576``, ``64m``, ``4k`` -> bytes (binary units)."""
    m = re.fullmatch(r"(\d+)([kmgt]?)i?b?", value.strip().lower())
    if not m:
        raise SystemExit(f"fakefio: cannot read the size {value!r}")
    return int(m.group(1)) * 1024 ** " kmgt".index(m.group(2) or " ")


def _planned(opts: dict[str, str]) -> int | None:
    """Bytes a size-based group moves (``io_size`` or ``size``, x ``numjobs``); ``None`` when
    time based or unsized."""
    size = opts.get("io_size") or opts.get("size")
    if opts.get("time_based") == "1" or not size:
        return None
    return _size_bytes(size) * int(opts.get("numjobs", "1"))


def _direction(bw_mbps: float, iops: float, p99_us: float, runtime_ms: int,
               io_bytes: int | None = None) -> dict:
    if io_bytes is None:
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


def _bucket(ns: int) -> int:
    """fio ``stat.c``: the value of the bucket ``ns`` falls in (``plat_idx_to_val`` of
    ``plat_val_to_idx``, 64 buckets a power of two)."""
    msb = ns.bit_length() - 1
    if msb <= 6:
        return ns
    err = msb - 6
    return ((ns >> err) << err) + (1 << err) // 2


def _add_bins(direction: dict) -> None:
    """Give a direction json+ bins whose fio-rule percentiles are its percentile map's bucket
    values, and set the map to them (``$FAKEFIO_BINS``)."""
    clat, total = direction["clat_ns"], direction["total_ios"]
    if not total:
        return
    points = [(float(k), _bucket(v)) for k, v in clat["percentile"].items()]
    points.append((100.0, _bucket(clat["max"])))
    bins: dict[str, int] = {}
    below = 0
    for percent, value in sorted(points):
        reach = min(total, -(-round(percent * 10**6) * total // 10**8))  # ceil(p/100 * total)
        if reach > below:
            bins[str(value)] = bins.get(str(value), 0) + reach - below
            below = reach
    clat["bins"] = bins
    running, table = 0, {}
    for value, count in sorted((int(k), c) for k, c in bins.items()):
        running += count
        for percent, _ in points[:-1]:
            if f"{percent:f}" not in table and running * 100 >= percent * total:
                table[f"{percent:f}"] = value
    clat["percentile"] = table


def _idle() -> dict:
    return {"io_bytes": 0, "io_kbytes": 0, "bw_bytes": 0, "bw": 0, "iops": 0.0, "runtime": 0,
            "total_ios": 0, "clat_ns": {"min": 0, "max": 0, "mean": 0.0, "stddev": 0.0, "N": 0}}


def _nth_job_value(value: str, log: str | None) -> float:
    values = [float(v) for v in value.split(",")]
    if len(values) == 1 or not log:
        return values[0]
    with open(log) as fh:
        runs = sum(1 for line in fh if json.loads(line)["job"])
    return values[(runs - 1) % len(values)]


def _write_logs(opts: dict[str, str], bw_mbps: float, iops: float, p99_us: float,
                runtime_ms: int, reads: bool, writes: bool, scale: float = 1.0) -> None:
    """Per-second logs as fio 3.33 writes them with ``log_avg_msec=1000`` (in the current folder,
    fio's cwd): ``time_ms, value, direction, 0, 0`` in ``<prefix>_{bw,iops,lat}.1.log``.
    ``$FAKEFIO_BW_SERIES=100,100,62.5,25`` gives each second's bandwidth (MB/s) instead of a
    constant one; IOPS scale with it; ``scale`` multiplies the series (``$FAKEFIO_BW_SCALE``)."""
    series_env = os.environ.get("FAKEFIO_BW_SERIES")
    if series_env:
        series = [float(v) * scale for v in series_env.split(",")]
    else:
        series = [bw_mbps] * max(1, runtime_ms // 1000)
    directions = [d for d, on in ((0, reads), (1, writes)) if on]
    lines: dict[str, list[str]] = {"bw": [], "iops": [], "lat": []}
    for i, mbps in enumerate(series, start=1):
        for d in directions:
            lines["bw"].append(f"{i * 1000}, {int(mbps * 1e6 / 1024)}, {d}, 0, 0")
            lines["iops"].append(f"{i * 1000}, {int(iops * mbps / bw_mbps)}, {d}, 0, 0")
            lines["lat"].append(f"{i * 1000}, {int(p99_us * 400)}, {d}, 0, 0")
    for kind, prefix in (("bw", opts["write_bw_log"]), ("iops", opts.get("write_iops_log")),
                         ("lat", opts.get("write_lat_log"))):
        if prefix:
            with open(f"{prefix}_{kind}.1.log", "w") as fh:
                fh.write("".join(line + "\n" for line in lines[kind]))


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
    sections = [s for s in re.findall(r"^\[([^\]]+)\]", job_text, re.M) if s != "global"]
    job_name = sections[-1] if sections else opts.get("name", "fake")
    only = os.environ.get("FAKEFIO_ONLY")
    only_on = os.environ.get("FAKEFIO_ONLY_ON")
    if "--name=probe" in argv or (only and only != job_name) or (
            only_on and only_on not in job_text):  # the engine probe always works
        mode = "ok"
    if mode == "killed":
        os.kill(os.getpid(), signal.SIGKILL)
    if mode == "kill-parent":
        os.kill(os.getppid(), signal.SIGKILL)
        time.sleep(1)
        return 1
    if mode == "hang":
        print("fakefio: hanging (FAKEFIO_MODE=hang)", file=sys.stderr, flush=True)
        while True:
            time.sleep(1)
    if mode == "exit1":
        print("fio: something went wrong", file=sys.stderr)
        return 1
    if mode == "garbage":
        text = "fio: engine io_uring not loadable\n"
    else:
        scale = _nth_job_value(os.environ.get("FAKEFIO_BW_SCALE", "1"), log)
        bw = _nth_job_value(os.environ.get("FAKEFIO_BW_MBPS", "500"), log) * scale
        iops = _nth_job_value(os.environ.get("FAKEFIO_IOPS", "50000"), log) * scale
        p99 = _nth_job_value(os.environ.get("FAKEFIO_P99_US", "200"), log)
        jobs = []
        groups = _groups(job_text, opts)
        for groupid, (name, own_opts, sections) in enumerate(groups):
            group_ms = int(_seconds(sections[0].get("runtime", "3")) * 1000)
            rws = {sec.get("rw", "read") for sec in sections}
            reads, writes = bool(rws & READS), bool(rws & WRITES)
            moved = _moved(sections)
            if moved is not None and bw <= 0:
                moved = None  # a stream that moves nothing: bandwidth 0 for its runtime
            if moved is not None:
                need_ms = sum(moved.values()) / ((reads + writes) * bw * 1e6) * 1000
                if "runtime" in sections[0] and need_ms >= group_ms:
                    moved = None  # capped by its runtime: bandwidth x runtime
                else:
                    group_ms = max(1, round(need_ms))
            if mode in ("signal", "short"):
                group_ms //= 3
                moved = moved and {d: n // 3 for d, n in moved.items()}
            jobs.append({
                "jobname": name if len(groups) > 1 else job_name, "groupid": groupid,
                "error": 5 if mode == "error5" else 0,
                "job_runtime": group_ms,
                "read": _direction(bw, iops, p99, group_ms, moved and moved["read"])
                if reads else _idle(),
                "write": _direction(bw, iops, p99, group_ms, moved and moved["write"])
                if writes else _idle(),
                "trim": _idle(),
                "job options": own_opts,  # after the directions: text-inside cuts at "read"
            })
        if os.environ.get("FAKEFIO_BINS") == "1" and "--output-format=json+" in argv:
            for job in jobs:
                for direction in ("read", "write"):
                    _add_bins(job[direction])
        runtime_ms = jobs[0]["job_runtime"]
        reads = any(j["read"]["io_bytes"] for j in jobs)
        writes = any(j["write"]["io_bytes"] for j in jobs)
        text = json.dumps({"fio version": "fio-3.33", "timestamp": int(time.time()),
                           "timestamp_ms": int(time.time() * 1000),
                           "global options": {}, "jobs": jobs}, indent=1) + "\n"
        if mode == "signal":
            text = "fio: terminating on signal 2\n" + text
        elif mode == "text-before":
            text = ("fio: this platform does not support process shared mutexes, forcing use of "
                    "threads. Use the 'thread' option to get rid of this warning.\n" + text)
        elif mode == "text-inside":
            cut = text.index('"read"')
            text = text[:cut] + "fio: pid=4242, err=5/file:io_u.c:1889, func=io_u error\n" \
                + text[cut:]
        elif mode == "truncated":
            text = text[: len(text) // 2]
        elif mode == "empty":
            text = ""
        if "write_bw_log" in opts:
            _write_logs(opts, bw, iops, p99, runtime_ms, reads, writes, scale)
    if output:
        with open(output, "w") as fh:
            fh.write(text)
    else:
        sys.stdout.write(text)
    if mode == "orphan":
        sys.stdout.flush()
        sys.stderr.flush()
        if os.fork() == 0:
            os.setsid()  # as fio 3.33's job processes do: out of fio's process group
            print(f"fakefio: job process {os.getpid()} still running", file=sys.stderr,
                  flush=True)
            time.sleep(60)
            os._exit(0)
        time.sleep(0.3)
        os.kill(os.getpid(), signal.SIGKILL)
    return 128 if mode == "signal" else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
