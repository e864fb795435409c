"""The harness's benchmarks, one command: ``python -m benchmarks [PART ...] [--runs N]``
(``benchmarks/run.sh`` runs it with the checkout's .venv). Root is needed for the loop
devices, /dev/zram0 and the blkio caps (those parts are skipped with the reason otherwise).
Heavy parts run under ``flock /tmp/ssdqual-heavy.lock`` (a shared host: one heavy run at a
time). Results: one JSON line per measurement on stdout and in ``benchmarks/out/DATE.jsonl``;
BENCHMARKS.md quotes them (median and min-max of the runs; A/B ratios paired within a run).

Parts: ``startup``, ``overhead``, ``fidelity``, ``logs``, ``store``, ``drives4``, ``remote``
(default: all).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
PYTEST = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider"]
LOCK = "/tmp/ssdqual-heavy.lock"
OUT: list[dict[str, Any]] = []


def emit(**fields: Any) -> None:
    OUT.append(fields)
    print(json.dumps(fields), flush=True)


def spread(values: list[float]) -> dict[str, float]:
    """median, min, max of ``values``."""
    return {"median": round(statistics.median(values), 4), "min": round(min(values), 4),
            "max": round(max(values), 4), "n": len(values)}


def env(**extra: str) -> dict[str, str]:
    e = dict(os.environ, PYTHONPATH=str(REPO))
    e.update(extra)
    return e


def heavy(argv: list[str]) -> list[str]:
    """``argv`` under the heavy lock, unless this process holds it already."""
    if os.environ.get("SSDQUAL_HEAVY_LOCK_HELD") or not shutil.which("flock"):
        return argv
    return ["flock", LOCK, *argv]


@contextmanager
def ram_loop(size_mb: int = 320) -> Iterator[tuple[str, str]]:
    """A direct-I/O loop device over a file in /dev/shm: (device, backing file)."""
    folder = Path(tempfile.mkdtemp(prefix="ssdqual-bench-", dir="/dev/shm"))
    image = folder / "loop.img"
    with open(image, "wb") as fh:
        os.posix_fallocate(fh.fileno(), 0, size_mb << 20)
    dev = subprocess.run(["losetup", "-f", "--show", "--direct-io=on", str(image)],
                         check=True, capture_output=True, text=True).stdout.strip()
    try:
        yield dev, str(image)
    finally:
        subprocess.run(["losetup", "-d", dev], check=False)
        shutil.rmtree(folder, ignore_errors=True)


def clocked_pytest(args: list[str], out: Path, *, lock: bool = True) -> dict[str, Any]:
    """Run pytest with ``benchmarks.fio_clock`` (under the heavy lock); returns the merged
    clock: per test wall/fio/idle, launch->first fio, process wall."""
    shutil.rmtree(out, ignore_errors=True)
    script = ('import os,subprocess,sys,time;os.environ["SSDQUAL_BENCH_T0"]=repr(time.time());'
              't=time.perf_counter();rc=subprocess.call(sys.argv[1:]);'
              'print("WALL",time.perf_counter()-t,rc)')
    argv = [sys.executable, "-c", script, *PYTEST, "-p", "benchmarks.fio_clock", "-q", *args]
    proc = subprocess.run(heavy(argv) if lock else argv,
                          cwd=REPO, env=env(SSDQUAL_BENCH_OUT=str(out)), capture_output=True,
                          text=True)
    wall = float(re.findall(r"^WALL (\S+)", proc.stdout, re.M)[-1])
    tests: dict[str, Any] = {}
    first = []
    for path in out.glob("clock-*.json"):
        doc = json.loads(path.read_text())
        tests.update(doc["tests"])
        if doc["t_first_job"] and doc["t_launch"]:
            first.append((doc["t_first_fio"] - doc["t_launch"],
                          doc["t_first_job"] - doc["t_launch"]))
    return {"tests": tests, "wall_s": wall, "first": min(first) if first else None,
            "tail": proc.stdout[-400:]}


def overhead_figures(clock: dict[str, Any]) -> dict[str, float]:
    ran = [t for t in clock["tests"].values() if t["fio_runs"]]
    over = [t["wall_s"] - t["fio_s"] - t["idle_s"] for t in ran]
    runs = sum(t["fio_runs"] for t in ran)
    fio = sum(t["fio_s"] + t["idle_s"] for t in ran)
    return {"tests": len(ran), "fio_runs": runs,
            "in_test_ms_per_test": 1000 * sum(over) / len(ran),
            "in_test_ms_per_fio_run": 1000 * sum(over) / runs,
            "whole_run_ms_per_test": 1000 * (clock["wall_s"] - fio) / len(ran)}


def part_overhead(runs: int) -> None:
    """Per-test overhead: the smoke suites on a RAM loop device, fio clocked."""
    with ram_loop() as (dev, image):
        per = []
        for n in range(runs):
            clock = clocked_pytest(["suites/", f"--drive={dev}", f"--confirm-destroy={image}",
                                    "--ssd-profile=smoke", "--results-dir",
                                    str(Path(tempfile.gettempdir()) / "ssdqual-bench-results")],
                                   Path(tempfile.gettempdir()) / f"ssdqual-bench-clock{n}")
            figs = overhead_figures(clock)
            per.append(figs)
            emit(part="overhead", run=n, **{k: round(v, 2) for k, v in figs.items()})
        for key in ("in_test_ms_per_test", "in_test_ms_per_fio_run", "whole_run_ms_per_test"):
            emit(part="overhead", figure=key, **spread([p[key] for p in per]))


def part_startup(runs: int) -> None:
    """Launch -> first fio process and -> first workload fio; a bare pytest's launch -> test."""
    folder = Path(tempfile.mkdtemp(prefix="ssdqual-bench-start-"))
    (folder / "test_t.py").write_text(
        "import os, time\ndef test_t():\n    print('TT', time.time() - float(os.environ['T0']))\n")
    bare, fio_first, job_first = [], [], []
    for n in range(runs):
        out = subprocess.run([*PYTEST, "-q", "-s", "-p", "no:ssdqual", str(folder / "test_t.py")],
                             env=env(T0=repr(time.time())), capture_output=True, text=True)
        bare.append(float(re.findall(r"TT (\S+)", out.stdout)[0]))
        clock = clocked_pytest(["suites/test_random.py", "-k", "rand_read_4k_qd1",
                                f"--drive=file:{folder / 'scratch.img'}", "--ssd-profile=smoke",
                                f"--results-dir={folder / 'results'}"], folder / f"clock{n}",
                               lock=False)  # one light 4 s job: start-up is what is timed
        if clock["first"]:
            fio_first.append(clock["first"][0])
            job_first.append(clock["first"][1])
    emit(part="startup", figure="bare_pytest_to_test_s", **spread(bare))
    emit(part="startup", figure="to_first_fio_s", **spread(fio_first))
    emit(part="startup", figure="to_first_workload_fio_s", **spread(job_first))
    shutil.rmtree(folder, ignore_errors=True)


