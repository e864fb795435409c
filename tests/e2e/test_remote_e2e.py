"""Remote drives (``--drive=fio://HOST[:PORT]/dev/X``) end to end, on components the tests start
(``tests/remote_lab.py``): ``fio --server`` on 127.0.0.2, 127.0.0.3 (and ``::1`` when ``lo`` has
IPv6) each serving a RAM-backed loop device, and an OpenSSH server on 127.0.0.1 reached through
an ssh config file the tests write (``$SSDQUAL_SSH_CONFIG``).

Shown: two "hosts" and a local loop device in one session, one xdist worker per drive, all
passing, remote figures within noise of the local drive's and the records and Allure results
grouped by host and drive; a server killed mid-workload breaks only that drive's test, at once,
with the reason; a server that stops answering times out and its job is stopped over SSH; the
drive lock is the host's own; without SSH a drive is read only unless its identity file and
``--confirm-destroy`` are given, the file is taken only when it names the host as the drive
value does (``--host-alias 127.0.0.2``), fio writes through the drive's by-id link and fails,
writing nothing, once the link is gone, and an older file is good for reads only. No fio is
left on either side. Needs root, fio, losetup,
``/usr/sbin/sshd``, ssh and ssh-keygen; skipped with the reason otherwise.
"""

from __future__ import annotations

import json
import mmap
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_ssdqual.drive.lock import DriveLock
from pytest_ssdqual.drive.remote_spec import host_id
from pytest_ssdqual.drive.remote_target import RemoteTarget, open_remote_target
from pytest_ssdqual.drive.spec import parse_drive_option
from pytest_ssdqual.drive.ssh import RemoteAccess
from pytest_ssdqual.errors import ConfigError, DeviceError, DriveInUse, FioError, FioTimeout
from pytest_ssdqual.fio.check import check_run
from pytest_ssdqual.fio.runner import FioRunner

from ..remote_lab import REPO, RemoteLab, fio_holding, ipv6_on_lo, missing_tools

pytestmark = pytest.mark.e2e

IMAGE_BYTES = 128 * 1024**2

SUITE = """
import pytest

def test_read(qualify):
    qualify("seq_read_128k_qd32")

@pytest.mark.destructive
def test_write(qualify):
    qualify("seq_write_128k_qd32")
"""

WRITE_ONLY = """
import pytest

@pytest.mark.destructive
def test_write(qualify):
    qualify("seq_write_128k_qd32")
"""


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RemoteLab]:
    why = missing_tools()
    if why:
        pytest.skip(why)
    addresses = ["127.0.0.2", "127.0.0.3"] + (["::1"] if ipv6_on_lo() else [])
    lab = RemoteLab(tmp_path_factory.mktemp("remote-lab"))
    try:
        lab.start(addresses, IMAGE_BYTES)
        yield lab
    finally:
        left = lab.stop()
    assert left == [], left  # no fio left holding any drive, on either side


def _confirm(*images: Path | None) -> list[str]:
    return [f"--confirm-destroy={image}" for image in images if image is not None]


def _pytest(lab: RemoteLab, folder: Path, suite: str, drives: list[str], *extra: str,
            env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "test_suite.py").write_text(suite)
    (folder / "limits.yaml").write_text("version: 1\nprofiles: []\n")
    argv = [sys.executable, "-m", "pytest", str(folder / "test_suite.py"), "-v",
            f"--rootdir={folder}", "-p", "no:cacheprovider", "--ssd-profile=smoke",
            f"--thresholds={folder / 'limits.yaml'}", f"--results-dir={folder / 'results'}",
            *(f"--drive={d}" for d in drives), *extra]
    return subprocess.Popen(argv, cwd=folder, env=env or lab.env(), text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)


def _records(folder: Path) -> dict[tuple[str, str], dict]:
    """(drive as given, workload) -> the stored record."""
    out = {}
    for path in (folder / "results").glob("*/*/*/record.json"):
        record = json.loads(path.read_text())
        out[(record["drive"], record["workload"])] = record
    return out


