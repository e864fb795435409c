"""The results store: run folders, the SQLite index, concurrent writers, killed writers, a
corrupt index rebuilt from the folders.

Writers run in separate processes (multiprocessing, spawn) like pytest-xdist workers and
parallel pytest sessions do; a killed writer is SIGKILLed at a chosen point (just before the
rename that publishes its folder or its ``run.json``).
"""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest

from pytest_ssdqual.errors import ConfigError
from pytest_ssdqual.results.run_folder import (
    INDEX_NAME,
    RUN_FILE,
    StoredRun,
    StoreError,
    drive_slug,
    new_run_id,
)
from pytest_ssdqual.results.store import ResultsStore

SPAWN = multiprocessing.get_context("spawn")


def _record(drive: str, workload: str, bw: float, firmware: str = "A",
            model: str = "Model X") -> dict[str, Any]:
    return {
        "drive": drive,
        "workload": workload,
        "facts": {"controller": "JMF667H", "nand": "L85C", "firmware": firmware, "model": model,
                  "serial": f"SN-{drive_slug(drive)}", "capacity_bytes": 128 * 10**9,
                  "transport": "SATA", "kind": "block"},
        "metrics": {"write.bw_mbps": bw, "write.iops": bw * 1e6 / 131072},
        "spread_pct": {},
        "repeat": 1,
        "status": "passed",
    }


def _write_run(root: str, run_id: str, drives: list[str], bw: float, firmware: str = "A",
               passed: bool = True) -> None:
    store = ResultsStore(root)
    Path(root).mkdir(parents=True, exist_ok=True)
    job = Path(root) / f".job-{run_id}.fio"
    job.write_text("[global]\nrw=write\n")
    for drive in drives:
        for workload in ("seq_write_128k_qd32", "rand_write_4k_qd32", "rand_write_4k_qd1"):
            store.write_workload(run_id, _record(drive, workload, bw, firmware),
                                 [{"job.fio": job, "fio-stderr.txt": ""}])
    store.finish_run(run_id, {"run_id": run_id, "started_utc": run_id[:16], "profile": "smoke",
                              "passed": passed, "exitstatus": 0 if passed else 1})
    job.unlink()


def _writer(root: str, index: int, runs: int) -> None:
    for n in range(runs):
        run_id = f"20261130T1000{index:02d}Z-{n:06x}"
        _write_run(root, run_id, [f"/dev/sd{chr(97 + index)}"], 100.0 + index * 10 + n)


def _worker(root: str, run_id: str, drive: str) -> None:  # an xdist worker: workloads only
    store = ResultsStore(root)
    for workload in ("seq_read_128k_qd32", "rand_read_4k_qd32"):
        store.write_workload(run_id, _record(drive, workload, 300.0), [])


def _killed_before(root: str, run_id: str, what: str, ready: Any) -> None:
    """Write a run, but stop forever just before the rename of ``what`` (a workload folder or
    run.json); the parent SIGKILLs this process there."""
    import pytest_ssdqual.results.store as store_module

    name = "replace" if what == RUN_FILE else "rename"
    real = getattr(os, name)

    def stop(src: Any, dst: Any) -> None:
        if what in str(dst):
            ready.set()
            time.sleep(600)
        real(src, dst)

    setattr(store_module.os, name, stop)
    _write_run(root, run_id, ["/dev/sdz"], 50.0)


def _run_ids(store: ResultsStore) -> list[str]:
    return [r["run_id"] for r in store.query("SELECT run_id FROM runs ORDER BY run_id")]