def _time_v(argv: list[str], **kw: Any) -> tuple[float, float, str]:
    """(seconds, peak RSS MB, stdout) of ``argv`` under /usr/bin/time -v."""
    proc = subprocess.run(["/usr/bin/time", "-v", *argv], capture_output=True, text=True, **kw)
    secs = re.search(r"Elapsed \(wall clock\) time.*: (?:(\d+):)?(\d+):([\d.]+)", proc.stderr)
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", proc.stderr)
    assert secs and rss, proc.stderr[-500:]
    h = float(secs.group(1) or 0)
    return h * 3600 + float(secs.group(2)) * 60 + float(secs.group(3)), int(rss.group(1)) / 1024, \
        proc.stdout


def part_logs(runs: int) -> None:
    """24-hour per-second logs (3 logs of 86,400 lines) and a 10M-line per-I/O latency log,
    read by ``read_series``; and, for reference, a 1M-line per-I/O log read one ``LogSample``
    per line (the reader before numpy, still the one of ``to_series``), once."""
    folder = Path(tempfile.mkdtemp(prefix="ssdqual-bench-logs-"))
    for kind, extra, repeat in (("per_second", [], runs), ("per_io", ["10000000"], runs),
                                ("per_io_per_line", ["1000000"], 1)):
        secs, rss = [], []
        for _ in range(repeat):
            res = subprocess.run([sys.executable, "-m", "benchmarks.fio_logs", kind,
                                  str(folder / f"{kind}{extra}"), *extra], env=env(), cwd=REPO,
                                 capture_output=True, text=True, timeout=3600)
            if res.returncode != 0:
                emit(part="logs", kind=kind, error=res.stderr[-300:])
                break
            doc = json.loads(res.stdout.splitlines()[-1])
            secs.append(doc["seconds"])
            rss.append(doc["peak_rss_mb"])
        if secs:
            emit(part="logs", kind=kind, lines=doc["lines"], windows=doc["windows"],
                 seconds=spread(secs), peak_rss_mb=spread(rss))
    shutil.rmtree(folder, ignore_errors=True)