def test_two_hosts_and_a_local_drive_in_one_session(lab: RemoteLab, tmp_path: Path) -> None:
    first, second = list(lab.servers.values())[0], list(lab.servers.values())[-1]
    drives = [first.drive, second.drive, lab.local]
    proc = _pytest(lab, tmp_path, SUITE, drives, "-n", "3", f"--alluredir={tmp_path / 'al'}",
                   *_confirm(first.image, second.image, lab.local_image))
    out, _ = proc.communicate(timeout=120)
    assert proc.returncode == 0, out
    assert "6 passed" in out, out
    # one worker per drive: each drive's tests on one worker, three workers in all
    workers: dict[str, set[str]] = {}
    for worker, drive_id in re.findall(r"\[(gw\d)\] \[[ \d]+%\] PASSED \S+\[(\S+)\]", out):
        workers.setdefault(drive_id, set()).add(worker)
    assert len(workers) == 3 and all(len(w) == 1 for w in workers.values()), workers
    assert len(set().union(*workers.values())) == 3, workers
    assert set(workers) == {f"{host_id(s.address, s.port)}-{Path(s.device).name}"
                            for s in (first, second)} | {Path(lab.local).name}, workers
    records = _records(tmp_path)
    assert len(records) == 6, sorted(records)
    local_bw = {w: records[(lab.local, w)]["metrics"] for w in ("seq_read_128k_qd32",
                                                                  "seq_write_128k_qd32")}
    for server in (first, second):
        for workload, direction in (("seq_read_128k_qd32", "read"),
                                    ("seq_write_128k_qd32", "write")):
            record = records[(server.drive, workload)]
            metrics = record["metrics"]
            assert record["status"] == "passed"
            # same metrics as a local run, per-second logs included (came back from the server)
            assert set(metrics) == set(local_bw[workload]), (server.drive, workload)
            assert metrics[f"{direction}.iops_log_s"] >= 2
            ratio = metrics[f"{direction}.bw_mbps"] / local_bw[workload][f"{direction}.bw_mbps"]
            print(f"{server.drive} {workload}: {metrics[f'{direction}.bw_mbps']:.0f} MB/s, "
                  f"local {local_bw[workload][f'{direction}.bw_mbps']:.0f} MB/s, ratio "
                  f"{ratio:.2f}; p99 {metrics[f'{direction}.lat_p99_us']:.0f} us, local "
                  f"{local_bw[workload][f'{direction}.lat_p99_us']:.0f} us")
            # loose: the three drives run at once on this 2-core machine, where each remote
            # one also feeds a fio server and a client (measured: reads 0.51-0.60, writes
            # 1.04-1.21 of the local drive's)
            assert 0.4 <= ratio <= 2.5, (server.drive, workload, ratio)
            assert metrics[f"{direction}.lat_p99_us"] > 0
            # grouped by host and drive: the identity key names the host, the sources say how
            # the identity was read
            assert record["drive_slug"].startswith("fio_"), record["drive_slug"]
            sources = record["identity"]["sources"]
            assert any("over SSH" in s for s in sources), sources
    suites = set()
    for result in (tmp_path / "al").glob("*-result.json"):
        labels = {lb["name"]: lb["value"] for lb in json.loads(result.read_text())["labels"]}
        suites.add(labels["parentSuite"])
    assert len(suites) == 3, suites
    hosts = {f"on {s.address if ':' not in s.address else '[' + s.address + ']'}:{s.port}"
             for s in (first, second)}
    assert {h for h in hosts if any(h in suite for suite in suites)} == hosts, suites