def test_a_run_round_trips_through_folders_and_index(tmp_path: Path) -> None:
    store = ResultsStore(tmp_path / "results")
    run_id = new_run_id()
    _write_run(str(store.root), run_id, ["/dev/sdb", "file:/tmp/x.img"], 470.0)
    run = StoredRun.load(store.run_dir(run_id))
    assert run.run_id == run_id and run.passed and run.profile == "smoke"
    assert [d["drive"] for d in run.drives] == ["/dev/sdb", "file:/tmp/x.img"]
    assert run.drives[0]["firmware"] == "A" and run.drives[0]["passed"] is True
    assert set(run.records_of("/dev/sdb")) == {
        "seq_write_128k_qd32", "rand_write_4k_qd32", "rand_write_4k_qd1"}
    rep = store.run_dir(run_id) / "dev_sdb" / "seq_write_128k_qd32" / "rep1"
    assert (rep / "job.fio").read_text() == "[global]\nrw=write\n"
    rows = store.query(
        "SELECT value FROM metrics WHERE model = ? AND controller = ? AND nand = ? AND "
        "firmware = ? AND workload = ? AND metric = ?",
        ("Model X", "JMF667H", "L85C", "A", "seq_write_128k_qd32", "write.bw_mbps"),
    )
    assert [r["value"] for r in rows] == [470.0, 470.0]
    assert store.latest_passing(firmware="A", model="Model X", controller="JMF667H",
                                nand="L85C") == store.run_dir(run_id)
    assert store.latest_passing(firmware="B", model="Model X", controller="JMF667H",
                                nand="L85C") is None
    conn = sqlite3.connect(store.root / INDEX_NAME)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    conn.close()


def test_a_workload_stored_twice_keeps_both(tmp_path: Path) -> None:
    store = ResultsStore(tmp_path)
    first = store.write_workload("20261130T100000Z-000001", _record("/dev/sdb", "w", 1.0))
    second = store.write_workload("20261130T100000Z-000001", _record("/dev/sdb", "w", 2.0))
    assert first.name == "w" and second.name == "w~2"


def test_latest_passing_run_skips_failed_runs_and_other_drives(tmp_path: Path) -> None:
    root = str(tmp_path)
    _write_run(root, "20261130T100000Z-000001", ["/dev/sdb"], 470.0, firmware="A")
    _write_run(root, "20261130T110000Z-000002", ["/dev/sdb"], 480.0, firmware="A")
    _write_run(root, "20261130T120000Z-000003", ["/dev/sdb"], 300.0, firmware="A", passed=False)
    store = ResultsStore(root)
    found = store.latest_passing(firmware="A", model="Model X", controller="JMF667H", nand="L85C")
    assert found is not None and found.name == "20261130T110000Z-000002"
    assert store.latest_passing(firmware="A", model="Other", controller="JMF667H",
                                nand="L85C") is None
    assert store.latest_passing(firmware="A", model="Model X", controller="JMF667H",
                                nand="L85C", profile="quick") is None


def test_concurrent_writers_from_several_processes(tmp_path: Path) -> None:
    root = str(tmp_path / "results")
    procs = [SPAWN.Process(target=_writer, args=(root, i, 3)) for i in range(4)]
    # plus two "xdist workers" writing the same run, completed by a "controller" afterwards
    shared = "20261130T110000Z-abcdef"
    procs += [SPAWN.Process(target=_worker, args=(root, shared, d)) for d in ("/dev/sdx",
                                                                             "/dev/sdy")]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    store = ResultsStore(root)
    store.finish_run(shared, {"run_id": shared, "started_utc": "2026-11-30T11:00:00Z",
                              "profile": "smoke", "passed": True})
    ids = _run_ids(store)
    assert len(ids) == 4 * 3 + 1
    for i in range(4):  # every writer's figures landed, under the stable key
        rows = store.query(
            "SELECT value FROM metrics m JOIN drives d ON d.run_id = m.run_id "
            "WHERE d.drive = ? AND m.metric = 'write.bw_mbps' AND m.workload = "
            "'seq_write_128k_qd32' ORDER BY m.run_id", (f"/dev/sd{chr(97 + i)}",))
        assert [r["value"] for r in rows] == [100.0 + i * 10 + n for n in range(3)]
    shared_run = StoredRun.load(store.run_dir(shared))
    assert sorted(d["drive"] for d in shared_run.drives) == ["/dev/sdx", "/dev/sdy"]
    assert len(shared_run.records) == 4
    leftovers = [p for p in Path(root).rglob(".tmp-*")]
    assert leftovers == []
    assert store.query("PRAGMA quick_check")[0][0] == "ok"