def part_store(runs: int, template: str | None) -> None:
    """trend and compare on a store of 500 runs built through the results API."""
    if template is None:
        emit(part="store", skipped="give --template RUN_FOLDER (a stored run to copy)")
        return
    store = Path(tempfile.mkdtemp(prefix="ssdqual-bench-store-"))
    built = json.loads(subprocess.run([sys.executable, "-m", "benchmarks.store", template,
                                       str(store), "500"], env=env(), cwd=REPO, check=True,
                                      capture_output=True, text=True).stdout)
    emit(part="store", **built)
    ssdqual = [sys.executable, "-m", "pytest_ssdqual.cli"]
    for name, argv in (("trend", [*ssdqual, "trend", "--workload", "seq_write_128k_qd32",
                                  "--metric", "write.bw_mbps", "--results-dir", str(store)]),
                       ("compare", [*ssdqual, "compare", built["first"], built["last"],
                                    "--results-dir", str(store)])):
        secs, rss = [], []
        for _ in range(runs):
            s, r, _out = _time_v(argv, env=env(), cwd=REPO)
            secs.append(s)
            rss.append(r)
        emit(part="store", command=name, seconds=spread(secs), peak_rss_mb=spread(rss))
    shutil.rmtree(store, ignore_errors=True)


def part_fidelity(runs: int) -> None:
    """Plugin IOPS / raw fio IOPS on the same job file, paired A/B, on a RAM loop and zram."""
    for where in ("loop", "zram"):
        with (ram_loop() if where == "loop" else zram()) as (dev, serial):
            if dev is None:
                emit(part="fidelity", device=where, skipped=serial)
                continue
            ratios, raw = [], []
            for _ in range(runs):
                work = Path(tempfile.mkdtemp(prefix="ssdqual-bench-fid-"))
                res = subprocess.run(heavy([*PYTEST, "-q", "suites/test_random.py", "-k",
                                            "rand_read_4k_qd32", f"--drive={dev}",
                                            f"--confirm-destroy={serial}",
                                            "--ssd-profile=smoke", f"--results-dir={work}",
                                            f"--basetemp={work / 'tmp'}"]),
                                     cwd=REPO, env=env(), capture_output=True, text=True)
                jobs = sorted((work / "tmp").rglob("rand_read_4k_qd32.fio"))
                outs = sorted((work / "tmp").rglob("rand_read_4k_qd32.json"))
                if res.returncode != 0 or not jobs or not outs:
                    emit(part="fidelity", device=where, error=res.stdout[-400:])
                    break
                plugin_iops = json.loads(outs[0].read_text())["jobs"][0]["read"]["iops"]
                rawp = subprocess.run(heavy(["fio", "--output-format=json", "--readonly",
                                             str(jobs[0])]), capture_output=True, text=True,
                                      cwd=jobs[0].parent)
                raw_iops = json.loads(rawp.stdout[rawp.stdout.index("{"):]
                                      )["jobs"][0]["read"]["iops"]
                ratios.append(plugin_iops / raw_iops)
                raw.append(raw_iops)
                shutil.rmtree(work, ignore_errors=True)
            if ratios:
                emit(part="fidelity", device=where, plugin_over_raw=spread(ratios),
                     raw_iops=spread(raw),
                     raw_spread_pct=round(100 * (max(raw) - min(raw)) / statistics.median(raw),
                                          1))


@contextmanager
def zram() -> Iterator[tuple[str | None, str]]:
    """/dev/zram0 sized 512 MiB under /tmp/zram0.lock, or (None, reason)."""
    z = Path("/sys/block/zram0")
    if not z.exists():
        yield None, "no /dev/zram0 (modprobe zram)"
        return
    with open("/tmp/zram0.lock", "a") as lock:
        import fcntl
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (z / "disksize").read_text().strip() != "0":
            yield None, "/dev/zram0 already in use"
            return
        (z / "disksize").write_text("512M")
        try:
            yield "/dev/zram0", "zram0"  # a zram device is confirmed by its name
        finally:
            (z / "reset").write_text("1")