def test_killed_server_breaks_only_its_drives_test(lab: RemoteLab, tmp_path: Path) -> None:
    keep, victim = lab.servers["127.0.0.2"], lab.servers["127.0.0.3"]
    proc = _pytest(lab, tmp_path, WRITE_ONLY, [keep.drive, victim.drive], "-n", "2",
                   *_confirm(keep.image, victim.image))
    # fio 3.33 turns the "," of its --client argument into a NUL in its own command line
    needle = re.compile(rf"--client=ip:{re.escape(victim.address)}[,\x00]{victim.port}\x00"
                        .encode())
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not _running(needle) and proc.poll() is None:
        time.sleep(0.1)
    if not _running(needle):
        proc.kill()
        pytest.fail("the victim's fio client never started:\n" + proc.communicate()[0])
    time.sleep(1.5)  # mid-workload: smoke runs 1 s ramp + 3 s
    killed = victim.kill()
    killed_at = time.monotonic()
    out, _ = proc.communicate(timeout=120)
    ended_s = time.monotonic() - killed_at
    try:
        assert len(killed) >= 3, killed  # listener, connection, backend (+ job)
        assert proc.returncode == 1, out
        assert "1 failed, 1 passed" in out, out
        records = _records(tmp_path)
        assert records[(keep.drive, "seq_write_128k_qd32")]["status"] == "passed"
        assert (victim.drive, "seq_write_128k_qd32") not in records  # broken: no figures
        victim_id = f"{host_id(victim.address, victim.port)}-{Path(victim.device).name}"
        assert f"FAILED test_suite.py::test_write[{victim_id}]" in out, out
        assert (f"FioError: {victim.drive} seq_write_128k_qd32: fio exited with status 1: fio "
                f"server {victim.address}:{victim.port}: connection lost or refused (client: "
                f"host={victim.address} disconnected)") in out, out
        assert re.search(r"^  broken seq_write_128k_qd32: FioError", out, re.MULTILINE), out
        assert ended_s < 15, ended_s  # at once, not at the workload's timeout
        assert fio_holding(victim.device) == [] and fio_holding(keep.device) == []
    finally:
        victim.start()


def _running(needle: re.Pattern[bytes]) -> bool:
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            if needle.search(cmdline.read_bytes()):
                return True
        except OSError:
            continue
    return False


def _access(lab: RemoteLab, **changes: object) -> RemoteAccess:
    env = lab.env()
    base = RemoteAccess(ssh_config=env["SSDQUAL_SSH_CONFIG"],
                        ssdqual_command=env["SSDQUAL_REMOTE_SSDQUAL"])
    return RemoteAccess(**{**base.__dict__, **changes})  # type: ignore[arg-type]


def test_lost_server_times_out_and_its_job_is_stopped_over_ssh(lab: RemoteLab,
                                                              tmp_path: Path) -> None:
    server = lab.servers["127.0.0.3"]
    target = open_remote_target(parse_drive_option(server.drive), _access(lab), ())
    assert isinstance(target, RemoteTarget) and target.ssh is not None
    job = (f"[w]\nfilename={target.fio_filename}\nrw=write\nbs=128k\niodepth=4\ndirect=1\n"
           "ioengine=libaio\ntime_based=1\nruntime=30\nsize=64m\n")
    stopper = threading.Timer(1.5, server.kill, args=(signal.SIGSTOP,))
    stopper.start()
    started = time.monotonic()
    try:
        with pytest.raises(FioTimeout) as info:
            FioRunner().run(job, workdir=tmp_path, name="w", timeout_s=5, readonly=False,
                            server=target.fio_server)
        took_s = time.monotonic() - started
        raw = info.value.raw_output or ""
        assert f"fio --client to the server 127.0.0.3:{server.port} ran 5 s" in str(info.value)
        assert re.search(r"stopped fio pid [\d, ]+ on 127\.0\.0\.3:\d+, still running on "
                         + re.escape(target.fio_filename), raw), raw
        assert took_s < 20, took_s
        left = fio_holding(server.device)
        assert left == [], [Path(f"/proc/{p}/stat").read_text() for p in left]
    finally:
        stopper.join()
        server.restart()