@pytest.mark.parametrize("stop_at", ["seq_write_128k_qd32", RUN_FILE])
def test_a_writer_killed_mid_write_leaves_earlier_runs_intact(tmp_path: Path,
                                                              stop_at: str) -> None:
    root = str(tmp_path / "results")
    earlier = "20261130T090000Z-000001"
    _write_run(root, earlier, ["/dev/sdb"], 470.0)
    before = {p: p.read_bytes() for p in Path(root, earlier).rglob("*") if p.is_file()}
    ready = SPAWN.Event()
    killed_run = "20261130T100000Z-00dead"
    proc = SPAWN.Process(target=_killed_before, args=(root, killed_run, stop_at, ready))
    proc.start()
    assert ready.wait(60), "the writer never reached the rename"
    os.kill(proc.pid, signal.SIGKILL)
    proc.join(10)
    assert proc.exitcode == -signal.SIGKILL

    store = ResultsStore(root)
    after = {p: p.read_bytes() for p in Path(root, earlier).rglob("*") if p.is_file()}
    assert after == before  # not a byte of the earlier run changed
    assert StoredRun.load(store.run_dir(earlier)).records_of("/dev/sdb")[
        "seq_write_128k_qd32"]["metrics"]["write.bw_mbps"] == 470.0
    assert _run_ids(store) == [earlier]  # the killed run is never indexed ...
    with pytest.raises(StoreError, match="incomplete"):  # ... nor usable as a baseline
        store.load(killed_run)
    assert not (store.run_dir(killed_run) / RUN_FILE).exists()
    published = [p.parent.name for p in store.run_dir(killed_run).glob("*/[!.]*/record.json")]
    if stop_at != RUN_FILE:
        assert published == []  # the folder being assembled is only a .tmp-* leftover
    assert store.rebuild_index() == 1


def test_a_corrupt_index_is_rebuilt_from_the_run_folders(tmp_path: Path) -> None:
    root = tmp_path / "results"
    for n, fw in enumerate(("A", "B", "C")):
        _write_run(str(root), f"20261130T10000{n}Z-00000{n}", ["/dev/sdb"], 400.0 + n, fw)
    store = ResultsStore(root)
    assert len(_run_ids(store)) == 3
    (root / INDEX_NAME).write_bytes(b"this is not a database" * 100)
    for suffix in ("-wal", "-shm"):
        (root / f"{INDEX_NAME}{suffix}").unlink(missing_ok=True)
    ids = _run_ids(store)  # any query notices and rebuilds
    assert ids == [f"20261130T10000{n}Z-00000{n}" for n in range(3)]
    rows = store.query("SELECT firmware, value FROM metrics WHERE metric = 'write.bw_mbps' AND "
                       "workload = 'seq_write_128k_qd32' ORDER BY run_id")
    assert [(r["firmware"], r["value"]) for r in rows] == [("A", 400.0), ("B", 401.0),
                                                           ("C", 402.0)]
    kept = list(root.glob(f"{INDEX_NAME}.corrupt-*"))
    assert len(kept) == 1 and kept[0].read_bytes().startswith(b"this is not a database")


def _health(drive: str, label: str, temperature_c: float, firmware: str) -> dict[str, Any]:
    record = _record(drive, "health", 0.0, firmware)
    record["metrics"] = {"temperature_c": temperature_c}
    record["states"] = {"temperature_c": label}
    return record