def part_drives4(runs: int) -> None:
    """One vs four loop devices, each write-capped at 50 MB/s by a blkio cgroup, -n 4: the
    smoke sequential write once a test, and four times (``--repeat 4``: the same start-up)."""
    blkio = Path("/sys/fs/cgroup/blkio")
    if not (blkio / "blkio.throttle.write_bps_device").exists():
        emit(part="drives4", skipped="no cgroup-v1 blkio throttling here")
        return
    group = blkio / f"ssdqual-bench-{os.getpid()}"
    group.mkdir()
    loops = [ram_loop(256) for _ in range(4)]
    devs = [cm.__enter__() for cm in loops]
    try:
        for dev, _ in devs:
            st = os.stat(dev)
            (group / "blkio.throttle.write_bps_device").write_text(
                f"{os.major(st.st_rdev)}:{os.minor(st.st_rdev)} {50 * 10**6}")
        for repeat in (1, 4):  # --repeat 4: four fio runs a test, the same start-up
            walls: dict[int, list[float]] = {1: [], 4: []}
            for _ in range(runs):
                for count in (1, 4):
                    args = [*PYTEST, "-q", "suites/test_sequential.py", "-k", "write",
                            "--ssd-profile=smoke", f"--fio-cgroup={group}", "-n", str(count),
                            f"--repeat={repeat}", "--results-dir",
                            str(Path(tempfile.gettempdir()) / "ssdqual-bench-n4")]
                    args += [a for dev, img in devs[:count]
                             for a in (f"--drive={dev}", f"--confirm-destroy={img}")]
                    t0 = time.perf_counter()
                    proc = subprocess.run(heavy(args), cwd=REPO, env=env(),
                                          capture_output=True, text=True)
                    wall = time.perf_counter() - t0
                    passed = re.findall(r"(\d+) passed", proc.stdout)
                    if proc.returncode != 0 or not passed or int(passed[-1]) != count:
                        # a wall time of a failed or empty run measures nothing
                        emit(part="drives4", drives=count, error=proc.stdout[-600:])
                        return
                    emit(part="drives4", drives=count, repeat=repeat, wall_s=round(wall, 2))
                    walls[count].append(wall)
            pairs = [b / a for a, b in zip(walls[1], walls[4], strict=True)]
            emit(part="drives4", repeat=repeat, one_s=spread(walls[1]),
                 four_s=spread(walls[4]), four_over_one=spread(pairs))
    finally:
        for cm in loops:
            cm.__exit__(None, None, None)
        group.rmdir()


#: The remote part's workloads: sequential bandwidth both ways and a QD1 latency.
REMOTE_WORKLOADS = ("seq_read_128k_qd32", "seq_write_128k_qd32", "rand_read_4k_qd1")
REMOTE_METRICS = {"seq_read_128k_qd32": "read.bw_mbps", "seq_write_128k_qd32": "write.bw_mbps",
                  "rand_read_4k_qd1": "read.lat_p99_us"}


def _remote_run(lab: Any, drive: str, image: Path, work: Path) -> tuple[float, dict[str, float]]:
    """One pytest run of ``REMOTE_WORKLOADS`` on ``drive``: (wall seconds, workload -> the
    figure of ``REMOTE_METRICS``), from the stored records."""
    shutil.rmtree(work, ignore_errors=True)
    argv = [*PYTEST, "-q", "suites/test_sequential.py", "suites/test_random.py", "-k",
            " or ".join(REMOTE_WORKLOADS), "--ssd-profile=smoke", f"--drive={drive}",
            f"--confirm-destroy={image}", f"--results-dir={work}"]
    t0 = time.perf_counter()
    proc = subprocess.run(argv, cwd=REPO, env=lab.env(), capture_output=True, text=True)
    wall = time.perf_counter() - t0
    figures = {}
    for path in work.glob("*/*/*/record.json"):
        record = json.loads(path.read_text())
        if record.get("workload") in REMOTE_METRICS:
            figures[record["workload"]] = record["metrics"][REMOTE_METRICS[record["workload"]]]
    if proc.returncode != 0 or set(figures) != set(REMOTE_WORKLOADS):
        raise RuntimeError(f"{drive}: exit {proc.returncode}, records {sorted(figures)}: "
                           + proc.stdout[-600:])
    return wall, figures