def test_the_drive_lock_is_the_hosts(lab: RemoteLab) -> None:
    server = lab.servers["127.0.0.2"]
    target = open_remote_target(parse_drive_option(server.drive), _access(lab), ())
    lock = target.make_lock("session-a")
    lock.acquire()
    try:
        name = Path(server.device).name
        with pytest.raises(DriveInUse, match=r"in use by another pytest-ssdqual run \(pid \d+"):
            DriveLock(name, label=server.device).acquire()  # a local run on that host
        with pytest.raises(DriveInUse, match=r"on 127\.0\.0\.2\): wait for it"):
            target.make_lock("session-b").acquire()  # another run driving it remotely
    finally:
        lock.release()
    local = DriveLock(Path(server.device).name, label=server.device)
    local.acquire()  # released: free again on the host
    local.release()
    # the drive's tools (health: smartctl, nvme-cli) run on the host too
    code, out = target.run_tool(["sh", "-c", "echo $LC_ALL; readlink -f " + server.device])
    assert (code, out.split()) == (0, ["C", server.device])
    with pytest.raises(FileNotFoundError, match="no-such-tool on 127.0.0.2"):
        target.run_tool(["no-such-tool", "-a"])


def test_without_ssh_a_remote_drive_is_read_only_unless_identified_and_confirmed(
        lab: RemoteLab, tmp_path: Path) -> None:
    server = lab.servers["127.0.0.2"]
    spec = parse_drive_option(server.drive)
    no_ssh = tmp_path / "no_ssh_config"  # ssh to a port nobody listens on
    no_ssh.write_text(lab.ssh_config.read_text().replace(f"Port {lab.ssh_port}", "Port 9"))
    with pytest.raises(DeviceError, match="no SSH access to 127.0.0.2 .*--remote-identity"):
        open_remote_target(spec, _access(lab, ssh_config=str(no_ssh)), ())
    # a file made without naming the host as the drive does (127.0.0.2 is loopback: not among
    # the host's own names) is refused, naming the file, its host, the host typed and the fix
    plain = _identity_file(server.device, tmp_path / "plain.json")
    with pytest.raises(ConfigError) as info:
        open_remote_target(spec, _access(lab, ssh_config=str(no_ssh),
                                         identity_files=(str(plain),)), (str(server.image),))
    assert f"{plain}: made on {socket.gethostname()}" in str(info.value)
    assert "not on 127.0.0.2" in str(info.value) and "--host-alias 127.0.0.2" in str(info.value.fix)
    ident = _identity_file(server.device, tmp_path / "identity.json", "--host-alias", "127.0.0.2")
    unconfirmed = open_remote_target(
        spec, _access(lab, ssh_config=str(no_ssh), identity_files=(str(ident),)), ())
    assert unconfirmed.ssh is None and unconfirmed.write_refusals
    assert "is not confirmed for destruction" in unconfirmed.write_refusals[0]
    assert f"file {ident} made on" in unconfirmed.identity.sources[-1]
    confirmed = open_remote_target(
        spec, _access(lab, ssh_config=str(no_ssh), identity_files=(str(ident),)),
        (str(server.image),))
    assert confirmed.write_refusals == ()
    # through the plugin: the read runs, the write is skipped with the refusal
    proc = _pytest(lab, tmp_path / "run", SUITE, [server.drive], f"--remote-identity={ident}",
                   "-rs", env=lab.env(SSDQUAL_SSH_CONFIG=str(no_ssh)))
    out, _ = proc.communicate(timeout=120)
    assert proc.returncode == 1, out  # a read-only run is not a qualification (INCOMPLETE)
    assert "1 passed, 1 skipped" in out and "INCOMPLETE: 1 write test(s) skipped" in out, out
    assert f"--confirm-destroy={server.image}" in out, out
    record = _records(tmp_path / "run")[(server.drive, "seq_read_128k_qd32")]
    assert any(s.startswith(f"identity source: file {ident}") for s in
               record["identity"]["sources"]), record["identity"]["sources"]