def test_drive_health_readings_are_indexed_one_series_per_reading(tmp_path: Path) -> None:
    """Index schema 1 filed every health record of a drive under ``health``: the session-end
    reading replaced the start's (one row per run, drive, workload and metric), and ``ssdqual
    trend`` showed whichever came last. An index of schema 1 is rebuilt, not kept as corrupt."""
    from pytest_ssdqual.results.trend import trend_points

    root = tmp_path / "results"
    store = ResultsStore(root)
    for n, fw in enumerate(("A", "B")):
        run_id = f"20261130T10000{n}Z-00000{n}"
        for label, temp in (("session start", 30.0 + n), ("session end", 50.0 + n)):
            store.write_workload(run_id, _health("/dev/sdb", label, temp, fw))
        store.finish_run(run_id, {"run_id": run_id, "started_utc": run_id[:16],
                                  "profile": "smoke", "passed": True, "exitstatus": 0})
    rows = store.query("SELECT firmware, workload, value FROM metrics WHERE metric = "
                       "'temperature_c' ORDER BY run_id, workload")
    assert [tuple(r) for r in rows] == [
        ("A", "health @ session end", 50.0), ("A", "health @ session start", 30.0),
        ("B", "health @ session end", 51.0), ("B", "health @ session start", 31.0)]
    points = trend_points(store, model="*", workload="health @ session end",
                          metric="temperature_c")
    assert [(p.firmware, p.values) for p in points] == [("A", [50.0]), ("B", [51.0])]
    with pytest.raises(ConfigError, match="no stored figure of health temperature_c") as exc:
        trend_points(store, model="*", workload="health", metric="temperature_c")
    assert "--workload 'health @ session end'" in str(exc.value)
    # an index of the former schema is rebuilt from the folders, not set aside as corrupt
    with sqlite3.connect(root / INDEX_NAME) as conn:
        conn.execute("PRAGMA user_version = 1")
        conn.execute("DELETE FROM metrics")  # (what it held is of no use: rebuilt)
    conn.close()
    assert len(store.query("SELECT * FROM metrics WHERE workload = 'health @ session end'")) == 2
    assert list(root.glob(f"{INDEX_NAME}.corrupt-*")) == []


def test_runs_copied_in_are_indexed_and_a_deleted_index_comes_back(tmp_path: Path) -> None:
    other = tmp_path / "ci-artifact"
    _write_run(str(other), "20261130T080000Z-0000aa", ["/dev/sdb"], 470.0)
    store = ResultsStore(tmp_path / "results")
    _write_run(str(store.root), "20261130T090000Z-0000bb", ["/dev/sdb"], 460.0)
    (store.root / "20261130T080000Z-0000aa").mkdir()
    for f in (other / "20261130T080000Z-0000aa").rglob("*"):
        target = store.root / f.relative_to(other)
        if f.is_dir():
            target.mkdir(parents=True, exist_ok=True)
        else:
            target.write_bytes(f.read_bytes())
    assert store.sync() == ["20261130T080000Z-0000aa"]
    (store.root / INDEX_NAME).unlink()
    assert _run_ids(store) == ["20261130T080000Z-0000aa", "20261130T090000Z-0000bb"]


def test_resolve_names_an_unknown_run_and_reads_a_run_folder_anywhere(tmp_path: Path) -> None:
    _write_run(str(tmp_path / "elsewhere"), "20261130T080000Z-0000aa", ["/dev/sdb"], 1.0)
    store = ResultsStore(tmp_path / "results")
    folder = tmp_path / "elsewhere" / "20261130T080000Z-0000aa"
    assert store.resolve(str(folder)) == folder
    with pytest.raises(StoreError, match="no run 'nope'"):
        store.resolve("nope")
    bad = tmp_path / "bad" / "20261130T080000Z-0000ab"
    bad.mkdir(parents=True)
    (bad / RUN_FILE).write_text("{not json")
    with pytest.raises(StoreError, match="unreadable"):
        StoredRun.load(bad)
    assert json.loads((folder / RUN_FILE).read_text())["run_id"] == folder.name