def part_remote(runs: int) -> None:
    """A remote drive over loopback (``fio --server`` on 127.0.0.2 serving a RAM loop device,
    identity and safety over SSH to a local sshd: ``tests/remote_lab.py``) against the same
    loop device given locally, paired run by run (local first, then remote)."""
    sys.path.insert(0, str(REPO))
    from tests.remote_lab import RemoteLab, missing_tools
    why = missing_tools()
    if why:
        emit(part="remote", skipped=why)
        return
    lab = RemoteLab(Path(tempfile.mkdtemp(prefix="ssdqual-bench-remote-")))
    try:
        lab.start(["127.0.0.2"], 256 * 1024**2)
        server = lab.servers["127.0.0.2"]
        walls: dict[str, list[float]] = {"local": [], "remote": []}
        ratios: dict[str, list[float]] = {w: [] for w in REMOTE_WORKLOADS}
        for n in range(runs):
            got = {}
            for where, drive in (("local", server.device), ("remote", server.drive)):
                wall, figures = _remote_run(lab, drive, server.image,
                                            lab.folder / f"results-{where}-{n}")
                walls[where].append(wall)
                got[where] = figures
                emit(part="remote", run=n, where=where, wall_s=round(wall, 2),
                     **{w: round(v, 1) for w, v in figures.items()})
            for w in REMOTE_WORKLOADS:
                ratios[w].append(got["remote"][w] / got["local"][w])
        emit(part="remote", local_wall_s=spread(walls["local"]),
             remote_wall_s=spread(walls["remote"]),
             remote_over_local_wall=spread([r / a for a, r in zip(walls["local"],
                                                                  walls["remote"],
                                                                  strict=True)]),
             **{f"remote_over_local_{w}_{REMOTE_METRICS[w].split('.')[1]}": spread(v)
                for w, v in ratios.items()})
    except RuntimeError as exc:
        emit(part="remote", error=str(exc))
    finally:
        left = lab.stop()
        if left:
            emit(part="remote", left_behind=left)
        shutil.rmtree(lab.folder, ignore_errors=True)


PARTS: dict[str, Callable[..., None]] = {
    "startup": part_startup, "overhead": part_overhead, "fidelity": part_fidelity,
    "logs": part_logs, "store": part_store, "drives4": part_drives4, "remote": part_remote}
ROOT_PARTS = {"overhead", "fidelity", "drives4", "remote"}


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.split("\n")[0])
    ap.add_argument("parts", nargs="*", default=list(PARTS), choices=[*PARTS, []])
    ap.add_argument("--runs", type=int, default=3, help="repeats of each figure (default 3)")
    ap.add_argument("--template", help="a stored run folder the 500-run store copies")
    args = ap.parse_args(argv)
    if (set(args.parts) & ROOT_PARTS and not os.environ.get("SSDQUAL_HEAVY_LOCK_HELD")
            and shutil.which("flock")):  # one lock for the whole run: A/B pairs side by side
        return subprocess.call(["flock", LOCK, "env", "SSDQUAL_HEAVY_LOCK_HELD=1",
                                sys.executable, "-m", "benchmarks", *argv], cwd=REPO)
    emit(part="host", date=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
         cpus=os.cpu_count(), load=Path("/proc/loadavg").read_text().split()[:3],
         kernel=os.uname().release, fio=subprocess.run(["fio", "--version"], capture_output=True,
                                                       text=True).stdout.strip())
    for name in args.parts:
        if name in ROOT_PARTS and os.geteuid() != 0:
            emit(part=name, skipped="needs root (loop devices, zram, blkio caps)")
            continue
        if name == "store":
            part_store(args.runs, args.template)
        else:
            PARTS[name](args.runs)
    out = REPO / "benchmarks" / "out"
    out.mkdir(exist_ok=True)
    (out / time.strftime("%Y%m%dT%H%M%SZ.jsonl", time.gmtime())).write_text(
        "".join(json.dumps(o) + "\n" for o in OUT))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
