"""The results store many hosts share (``--results-db``) on a PostgreSQL cluster these tests
start themselves (``tests/pg_cluster.py``, once per module; a new database per test).

Each "host" is a pytest process with a results folder of its own and the fio stand-in
(``FAKEFIO_BW_MBPS`` sets its bandwidth): two write to one database at once, then a third with
an empty folder -- the other two's folders removed -- gates on their baseline and reads them
with ``ssdqual trend`` / ``compare`` / ``runs`` / ``rejudge``.
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_ssdqual.errors import ConfigError
from pytest_ssdqual.results.pg_index import SCHEMA_VERSION, PgIndex
from pytest_ssdqual.results.run_folder import StoredRun, new_run_id
from pytest_ssdqual.results.store import ResultsStore

from ..conftest import REPO, FakeFio, limits_yaml, qual_args, write_suite
from ..pg_cluster import PgCluster, pg_bin, pg_cluster

psycopg = pytest.importorskip("psycopg") if not os.environ.get("CI") else __import__("psycopg")

SUITE = """
import pytest

@pytest.mark.destructive
def test_write(qualify):
    qualify("seq_write_128k_qd32")
"""
LIMITS = limits_yaml({"seq_write_128k_qd32": {"bw_mbps": {"min": 100}}}, max_drop_pct=5)
_names = itertools.count()


@pytest.fixture(scope="module")
def cluster() -> Iterator[PgCluster]:
    found = pg_bin()
    if found is None:
        if os.environ.get("CI"):
            pytest.fail("PostgreSQL server binaries not found (scripts/setup.sh installs the "
                        "postgresql package)")
        pytest.skip("PostgreSQL server binaries not found: apt-get install postgresql")
    with pg_cluster(found) as running:
        yield running


@pytest.fixture
def db(cluster: PgCluster) -> str:
    """The URL of a new, empty database."""
    return cluster.createdb(f"t{os.getpid()}_{next(_names)}")


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    write_suite(tmp_path, SUITE, LIMITS)
    return tmp_path


def _pytest(suite: Path, fake: FakeFio, results: Path, bw: str, *extra: str
            ) -> subprocess.Popen[str]:
    """A pytest process: a 'host' with its own results folder."""
    env = dict(os.environ, FAKEFIO_BW_MBPS=bw, FAKEFIO_LOG=str(fake.log))
    env.pop("SSDQUAL_RESULTS_DB", None)
    args = qual_args(suite, suite / "limits.yaml", fake.path, f"--results-dir={results}",
                     *extra, drives=(f"{results.name}.img",))
    return subprocess.Popen([sys.executable, "-m", "pytest", *args, str(suite)],
                            cwd=suite, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)


def _done(proc: subprocess.Popen[str]) -> tuple[int, str]:
    out, _ = proc.communicate(timeout=180)
    return proc.returncode, out


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "SSDQUAL_RESULTS_DB"}
    return subprocess.run([sys.executable, "-m", "pytest_ssdqual.cli", *args], env=env,
                          capture_output=True, text=True, timeout=120, cwd=REPO)


def test_two_hosts_write_at_once_and_a_third_gates_on_their_baseline_and_reads_them(
    suite: Path, fake_fio: FakeFio, db: str, tmp_path: Path
) -> None:
    host_a, host_b, host_c = (tmp_path / n for n in ("host-a", "host-b", "host-c"))
    procs = [_pytest(suite, fake_fio, host_a, "500", f"--results-db={db}", "--firmware=A"),
             _pytest(suite, fake_fio, host_b, "505", f"--results-db={db}", "--firmware=A")]
    for code, out in map(_done, procs):
        assert code == 0, out
    index = PgIndex.open(db)
    [run_a] = [StoredRun.load(p) for p in ResultsStore(host_a).complete_runs()]
    [run_b] = [StoredRun.load(p) for p in ResultsStore(host_b).complete_runs()]
    assert index.run_ids() == {run_a.run_id, run_b.run_id}  # none lost, none twice
    stored = {r.run_id: r for r in index.fetch_runs()}
    for local in (run_a, run_b):  # the records as the folders hold them, and where they are
        assert stored[local.run_id].info == local.info
        assert stored[local.run_id].records == local.records
        assert stored[local.run_id].path == local.path
    rows = index.query("SELECT run_id, value FROM metrics WHERE metric = ? ORDER BY value",
                       ["write.bw_mbps"])
    assert [(r["run_id"], r["value"]) for r in rows] == [(run_a.run_id, 500.0),
                                                          (run_b.run_id, 505.0)]
    latest = max((run_a, run_b), key=lambda r: (r.info["started_utc"], r.run_id))

    for folder in (host_a, host_b):  # the records come from the database alone
        for path in folder.iterdir():
            path.rename(tmp_path / f"gone-{folder.name}-{path.name}")
    code, out = _done(_pytest(suite, fake_fio, host_c, "400", f"--results-db={db}",
                              "--firmware=B", "--baseline=firmware:A"))
    assert code == 1, out
    base_bw = latest.records[0]["metrics"]["write.bw_mbps"]
    assert f"write.bw_mbps 400 vs {base_bw:g} on A" in out, out
    [run_c] = [StoredRun.load(p) for p in ResultsStore(host_c).complete_runs()]
    regression = run_c.records[0]["regression"]
    assert regression["baseline_run"] == latest.run_id
    assert regression["baseline_path"] == str(latest.path)
    assert regression["baseline_metrics"]["write.bw_mbps"] == latest.records[0]["metrics"][
        "write.bw_mbps"]

    empty = tmp_path / "empty"  # a command on yet another folder reads every host's runs
    common = ["--results-db", db, "--results-dir", str(empty)]
    trend = _cli("trend", "--workload", "seq_write_128k_qd32", "--metric", "bw_mbps", *common)
    assert trend.returncode == 0, trend.stderr
    assert "| A | 2 | 502 | 500 | 505 |" in trend.stdout, trend.stdout
    assert f"| B | 1 | 400 | 400 | 400 | \u221220.4 % (worse) | {run_c.run_id} |" in trend.stdout
    compare = _cli("compare", run_a.run_id, run_c.run_id, "--format=json", *common)
    assert compare.returncode == 0, compare.stderr
    bw = next(d for d in json.loads(compare.stdout)["deltas"] if d["metric"] == "write.bw_mbps")
    assert (bw["a"], bw["b"]) == (500, 400)
    runs = _cli("runs", "--format=json", *common)
    assert runs.returncode == 0, runs.stderr
    listed = json.loads(runs.stdout)["runs"]
    assert [r["run_id"] for r in listed] == [run_c.run_id, latest.run_id,
                                             ({run_a.run_id, run_b.run_id} - {latest.run_id}
                                              ).pop()]
    assert [r["verdict"] for r in listed] == ["FAIL", "PASS", "PASS"]
    rejudge = _cli("rejudge", run_a.run_id, "--thresholds", str(suite / "limits.yaml"), *common)
    assert rejudge.returncode == 0 and "run PASSES" in rejudge.stdout, rejudge.stdout


def test_concurrent_pushes_never_lose_or_duplicate_a_run(
    suite: Path, fake_fio: FakeFio, db: str, tmp_path: Path
) -> None:
    code, out = _done(_pytest(suite, fake_fio, tmp_path / "made", "500", "--firmware=A"))
    assert code == 0, out
    [template] = [StoredRun.load(p) for p in ResultsStore(tmp_path / "made").complete_runs()]
    shared = [_copy(template, new_run_id()) for _ in range(4)]  # every pusher pushes these
    own = [[_copy(template, new_run_id()) for _ in range(3)] for _ in range(6)]
    index = PgIndex.open(db)
    start = threading.Barrier(6)
    added: list[bool] = []

    def pusher(mine: list[StoredRun]) -> None:
        start.wait()
        for run in [*shared, *mine]:
            added.append(PgIndex(db).put_run(run))

    threads = [threading.Thread(target=pusher, args=(mine,)) for mine in own]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert added.count(True) == 4 + 18 and added.count(False) == 5 * 4
    assert index.run_ids() == {r.run_id for r in [*shared, *itertools.chain(*own)]}
    counts = index.query("SELECT r.run_id, count(*) AS n FROM records r GROUP BY r.run_id")
    assert {row["n"] for row in counts} == {len(template.records)} and len(counts) == 22
    metrics = index.query("SELECT count(*) AS n FROM metrics")[0]["n"]
    assert metrics == 22 * sum(len(r["metrics"]) for r in template.records)


def _copy(run: StoredRun, run_id: str) -> StoredRun:
    return StoredRun(run.path.with_name(run_id), {**run.info, "run_id": run_id},
                     [{**r, "run_id": run_id} for r in run.records])


def test_sync_pushes_local_runs_once_and_a_db_lost_mid_run_leaves_the_folder_complete(
    suite: Path, fake_fio: FakeFio, db: str, tmp_path: Path, cluster: PgCluster
) -> None:
    local = tmp_path / "lab-host"
    for bw in ("500", "510"):  # made before the lab had a database
        code, out = _done(_pytest(suite, fake_fio, local, bw, "--firmware=A"))
        assert code == 0, out
    first = _cli("sync", "--results-db", db, "--results-dir", str(local))
    assert first.returncode == 0, first.stderr
    assert "2 run(s) pushed" in first.stdout and "0 already there" in first.stdout
    again = _cli("sync", "--results-db", db, "--results-dir", str(local))
    assert "0 run(s) pushed" in again.stdout and "2 already there" in again.stdout, again.stdout
    assert len(PgIndex.open(db).run_ids()) == 2

    # the database goes away while a run measures: the folder is complete, the run says so
    name = db.rsplit("/", 1)[1]
    (suite / "test_zz_lose_db.py").write_text(
        "import psycopg\n\ndef test_lose_db():\n"
        f"    with psycopg.connect({cluster.socket_url('postgres')!r}, autocommit=True) as c:\n"
        f"        c.execute('ALTER DATABASE \"{name}\" ALLOW_CONNECTIONS false')\n")
    proc = _pytest(suite, fake_fio, local, "520", f"--results-db={db}", "--firmware=A")
    code, out = _done(proc)
    assert code == 1, out
    flat = " ".join(out.split())
    assert "was NOT written to the results database" in flat, out
    assert f"ssdqual sync --results-db '{db}' --results-dir {local}" in flat, out
    runs = ResultsStore(local).complete_runs()
    assert len(runs) == 3 and StoredRun.load(runs[-1]).records  # complete and readable
    with psycopg.connect(cluster.socket_url("postgres"), autocommit=True) as conn:
        conn.execute(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS true')
    pushed = _cli("sync", "--results-db", db, "--results-dir", str(local))
    assert f"pushed {runs[-1].name}" in pushed.stdout and "2 already there" in pushed.stdout
    assert len(PgIndex.open(db).run_ids()) == 3


def test_an_unreachable_database_is_a_usage_error_naming_it_without_the_password(
    suite: Path, fake_fio: FakeFio, tmp_path: Path, cluster: PgCluster
) -> None:
    from ..pg_cluster import free_port

    url = f"postgresql://lab:s3cret@127.0.0.1:{free_port()}/ssdqual"
    code, out = _done(_pytest(suite, fake_fio, tmp_path / "r", "500", f"--results-db={url}"))
    assert code == 4, out
    flat = " ".join(out.split())
    assert "cannot reach the results database postgresql://lab@127.0.0.1:" in flat, out
    assert "Connection refused" in flat and "fix: start the database" in flat, out
    assert "s3cret" not in out and "Traceback" not in out
    assert fake_fio.calls() == []  # refused before any I/O
    for command in (["runs"], ["trend", "--workload", "w", "--metric", "m"]):
        done = _cli(*command, "--results-db", url)
        assert done.returncode == 4 and "cannot reach the results database" in done.stderr
        assert "s3cret" not in done.stderr
    bad = _cli("runs", "--results-db", "mysql://x@y/z")
    assert bad.returncode == 4 and "is not a PostgreSQL database" in bad.stderr
    missing = subprocess.run(
        [sys.executable, "-c", "import sys; sys.modules['psycopg'] = None\n"
         "from pytest_ssdqual.cli.main import main\n"
         f"sys.exit(main(['runs', '--results-db', {cluster.url('x')!r}]))"],
        capture_output=True, text=True, timeout=60, cwd=REPO)
    assert missing.returncode == 4, missing.stderr
    assert "pip install 'pytest-ssdqual[lab]'" in missing.stderr


def test_a_database_of_another_schema_version_is_refused_with_the_fix(
    suite: Path, fake_fio: FakeFio, db: str, tmp_path: Path
) -> None:
    PgIndex.open(db)
    with psycopg.connect(db, autocommit=True) as conn:
        conn.execute("UPDATE ssdqual.meta SET value = '99' WHERE key = 'schema_version'")
    with pytest.raises(ConfigError) as err:
        PgIndex.open(db)
    assert (f"holds schema version 99; this pytest-ssdqual reads and writes version "
            f"{SCHEMA_VERSION}: refusing it") in str(err.value)
    code, out = _done(_pytest(suite, fake_fio, tmp_path / "r", "500", f"--results-db={db}"))
    assert code == 4 and "schema version 99" in out and "fix: install on this host" in " ".join(
        out.split()), out
    with psycopg.connect(db, autocommit=True) as conn:  # nothing was altered
        assert conn.execute("SELECT value FROM ssdqual.meta WHERE key = 'schema_version'"
                            ).fetchone() == ("99",)


def test_a_record_round_trips_with_figures_json_cannot_hold(db: str, tmp_path: Path) -> None:
    """JSONB has no NaN or Infinity and a run's figures may be either (a metric fio could not
    compute): they come back as floats, as the folder holds them; a 128-bit counter too."""
    run_id = new_run_id()
    record = {"drive": "/dev/x", "workload": "seq_write_128k_qd32", "status": "passed",
              "facts": {"model": "M", "firmware": "A", "capacity_bytes": 128 * 10**9},
              "metrics": {"write.bw_mbps": float("nan"), "write.iops": float("inf"),
                          "data_units_written": 2**100},
              "spread_pct": {}, "repeat": 1}
    info = {"run_id": run_id, "started_utc": "2026-12-01T00:00:00Z", "passed": True,
            "profile": "smoke", "host": {"host": "rack7"}, "drives": []}
    index = PgIndex.open(db)
    assert index.put_run(StoredRun(tmp_path / run_id, info, [record]))
    back = index.fetch_run(run_id)
    assert back is not None and back.info == info and back.path == tmp_path / run_id
    metrics = back.records[0]["metrics"]
    assert metrics["write.bw_mbps"] != metrics["write.bw_mbps"]  # NaN
    assert metrics["write.iops"] == float("inf") and metrics["data_units_written"] == 2**100
    rows = index.query("SELECT metric, value FROM metrics ORDER BY metric")
    assert [r["metric"] for r in rows] == ["data_units_written", "write.bw_mbps", "write.iops"]
    assert rows[0]["value"] == float(2**100) and rows[2]["value"] == float("inf")
    assert index.query("SELECT host, path FROM runs") == [{"host": "rack7",
                                                          "path": str(tmp_path / run_id)}]