def test_run_ids_have_microseconds_and_sort_by_start_within_one_second(tmp_path: Path) -> None:
    import datetime as dt

    moment = dt.datetime(2026, 11, 30, 10, 15, 0, 123456, tzinfo=dt.UTC)
    run_id = new_run_id(moment)
    assert run_id.startswith("20261130T101500.123456Z-") and len(run_id) == 30
    # ids made in the same second sort by start time, whatever their random suffixes
    ids = [new_run_id(moment + dt.timedelta(microseconds=n)) for n in range(50)]
    assert sorted(ids) == ids
    root = tmp_path / "results"
    old = "20261130T101459Z-ffffff"  # an id of an older version: still a run, still sorted
    for rid, bw in ((ids[1], 200.0), (ids[0], 100.0), (old, 50.0)):
        _write_run(str(root), rid, ["/dev/sdb"], bw)
    store = ResultsStore(root)
    assert [p.name for p in store.run_folders()] == [old, ids[0], ids[1]]
    assert store.resolve(old).name == old
    # same started_utc (second resolution): the later id wins
    latest = store.latest_passing(firmware="A", model="Model X", controller="JMF667H",
                                  nand="L85C")
    assert latest is not None and latest.name == ids[1]


def test_trend_refuses_a_selection_that_mixes_nand_or_capacity_and_says_how_to_narrow_it(
    tmp_path: Path
) -> None:
    """Formerly ``trend --model '*JMF667H*'`` charted three reference boards -- firmware built
    per flash type (SVN417w for L85C, SVN418a for A19 128 GB, SVN423a for A19 240 GB) -- as one
    firmware series, so NAND differences read as firmware changes."""
    from pytest_ssdqual.results.trend import Selection, parse_capacity_gb, trend_points

    store = ResultsStore(tmp_path / "results")
    boards = [("L85C", 128, "SVN417w", 155.0), ("A19", 128, "SVN418a", 327.0),
              ("A19", 240, "SVN423a", 470.0)]
    for n, (nand, gb, firmware, bw) in enumerate(boards):
        run_id = f"20261130T10000{n}Z-00000{n}"
        record = _record("/dev/sdb", "seq_write_128k_qd32", bw, firmware,
                         model=f"JMicron JMF667H {gb}GB reference ({nand})")
        record["facts"] |= {"nand": nand, "capacity_bytes": int(gb * 1.0003e9)}
        store.write_workload(run_id, record)
        store.finish_run(run_id, {"run_id": run_id, "started_utc": run_id[:16],
                                  "profile": "smoke", "passed": True, "exitstatus": 0})
    args = {"workload": "seq_write_128k_qd32", "metric": "write.bw_mbps"}
    with pytest.raises(ConfigError) as exc:
        trend_points(store, model="*JMF667H*", **args)
    text = str(exc.value)
    assert ("the selection (model '*JMF667H*') mixes 3 drive types: controller JMF667H, NAND "
            "A19, 128 GB: firmware SVN418a (1 run(s)); controller JMF667H, NAND A19, 240 GB: "
            "firmware SVN423a (1 run(s)); controller JMF667H, NAND L85C, 128 GB: firmware "
            "SVN417w (1 run(s))") in text
    assert ("narrow it to one, e.g. --controller JMF667H --nand A19 --capacity-gb 128 or "
            "--controller JMF667H --nand A19 --capacity-gb 240 or --controller JMF667H --nand "
            "L85C --capacity-gb 128") in text
    # the same NAND at two capacities (firmware SVN418a vs SVN423a) is refused as well
    with pytest.raises(ConfigError, match="mixes 2 drive types"):
        trend_points(store, selection=Selection(controller="JMF667H", nand="a19"), **args)
    # one board: its own firmware only
    one = Selection(controller="JMF667H", nand="A19", capacity_gb=parse_capacity_gb("128"))
    assert [(p.firmware, p.values) for p in trend_points(store, selection=one, **args)] == [
        ("SVN418a", [327.0])]
    ranged = Selection(nand="A19", capacity_gb=parse_capacity_gb("235-245"))
    assert [p.firmware for p in trend_points(store, selection=ranged, **args)] == ["SVN423a"]
    assert [p.firmware for p in trend_points(store, model="*(L85C)", **args)] == ["SVN417w"]
    with pytest.raises(ConfigError, match="neither a capacity nor a range"):
        parse_capacity_gb("130-120")
