"""Tests of the twin behaviours as pure logic on ``ThrottleController``: caps
by transfer size and queue depth (through job shapes), SLC and dirty sizes in % of the image,
fragmentation, the copy factor, recovery as a rate; the job-shape parser and channel; model
file errors for the new keys. Time is given by the test; no kernel, no fio."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from pytest_ssdqual.emulate.blkio import THROTTLE_FILES, BlkioThrottle
from pytest_ssdqual.emulate.controller import run_loop
from pytest_ssdqual.emulate.model import DriveModel
from pytest_ssdqual.emulate.model_file import load_model
from pytest_ssdqual.emulate.shape import (
    JobShape,
    parse_job_shapes,
    shapes_from_json,
    shapes_to_json,
)
from pytest_ssdqual.emulate.state import IoCounters, ThrottleController
from pytest_ssdqual.errors import ConfigError, ConfigErrors

MIB = 2**20
IMAGE = 256 * MIB

HEAD = """\
version: 1
identity: {model: Twin demo, serial: T1, firmware: F1, capacity_bytes: 128GB,
           controller: EMU, nand: MLC}
"""

TWIN = HEAD + """\
caps: {read_bw_mbps: 600, write_bw_mbps: 500}
transfer_caps:
  read: {4k: 90, 128k: 556, 1m: 556}
  write: {4k: 80, 128k: 155, 8m: 160}
qd_iops:
  read: {1: 8400, 32: 60000}
  write: {1: 9000, 32: 38000}