def _identity_file(device: str, path: Path, *args: str) -> Path:
    """``ssdqual identify --json [ARGS] DEVICE > PATH``, as the engineer runs it on the host."""
    made = subprocess.run([sys.executable, "-m", "pytest_ssdqual.cli", "identify", "--json",
                           *args, device], capture_output=True, text=True, check=True, cwd=REPO)
    path.write_text(made.stdout)
    return path


def _first_bytes(device: str) -> bytes:
    fd = os.open(device, os.O_RDONLY | os.O_DIRECT)
    try:
        buf = mmap.mmap(-1, 4096)
        os.readv(fd, [buf])
        return bytes(buf[:8])
    finally:
        os.close(fd)


def test_without_ssh_fio_writes_through_the_drives_by_id_link(lab: RemoteLab,
                                                               tmp_path: Path) -> None:
    """fio opens the drive's own /dev/disk/by-id link on the host (a loop device has none: the
    lab makes one, as udev would for a drive): another drive in the slot has another link, and
    fio's server fails to open it instead of writing that drive. A legacy file (no by_id, no
    host_names) is good for reads only."""
    server = lab.servers["127.0.0.2"]
    spec = parse_drive_option(server.drive)
    no_ssh = tmp_path / "no_ssh_config"
    no_ssh.write_text(lab.ssh_config.read_text().replace(f"Port {lab.ssh_port}", "Port 9"))
    ident = _identity_file(server.device, tmp_path / "identity.json", "--host-alias", "127.0.0.2")
    doc = json.loads(ident.read_text())
    assert doc["by_id"] is None and "127.0.0.2" in doc["host_names"]  # a loop device: no link
    by_id = tmp_path / "by-id"
    by_id.mkdir()
    link = by_id / "wwn-0x5000c500a1b2c3d4"
    link.symlink_to(server.device)
    ident.write_text(json.dumps({**doc, "by_id": str(link)}))
    access = _access(lab, ssh_config=str(no_ssh), identity_files=(str(ident),))
    target = open_remote_target(spec, access, (str(server.image),))
    assert target.fio_filename == str(link) and target.write_refusals == ()
    assert dict(target.report_facts)["drive re-check"].startswith(f"fio opens {link} on ")

    def write(pattern: str, name: str) -> None:
        job = (f"[w]\nfilename={target.fio_filename}\nrw=write\nbs=128k\niodepth=4\n"
               f"direct=1\nioengine=libaio\nsize=1m\nbuffer_pattern={pattern}\n")
        check_run(FioRunner().run(target.before_fio(job), workdir=tmp_path, name=name,
                                  timeout_s=60, readonly=False, server=target.fio_server),
                  expected_io_bytes=1024**2)  # as the session judges a run

    write("0x5a5a5a5a", "first")
    assert _first_bytes(server.device) == b"\x5a" * 8
    link.unlink()  # the drive left the slot: its link is gone (another drive has its own)
    with pytest.raises(FioError) as info:
        write("0xa5a5a5a5", "swapped")
    said = (info.value.raw_output or "") + str(info.value)
    assert "file creation disallowed by allow_file_create=0" in said, said
    assert _first_bytes(server.device) == b"\x5a" * 8  # not written
    assert not link.exists()  # and no regular file made in its place (fio's default)
    # a file of an older ssdqual: taken for reads, writes refused with the fix
    legacy = tmp_path / "legacy.json"
    legacy.write_text(json.dumps({k: v for k, v in doc.items()
                                  if k not in ("host_names", "by_id")}))
    old = open_remote_target(spec, _access(lab, ssh_config=str(no_ssh),
                                           identity_files=(str(legacy),)), (str(server.image),))
    assert old.fio_filename == server.device
    assert len(old.write_refusals) == 1 and "older ssdqual" in old.write_refusals[0]
    assert f"--host-alias 127.0.0.2 {server.device} > {legacy}" in old.write_refusals[0]
