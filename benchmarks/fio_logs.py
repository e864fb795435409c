"""Synthetic fio logs in fio 3.33's log format (fio HOWTO, "Log File Formats"), and the time
and peak memory the harness takes to read them (``fio.logs.read_series``).

``per_second``: a 24-hour run's per-second log (``log_avg_msec=1000``): 86,400 lines
``t_ms, value, direction, 0, 0`` stamped a few ms late as fio does. ``per_io``: a latency log
without averaging (one line per I/O: ``t_ms, lat_ns, direction, bs, offset``), 10 million
lines by default.

Run one measurement in a fresh process (peak RSS is the process's own, ``getrusage``; a
missing log is written first by another process, so that writing it is not in the peak)::

    python -m benchmarks.fio_logs per_second FOLDER      # prints one JSON line
    python -m benchmarks.fio_logs per_io FOLDER [LINES]
    python -m benchmarks.fio_logs per_io_per_line FOLDER [LINES]   # the per-line reader
"""

from __future__ import annotations

import json
import random
import resource
import sys
import time
from pathlib import Path


def write_per_second(folder: Path, kind: str, seconds: int = 86_400) -> Path:
    """``folder/log_<kind>.1.log``: ``seconds`` per-second write lines (bw in KiB/s, iops, or
    lat in ns), stamped 0-3 ms late."""
    rng = random.Random(1)
    base = {"bw": 900_000, "iops": 7_000, "lat": 140_000}[kind]
    path = folder / f"log_{kind}.1.log"
    with path.open("w") as fh:
        for s in range(1, seconds + 1):
            fh.write(f"{s * 1000 + rng.randint(0, 3)}, {int(base * rng.uniform(0.8, 1.2))}, "
                     "1, 0, 0\n")
    return path


def write_per_io(folder: Path, lines: int = 10_000_000, iops: int = 50_000) -> Path:
    """``folder/log_lat.1.log``: ``lines`` per-I/O read latencies (ns) at ``iops``, 4 KiB
    random offsets, one line per I/O as fio writes without ``log_avg_msec``."""
    rng = random.Random(2)
    path = folder / "log_lat.1.log"
    chunk = []
    with path.open("w") as fh:
        for i in range(lines):
            chunk.append(f"{i * 1000 // iops}, {rng.randint(60_000, 400_000)}, 0, 4096, "
                         f"{rng.randrange(0, 1 << 30, 4096)}\n")
            if len(chunk) == 100_000:
                fh.write("".join(chunk))
                chunk.clear()
        fh.write("".join(chunk))
    return path


def measure(kind: str, folder: Path, lines: int) -> dict[str, object]:
    """Read the logs in ``folder`` as the harness does and return seconds and peak RSS."""
    from pytest_ssdqual.fio.logs import find_logs, read_log, read_series, to_series

    t0 = time.perf_counter()
    if kind == "per_second":
        n = [len(read_series(folder, k, "write", window_ms=1000)) for k in ("bw", "iops", "lat")]
    elif kind == "per_io_per_line":  # one LogSample per line, as read_series did before numpy
        n = [len(to_series([read_log(p) for p in find_logs(folder, "lat")], "lat", "read"))]
    else:
        n = [len(read_series(folder, "lat", "read"))]
    seconds = time.perf_counter() - t0
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"kind": kind, "lines": lines, "windows": n, "seconds": round(seconds, 3),
            "peak_rss_mb": round(peak_mb, 1)}


def main(argv: list[str]) -> int:
    kind, folder = argv[0], Path(argv[1])
    folder.mkdir(parents=True, exist_ok=True)
    if kind == "write":  # write the logs of the next argument's kind
        if argv[2] == "per_second":
            for k in ("bw", "iops", "lat"):
                write_per_second(folder, k)
        else:
            write_per_io(folder, int(argv[3]) if len(argv) > 3 else 10_000_000)
        return 0
    lines = 86_400 if kind == "per_second" else int(argv[2]) if len(argv) > 2 else 10_000_000
    wanted = ("bw", "iops", "lat") if kind == "per_second" else ("lat",)
    if not all((folder / f"log_{k}.1.log").exists() for k in wanted):
        import subprocess
        subprocess.run([sys.executable, "-m", "benchmarks.fio_logs", "write", str(folder),
                        "per_second" if kind == "per_second" else "per_io", str(lines)],
                       check=True)
    print(json.dumps(measure(kind, folder, lines)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