"""


def load(tmp_path: Path, text: str, name: str = "m.yaml") -> DriveModel:
    path = tmp_path / name
    path.write_text(text)
    return load_model(path)


def job(rw: str, bs: str = "4k", iodepth: int = 1, numjobs: int = 1, extra: str = "") -> str:
    return (f"[global]\nioengine=libaio\ndirect=1\nfilename=/dev/loop9\n\n[{rw}_{bs}]\n"
            f"rw={rw}\nbs={bs}\niodepth={iodepth}\nnumjobs={numjobs}\n{extra}")


def shape(rw: str, bs: str = "4k", iodepth: int = 1, numjobs: int = 1) -> tuple[JobShape, ...]:
    return parse_job_shapes(job(rw, bs, iodepth, numjobs))


class Clock:
    """Feeds a controller counters at 100 ms steps: writes at a rate, or idle."""

    def __init__(self, controller: ThrottleController) -> None:
        self.c = controller
        self.t = 0.0
        self.read = self.written = self.ios = 0
        controller.step(0.0, IoCounters())

    def write(self, nbytes: int, seconds: float = 1.0) -> None:
        steps = max(1, round(seconds / 0.1))
        for _ in range(steps):
            self.t += 0.1
            self.written += nbytes // steps
            self.ios += 1
            self.c.step(self.t, IoCounters(self.read, self.written, self.ios))

    def reads(self, nbytes: int, seconds: float = 1.0) -> None:
        steps = max(1, round(seconds / 0.1))
        for _ in range(steps):
            self.t += 0.1
            self.read += nbytes // steps
            self.ios += 1
            self.c.step(self.t, IoCounters(self.read, self.written, self.ios))

    def idle(self, seconds: float) -> None:
        for _ in range(round(seconds / 0.1)):
            self.t += 0.1
            self.c.step(self.t, IoCounters(self.read, self.written, self.ios))


# -- job shapes --------------------------------------------------------------------------------

def test_parse_job_shapes_inherits_global_and_reads_pairs_mixes_and_stonewalls() -> None:
    text = ("; comment\n[global]\nbs=128k\niodepth=4\n\n[copy_read]\nrw=read\n\n"
            "[copy_write]\nrw=write\nbs=4k,1m\nnumjobs=2\n\n[mix]\nstonewall\nrw=randrw\n"
            "rwmixread=70\niodepth=32\n")
    read, write, mix = parse_job_shapes(text)
    assert (read.rw, read.bs_read, read.iodepth, read.numjobs, read.read_pct, read.group) == (
        "read", 131072, 4, 1, 100.0, 0)
    assert (write.bs_read, write.bs_write, write.outstanding, write.read_pct, write.group) == (
        4096, 2**20, 8, 0.0, 0)
    assert (mix.random, mix.read_pct, mix.outstanding, mix.group) == (True, 70.0, 32, 1)
    assert mix.does("read") and mix.does("write") and not read.does("write")


def test_shape_messages_round_trip_and_bad_lines_raise() -> None:
    shapes = shape("randread", "4k", 8, 4)
    assert shapes_from_json(shapes_to_json(7, shapes)) == (7, shapes)
    with pytest.raises(ValueError, match="not a job-shape message"):
        shapes_from_json('{"seq": 1}')


# -- transfer_caps and qd_iops ----------------------------------------------------------------

def test_transfer_caps_by_bs_for_sequential_jobs_log_log_interpolated_and_clamped(
        tmp_path: Path) -> None:
    c = ThrottleController(load(tmp_path, TWIN))
    assert c.caps().read_bw_mbps == 600  # no job shape yet: the fresh caps only
    assert c.set_shape(shape("read", "1m", 4)).read_bw_mbps == pytest.approx(556)
    assert c.set_shape(shape("read", "4k", 4)).read_bw_mbps == pytest.approx(90)
    assert c.set_shape(shape("read", "512", 4)).read_bw_mbps == pytest.approx(90)  # clamped
    expected_32k = math.exp(math.log(90) + 3 / 5 * (math.log(556) - math.log(90)))
    assert c.set_shape(shape("read", "32k", 4)).read_bw_mbps == pytest.approx(expected_32k)
    assert c.set_shape(shape("write", "8m", 4)).write_bw_mbps == pytest.approx(160)
    assert c.set_shape(shape("write", "16m", 4)).write_bw_mbps == pytest.approx(160)
    # A random job is not held by the transfer curve (its IOPS come from qd_iops).
    assert c.set_shape(shape("randread", "4k", 32)).read_bw_mbps == 600


def test_qd_iops_by_outstanding_ios_for_random_jobs(tmp_path: Path) -> None:
    c = ThrottleController(load(tmp_path, TWIN))
    assert c.set_shape(shape("randread", "4k", 1)).read_iops == pytest.approx(8400)
    assert c.set_shape(shape("randread", "4k", 32)).read_iops == pytest.approx(60000)
    assert c.set_shape(shape("randread", "4k", 8, 4)).read_iops == pytest.approx(60000)
    qd4 = math.exp(math.log(8400) + 2 / 5 * (math.log(60000) - math.log(8400)))
    assert c.set_shape(shape("randread", "4k", 4)).read_iops == pytest.approx(qd4)
    assert c.set_shape(shape("randwrite", "4k", 32)).write_iops == pytest.approx(38000)
    assert c.set_shape(shape("read", "4k", 32)).read_iops is None  # sequential: by transfer size


def test_speed_scales_the_curves(tmp_path: Path) -> None:
    c = ThrottleController(load(tmp_path, TWIN).with_speed(0.5))
    assert c.set_shape(shape("read", "1m", 4)).read_bw_mbps == pytest.approx(278)
    assert c.set_shape(shape("randread", "4k", 1)).read_iops == pytest.approx(4200)


# -- sizes in % of the image --------------------------------------------------------------------

def test_slc_size_pct_scales_with_the_image(tmp_path: Path) -> None:
    m = load(tmp_path, TWIN + "slc_cache: {size_pct: 50, write_bw_mbps: 60, "
                              "idle_flush_mbps: 100}\n")
    c = ThrottleController(m, IMAGE)
    assert c.slc_bytes == 128 * MIB
    assert ThrottleController(m, 4 * IMAGE).slc_bytes == 512 * MIB
    clock = Clock(c)
    c.set_shape(shape("write", "128k", 4))
    clock.write(127 * MIB)
    assert c.caps().write_bw_mbps == pytest.approx(155)  # still in the cache
    clock.write(2 * MIB)
    assert c.caps().write_bw_mbps == pytest.approx(60)  # full: post-cache
    c.set_shape(shape("read", "1m", 4))
    clock.idle(0.4)
    assert c.cache_full  # not yet 0.5 s without writes
    clock.idle(1.0)  # 1.4 s without writes at 100 MB/s: ~140 MB out
    assert c.cache_used_bytes < 128 * MIB - 100e6
    with pytest.raises(ValueError, match="size_pct needs the emulated capacity"):
        ThrottleController(m)


def test_dirty_after_write_pct_scales_with_the_image(tmp_path: Path) -> None:
    m = load(tmp_path, TWIN + "dirty: {after_write_pct: 150, write_iops: 9000}\n")
    c = ThrottleController(m, IMAGE)
    assert c.dirty_after_bytes == 384 * MIB
    clock = Clock(c)
    c.set_shape(shape("randwrite", "4k", 32))
    clock.write(383 * MIB)
    assert c.caps().write_iops == pytest.approx(38000)
    clock.write(2 * MIB)
    assert c.dirty and c.caps().write_iops == pytest.approx(9000)


def test_dirty_random_writes_only_counts_random_writes_and_not_sequential_ones(
        tmp_path: Path) -> None:
    m = load(tmp_path, TWIN + "dirty: {after_write_pct: 100, random_writes_only: true, "
                              "write_iops: 9000}\nrecovery: {clean_mbps: 100}\n")
    assert m.dirty is not None and m.dirty.random_writes_only
    c = ThrottleController(m, IMAGE)
    clock = Clock(c)
    c.set_shape(shape("write", "128k", 32))  # sequential overwrites: 4 x the image
    clock.write(4 * IMAGE, seconds=4)
    assert not c.dirty and c.written_since_clean_bytes == 0
    c.set_shape(shape("randwrite", "4k", 32))
    clock.write(IMAGE - MIB)
    assert not c.dirty
    clock.write(2 * MIB)
    assert c.dirty and c.caps().write_iops == pytest.approx(9000)
    clock.idle(1.5)  # 1 s of idle counted: 100 MB cleaned of 256 MiB
    lift = c.lift_pct
    assert 0 < lift < 100
    c.set_shape(shape("write", "128k", 32))  # sequential writes do not undo the recovery
    clock.write(2 * IMAGE, seconds=2)
    assert c.lift_pct == lift
    # without the key every write counts (the default)
    d = ThrottleController(load(tmp_path, TWIN + "dirty: {after_write_pct: 100, "
                                               "write_iops: 9000}\n", "d.yaml"), IMAGE)
    dclock = Clock(d)
    d.set_shape(shape("write", "128k", 32))
    dclock.write(IMAGE + MIB)
    assert d.dirty


def test_size_bytes_and_size_pct_together_is_an_error_naming_key_and_fix(tmp_path: Path) -> None:
    path = tmp_path / "both.yaml"
    path.write_text(TWIN + "slc_cache: {size_bytes: 1GiB, size_pct: 10, write_bw_mbps: 60}\n"
                    "dirty: {write_iops: 9000}\n")
    with pytest.raises(ConfigErrors) as info:
        load_model(path)
    by_key = {e.key: str(e) for e in info.value.errors}
    assert "exactly one of size_bytes and size_pct" in by_key["slc_cache"]
    assert "exactly one of after_write_bytes and after_write_pct" in by_key["dirty"]
    assert str(path) in by_key["slc_cache"] and "% of the emulated capacity" in by_key["dirty"]


# -- fragmentation ------------------------------------------------------------------------------

FRAG = TWIN + ("fragmentation: {after_random_write_pct: 50, seq_write_factor: 0.6, "
               "seq_read_factor: 0.9}\n")


def test_fragmentation_after_random_writes_slows_sequential_jobs_until_rewritten(
        tmp_path: Path) -> None:
    c = ThrottleController(load(tmp_path, FRAG), IMAGE)
    clock = Clock(c)
    c.set_shape(shape("write", "128k", 32))
    clock.write(IMAGE)  # sequential writes do not fragment
    assert not c.fragmented
    c.set_shape(shape("randwrite", "4k", 32))
    clock.write(127 * MIB)
    assert not c.fragmented
    clock.write(2 * MIB)
    assert c.fragmented
    assert c.caps().write_iops == pytest.approx(38000)  # random jobs: not slowed
    assert c.set_shape(shape("read", "128k", 32)).read_bw_mbps == pytest.approx(0.9 * 556)
    assert c.set_shape(shape("write", "128k", 32)).write_bw_mbps == pytest.approx(0.6 * 155)
    clock.write(IMAGE - MIB)
    assert c.fragmented  # not yet the whole image rewritten in order
    clock.write(2 * MIB)
    assert not c.fragmented and c.caps().write_bw_mbps == pytest.approx(155)


def test_fragmentation_needs_the_image_size(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="fragmentation needs"):
        ThrottleController(load(tmp_path, FRAG))


# -- copy ---------------------------------------------------------------------------------------

COPY_JOB = ("[global]\nioengine=libaio\nbs=131072\niodepth=1\n\n[copy_read]\nrw=read\n"
            "offset=0\n\n[copy_write]\nrw=write\noffset=67108864\n")


def test_copy_factor_when_one_job_reads_and_writes_at_once(tmp_path: Path) -> None:
    c = ThrottleController(load(tmp_path, TWIN + "copy: {concurrent_factor: 0.4}\n"))
    both = c.set_shape(parse_job_shapes(COPY_JOB))
    assert both.read_bw_mbps == pytest.approx(0.4 * 556)
    assert both.write_bw_mbps == pytest.approx(0.4 * 155)
    alone = c.set_shape(shape("read", "128k", 1))
    assert alone.read_bw_mbps == pytest.approx(556)
    stonewalled = COPY_JOB.replace("[copy_write]\n", "[copy_write]\nstonewall\n")
    assert c.set_shape(parse_job_shapes(stonewalled)).read_bw_mbps == pytest.approx(556)


# -- recovery as a rate -------------------------------------------------------------------------

RATE = TWIN + "dirty: {after_write_pct: 100, write_iops: 9000}\nrecovery: {clean_mbps: 100}\n"


@pytest.mark.parametrize("image", [IMAGE, 4 * IMAGE])
def test_recovery_rate_lifts_by_the_cleaned_share_and_scales_with_the_image(
        tmp_path: Path, image: int) -> None:
    c = ThrottleController(load(tmp_path, RATE), image)
    clock = Clock(c)
    c.set_shape(shape("randwrite", "4k", 32))
    clock.write(image + MIB, seconds=2)
    assert c.dirty and c.caps().write_iops == pytest.approx(9000)
    half_s = image / 2 / 100e6
    clock.idle(half_s + 0.5)  # the first 0.5 s counts once the stretch is long enough
    assert 20 < c.lift_pct < 100
    assert c.lift_pct == pytest.approx(100 * 100e6 * c.idle_credit_s / image)
    assert c.caps().write_iops == pytest.approx(9000 + 0.01 * c.lift_pct * (38000 - 9000))
    clock.idle(half_s + 0.2)
    assert not c.dirty and c.caps().write_iops == pytest.approx(38000)


def test_recovery_rate_collects_garbage_while_the_host_only_reads_before_and_after_dirty(
        tmp_path: Path) -> None:
    # 0.8 x the image of random writes, 2 s of reads (all of it counted, once 0.5 s long:
    # 200 MB cleaned), then
    # 0.8 x the image again: not dirty; the same writes back to back are.
    c = ThrottleController(load(tmp_path, RATE), IMAGE)
    clock = Clock(c)
    c.set_shape(shape("randwrite", "4k", 32))
    clock.write(int(0.8 * IMAGE))
    clock.reads(64 * MIB, seconds=2)
    assert c.written_since_clean_bytes == pytest.approx(0.8 * IMAGE - 200e6, abs=2 * MIB)
    clock.write(int(0.8 * IMAGE))
    assert not c.dirty and c.caps().write_iops == pytest.approx(38000)
    d = ThrottleController(load(tmp_path, RATE, "d.yaml"), IMAGE)
    dclock = Clock(d)
    d.set_shape(shape("randwrite", "4k", 32))
    dclock.write(int(1.6 * IMAGE), seconds=2)
    assert d.dirty and d.caps().write_iops == pytest.approx(9000)
    # once dirty, seconds of reads recover it as idle does: 1.5 s lift 150 MB of the 268 MB
    # (56 %), 3 s clean it
    dclock.reads(64 * MIB, seconds=1.5)
    assert d.dirty and d.lift_pct == pytest.approx(100 * 150e6 / IMAGE, rel=0.01)
    dclock.reads(64 * MIB, seconds=1.5)
    assert not d.dirty and d.caps().write_iops == pytest.approx(38000)


def test_recovery_rate_without_dirty_is_an_error_and_a_bad_form_names_the_fix(
        tmp_path: Path) -> None:
    path = tmp_path / "r.yaml"
    path.write_text(TWIN + "recovery: {clean_mbps: 100}\n")
    with pytest.raises(ConfigError, match="recovery without a dirty state"):
        load_model(path)
    path.write_text(TWIN + "dirty: {after_write_pct: 100, write_iops: 9000}\n"
                    "recovery: {clean_mbs: 100}\n")
    with pytest.raises(ConfigError) as info:
        load_model(path)
    assert "recovery.clean_mbs" in str(info.value) and "did you mean 'clean_mbps'" in str(
        info.value)


def test_bad_curve_keys_name_file_key_and_fix(tmp_path: Path) -> None:
    path = tmp_path / "k.yaml"
    path.write_text(TWIN.replace("{4k: 90,", "{4x: 90,").replace("{1: 8400,", "{0: 8400,"))
    with pytest.raises(ConfigErrors) as info:
        load_model(path)
    text = str(info.value)
    assert f"{path}:" in text
    assert "transfer_caps.read" in text and "'4x' is not a transfer size" in text
    assert "write transfer sizes as fio does" in text
    assert "qd_iops.read" in text and "'0' is not a queue depth" in text


# -- the channel --------------------------------------------------------------------------------

def test_run_loop_applies_a_shape_at_once_and_acknowledges_it(tmp_path: Path) -> None:
    folder = tmp_path / "g"
    folder.mkdir()
    for name in THROTTLE_FILES.values():
        (folder / name).write_text("")
    (folder / "blkio.throttle.io_service_bytes").write_text("")
    (folder / "blkio.throttle.io_serviced").write_text("")
    c = ThrottleController(load(tmp_path, TWIN))
    now = {"t": 0.0}
    sent = [shapes_to_json(1, shape("randread", "4k", 32)), "garbage"]
    replies: list[str] = []

    def inbox(timeout_s: float) -> list[str]:
        now["t"] += timeout_s
        return [sent.pop(0)] if sent else []

    run_loop(BlkioThrottle(folder, (7, 9)), c, clock=lambda: now["t"], interval_s=0.1,
             should_stop=lambda: now["t"] > 0.5, inbox=inbox, reply=replies.append)
    assert replies[0] == "ack 1" and replies[1].startswith("error not a job-shape message")
    assert (folder / THROTTLE_FILES["read_iops"]).read_text() == "7:9 60000\n"


# -- fio's own rate on an emulated drive's jobs (emulate.pacing) -------------------------------

def test_pace_job_adds_the_shape_caps_as_fio_rate_per_thread(tmp_path: Path) -> None:
    from pytest_ssdqual.emulate.pacing import pace_job

    m = load(tmp_path, TWIN + "copy: {concurrent_factor: 0.5}\n")
    seq = pace_job(job("read", "128k", 4), m, IMAGE)
    assert "[read_128k]\nrate=556000000,\n" in seq  # transfer_caps.read at 128k, MB/s x 1e6
    rnd = pace_job(job("randread", "4k", 32), m, IMAGE)
    assert "rate=245760000,\n" in rnd  # qd_iops.read at QD32: 60,000 IOPS x 4096 B
    threads = pace_job(job("randwrite", "4k", 2, numjobs=16), m, IMAGE)
    assert f"rate=,{38000 * 4096 // 16}\n" in threads  # QD 2 x 16 = 32, split over 16 threads
    copy = pace_job("[global]\nfilename=/dev/loop9\n[rd]\nrw=read\nbs=1m\n[wr]\nrw=write\n"
                    "bs=1m\n", m, IMAGE)
    # x 0.5; the write at 1 MiB sits halfway (log-log) between 155 at 128k and 160 at 8m
    assert "[rd]\nrate=278000000,\n" in copy and "[wr]\nrate=,78740078\n" in copy
    # a 70/30 mix at QD32 shares one budget: 1 / (0.7 / 60,000 + 0.3 / 38,000) = 51,114 IOPS,
    # 70 % of them reads (not 60,000 reads plus 38,000 writes, more than either alone); x 0.5:
    # a section that reads and writes at once is a copy to this model (concurrent_factor)
    mixed = pace_job(job("randrw", "4k", 32, extra="rwmixread=70\n"), m, IMAGE)
    total = 1 / (0.7 / 60000 + 0.3 / 38000)
    assert f"rate={int(0.5 * 0.7 * total * 4096)},{int(0.5 * 0.3 * total * 4096)}\n" in mixed
    assert 51000 < total < 51200
    # bursts staggered by startdelay run one at a time: each gets the whole cap, not a third
    bursts = pace_job("[global]\nrw=write\nbs=128k\niodepth=32\n" + "".join(
        f"[b{k}]\nstartdelay={k * 10}s\n" for k in range(3)), m, IMAGE)
    assert bursts.count("rate=,155000000\n") == 3
    own = pace_job(job("read", "128k", 4, extra="rate=1m\n"), m, IMAGE)
    assert own.count("rate=") == 1 and "[global]\nioengine" in own
    glob = pace_job("[global]\nrate_iops=100\n[a]\nrw=read\n", m, IMAGE)
    assert glob.count("rate") == 1
