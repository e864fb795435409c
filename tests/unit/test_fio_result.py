"""Tests of ``pytest_ssdqual.fio`` extract, parse and result on real fio outputs.

Two sources, both real fio runs:

* ``<cases>/real/fio/`` (``$SSDQUAL_CASES_DIR``, else ``../shared/cases`` beside the repo): public
  files from real drives, fio 2.1.4 to 3.36; each quirk listed in its ``SOURCES.md`` has a test.
* ``tests/data/fio/``: small fio 3.33 runs made for these tests (see the README there).

Expected numbers are copied from the files by hand (each test says which field); a test never
recomputes them with the code under test.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from pytest_ssdqual.catalog.workloads import DIRECTION_METRICS, TOTAL_METRICS
from pytest_ssdqual.errors import FioError, FioJobError, FioOutputError
from pytest_ssdqual.fio.extract import extract_json_document
from pytest_ssdqual.fio.parse import parse_fio_file, parse_fio_output
from pytest_ssdqual.fio.result import DirectionResult, WorkloadResult

DATA = Path(__file__).resolve().parents[1] / "data" / "fio"


def real_cases_dir() -> Path:
    """``$SSDQUAL_CASES_DIR``, else ``../shared/cases`` beside the repository root."""
    env = os.environ.get("SSDQUAL_CASES_DIR")
    return Path(env) if env else Path(__file__).resolve().parents[2].parent / "shared" / "cases"


REAL_FIO = real_cases_dir() / "real" / "fio"
MISSING = f"real cases folder {real_cases_dir()} not found: set SSDQUAL_CASES_DIR"


def real(name: str) -> Path:
    """Path of a real fio case; skips when the cases folder is absent, fails if the file is."""
    if not REAL_FIO.is_dir():
        pytest.skip(MISSING)
    path = REAL_FIO / name
    assert path.is_file(), f"{path} is listed in SOURCES.md but missing"
    return path


def text_of(path: Path) -> str:
    return path.read_bytes().decode("utf-8", errors="replace")


def approx(value: float) -> object:
    return pytest.approx(value, rel=1e-9, abs=1e-9)


def _all_files() -> list[object]:
    params: list[object] = []
    if REAL_FIO.is_dir():
        params += [pytest.param(p, id=f"real/{p.name}") for p in sorted(REAL_FIO.iterdir())]
    else:
        params.append(pytest.param(None, id="real-missing", marks=pytest.mark.skip(reason=MISSING)))
    params += [
        pytest.param(p, id=f"data/{p.name}")
        for p in sorted(DATA.iterdir())
        if p.name != "README.md"
    ]
    return params


# --- every file: parses, or fails with the project's own errors -------------------------------


@pytest.mark.parametrize("path", _all_files())
def test_every_file_parses_or_raises_a_documented_error(path: Path) -> None:
    try:
        result = parse_fio_file(path)
    except (FioOutputError, FioJobError) as exc:
        assert str(path) in str(exc)
        assert exc.raw_output is not None
        return
    assert isinstance(result, WorkloadResult)
    assert result.directions, "a parsed result always has a direction that did I/O"
    assert len(result.job_names) == result.jobs_merged >= 1
    binned = all(d.histogram is not None for d in result.directions.values())
    assert result.percentiles_worst_of_jobs == (result.jobs_merged > 1 and not binned)
    assert result.runtime_ms > 0
    for name, d in result.directions.items():
        assert d.direction == name
        assert d.total_ios > 0 or d.io_bytes > 0
        assert d.iops > 0 and d.bw_mbps > 0
        for field in ("lat_p50_us", "lat_p99_us", "lat_p99_9_us", "lat_p99_99_us"):
            value = getattr(d, field)
            assert value is None or value > 0, f"{name}.{field} is {value}: never a 0 us tail"
        if d.lat_p50_us is not None and d.lat_p99_99_us is not None:
            assert d.lat_p50_us <= d.lat_p99_us <= d.lat_p99_9_us <= d.lat_p99_99_us  # type: ignore[operator]
    known = {f"{d}.{m}" for d in result.directions for m in DIRECTION_METRICS}
    known |= {f"total.{m}" for m in TOTAL_METRICS}
    assert set(result.metrics()) <= known


def test_every_real_fio_case_has_its_own_test() -> None:
    if not REAL_FIO.is_dir():
        pytest.skip(MISSING)
    covered = {
        "fio-2.1.4_pkb_5jobs_no_timestamp.json",
        "fio-2.18_mdraid_randread_qd16_j16_group_reporting.json",
        "fio-3.1_intel_d3-s4610_randwrite_qd4_j16.json",
        "fio-3.6_wd_raptor73gb_hdd_randwrite_qd1.json",
        "fio-3.12_randrw50_sync_percentiles.json",
        "fio-3.14_samsung860pro_randread_qd8_j32.json",
        "fio-3.33_empty_output_0bytes.json",
        "fio-3.33_error22_warnings_before_json.json",
        "fio-3.33_prefix_signal2_rw_mixed_group_reporting.json",
        "fio-3.33_sabrent_rocket4plus_nvme_randwrite_qd1_read_no_percentile.json",
        "fio-3.33_sabrent_nvme_randrw35_4jobs_steadystate.json",
        "fio-3.36_seqread_2jobs_group_reporting_file.json",
        "fio_noJSON_libaio_not_loadable_macos.json",
        "fio_noJSON_shm_segment_error.json",
    }
    present = {p.name for p in REAL_FIO.iterdir()}
    assert present - covered == set(), "new real fio cases need their own assertions here"


# --- fio 2.x: usec latencies, KiB io_bytes, duplicate keys ---------------------------------


def test_fio_2_1_4_kib_usec_duplicate_keys_five_jobs_merged() -> None:
    path = real("fio-2.1.4_pkb_5jobs_no_timestamp.json")
    text = text_of(path)
    # 5 jobs x 3 directions, each percentile map with three '"0.00" : 0' duplicate keys
    assert text.count('"0.00" : 0') == 45
    result = parse_fio_file(path)
    assert result.fio_version == "fio-2.1.4"
    assert result.job_names == (
        "sequential_write", "sequential_read", "random_write_test", "random_read_test",
        "random_read_test_parallel",
    )
    assert result.jobs_merged == 5 and result.percentiles_worst_of_jobs
    assert list(result.directions) == ["read", "write"]  # trim did nothing: absent
    assert result.runtime_ms == 28540  # random_read_test read.runtime
    write = result.directions["write"]
    # io_bytes is KiB in fio 2.x: 361984 + 36244 KiB
    assert write.io_bytes == (361984 + 36244) * 1024
    # no total_ios in 2.1.4: iops * runtime -> 133 * 5.314 s and 1610 * 5.625 s
    assert write.total_ios == 707 + 9056
    assert write.iops == approx(133 + 1610)
    assert write.bw_mbps == approx((68118 + 6443) * 1024 / 1e6)  # bw is KiB/s
    # clat is already in usec in fio 2.x; worst job's percentiles (sequential_write)
    assert write.lat_p99_us == 823296 and write.lat_p99_99_us == 872448
    assert write.lat_p50_us == 444416  # not the "0.00" slots
    assert write.lat_max_us == 869891
    assert write.lat_mean_us == approx((707 * 477734.84 + 9056 * 587.02) / (707 + 9056))
    read = result.directions["read"]
    assert read.io_bytes == (361984 + 36244 + 36244) * 1024
    assert read.iops == approx(253 + 317 + 323)
    assert read.lat_p99_us == max(473088, 3728, 209920)
    assert read.lat_p99_9_us == max(528384, 6880, 370688)
    assert read.lat_p99_99_us == max(528384, 354304, 399360)


def test_fio_2_18_kib_usec_and_idle_write_with_zero_percentiles_excluded() -> None:
    result = parse_fio_file(real("fio-2.18_mdraid_randread_qd16_j16_group_reporting.json"))
    assert result.fio_version == "fio-2.18-59-g618e"
    assert result.jobs_merged == 1 and not result.percentiles_worst_of_jobs
    assert list(result.directions) == ["read"]  # write has an all-zero percentile map
    read = result.directions["read"]
    assert read.io_bytes == 23056 * 1024
    assert read.total_ios == 5764
    assert read.iops == approx(538.037898)
    assert read.bw_mbps == approx(2152 * 1024 / 1e6)
    assert read.lat_mean_us == approx(469508.907876)
    assert (read.lat_p50_us, read.lat_p99_us, read.lat_p99_9_us, read.lat_p99_99_us) == (
        358400, 1662976, 2146304, 2867200,
    )
    assert read.lat_max_us == 2872348
    assert result.runtime_ms == 10713
    # KiB/s * runtime agrees with io_bytes once both are converted to bytes
    assert read.bw_mbps * 1e6 * result.runtime_ms / 1000 == pytest.approx(read.io_bytes, rel=1e-3)
    assert not any(name.startswith("write.") for name in result.metrics())


# --- fio 3.x ns schema ---------------------------------------------------------------------


def test_fio_3_1_ns_schema_zero_percentile_idle_read_excluded_and_bw_in_kib() -> None:
    result = parse_fio_file(real("fio-3.1_intel_d3-s4610_randwrite_qd4_j16.json"))
    assert list(result.directions) == ["write"]
    assert "read.lat_p99_us" not in result.metrics()
    write = result.directions["write"]
    assert write.io_bytes == 11637862400 == 11365100 * 1024  # bytes (io_kbytes present)
    assert write.total_ios == 2841275
    assert write.iops == approx(47353.004900)
    assert write.bw_mbps == approx(189412 * 1024 / 1e6)  # no bw_bytes before fio 3.2
    assert write.lat_mean_us == approx(1336.472205681)  # 1336472.205681 ns
    assert write.lat_p50_us == approx(468.992)
    assert write.lat_p99_us == approx(31588.352)
    assert write.lat_p99_9_us == approx(62128.128)
    assert write.lat_p99_99_us == approx(117964.8)
    assert write.lat_max_us == approx(466518.423)


def test_fio_3_6_hdd_latencies() -> None:
    result = parse_fio_file(real("fio-3.6_wd_raptor73gb_hdd_randwrite_qd1.json"))
    assert result.fio_version == "fio-3.6-31-g4386"
    write = result.directions["write"]
    assert write.iops == approx(169.694041)
    assert write.lat_mean_us == approx(5874.345751743)  # about 5.9 ms: a disk, not an SSD
    assert write.lat_p99_us == approx(36438.016)
    assert write.bw_mbps == approx(0.695066)
    assert result.metrics()["write.lat_p99_99_us"] == approx(304087.04)


def test_fio_3_12_no_N_field_sync_block_ignored_long_tail() -> None:
    result = parse_fio_file(real("fio-3.12_randrw50_sync_percentiles.json"))
    assert list(result.directions) == ["read", "write"]  # not sync, not trim
    read, write = result.directions["read"], result.directions["write"]
    assert read.iops == approx(223.572160) and write.iops == approx(222.367763)
    assert read.bw_mbps == approx(7.326012) and write.bw_mbps == approx(7.286546)
    assert write.lat_p99_us == approx(608174.08)  # 608 ms p99 write
    assert read.lat_p99_us == approx(574619.648)
    assert write.lat_mean_us == approx(52056.874085727)
    metrics = result.metrics()
    assert metrics["total.iops"] == approx(223.572160 + 222.367763)
    assert metrics["total.bw_mbps"] == approx(7.326012 + 7.286546)
    assert result.runtime_ms == 293923


def test_fio_3_14_git_describe_version_kept() -> None:
    result = parse_fio_file(real("fio-3.14_samsung860pro_randread_qd8_j32.json"))
    assert result.fio_version == "fio-3.14-6-g97134"
    read = result.directions["read"]
    assert read.iops == approx(52427.943014)
    assert read.bw_mbps == approx(214.744854)
    assert read.lat_p99_us == approx(14876.672)
    assert read.total_ios == 3146463


def test_fio_3_33_read_without_percentile_map_not_reported() -> None:
    name = "fio-3.33_sabrent_rocket4plus_nvme_randwrite_qd1_read_no_percentile.json"
    result = parse_fio_file(real(name))
    assert list(result.directions) == ["write"]
    metrics = result.metrics()
    assert not [m for m in metrics if not m.startswith("write.")]
    write = result.directions["write"]
    assert write.iops == approx(99506.658222)
    assert write.bw_mbps == approx(407.579272)
    assert write.lat_p50_us == approx(7.264)
    assert write.lat_p99_us == approx(14.4)
    assert write.lat_p99_9_us == approx(27.264)
    assert write.lat_p99_99_us == approx(71.168)
    assert write.lat_mean_us == approx(7.615903423)
    assert write.lat_max_us == approx(1494.44)


def test_fio_3_33_direction_with_io_but_no_percentile_map_has_none_percentiles() -> None:
    name = "fio-3.33_sabrent_rocket4plus_nvme_randwrite_qd1_read_no_percentile.json"
    doc = json.loads(text_of(real(name)))
    del doc["jobs"][0]["write"]["clat_ns"]["percentile"]  # as with clat_percentiles=0
    write = parse_fio_output(json.dumps(doc)).directions["write"]
    assert (write.lat_p50_us, write.lat_p99_us, write.lat_p99_9_us, write.lat_p99_99_us) == (
        None, None, None, None,
    )
    assert write.lat_mean_us == approx(7.615903423)
    assert list(write.metrics()) == ["iops", "bw_mbps", "lat_mean_us", "lat_max_us"]


# --- several jobs ---------------------------------------------------------------------------

# Per job (jobs[0..3]) of fio-3.33_sabrent_nvme_randrw35_4jobs_steadystate.json:
# io_bytes, total_ios, iops, bw_bytes, clat mean ns, clat max ns, p50, p99, p99.9, p99.99 (ns)
FOUR_JOBS = {
    "read": [
        (943587328, 230368, 19376.566574, 79366416, 778665.479802, 10818329,
         675840, 2703360, 4292608, 5931008),
        (955400192, 233252, 19617.493692, 80353254, 768998.511387, 11237119,
         651264, 2703360, 4292608, 5603328),
        (4892708864, 1194509, 38669.763678, 158391352, 378818.335589, 11390330,
         160768, 2039808, 3391488, 4947968),
        (921939968, 225083, 18932.038018, 77545627, 795934.651773, 10850569,
         716800, 2736128, 4227072, 6127616),
    ],
    "write": [
        (1747271680, 426580, 35880.225418, 146965403, 18863.384432, 3420960,
         13120, 47360, 1036288, 1826816),
        (1781678080, 434980, 36583.683768, 149846768, 18616.647575, 3450430,
         12992, 48896, 1073152, 1843200),
        (9085014016, 2218021, 71803.852379, 294108579, 14014.210991, 3427640,
         10432, 40192, 61696, 1417216),
        (1717673984, 419354, 35272.436706, 144475900, 19413.163368, 3457890,
         13376, 50432, 1011712, 1859584),
    ],
}


def test_four_jobs_without_group_reporting_summed_with_worst_percentiles() -> None:
    result = parse_fio_file(real("fio-3.33_sabrent_nvme_randrw35_4jobs_steadystate.json"))
    assert result.jobs_merged == 4 and result.job_names == ("FIOJOB",) * 4
    assert result.percentiles_worst_of_jobs
    assert result.runtime_ms == 30890  # jobs[2] ran longest (steady state reached later)
    for name, jobs in FOUR_JOBS.items():
        d = result.directions[name]
        assert d.io_bytes == sum(j[0] for j in jobs)
        assert d.total_ios == sum(j[1] for j in jobs)
        assert d.iops == approx(sum(j[2] for j in jobs))
        assert d.bw_mbps == approx(sum(j[3] for j in jobs) / 1e6)
        weighted = sum(j[1] * j[4] for j in jobs) / sum(j[1] for j in jobs) / 1000
        assert d.lat_mean_us == approx(weighted)
        assert d.lat_max_us == approx(max(j[5] for j in jobs) / 1000)
        assert d.lat_p50_us == approx(max(j[6] for j in jobs) / 1000)
        assert d.lat_p99_us == approx(max(j[7] for j in jobs) / 1000)
        assert d.lat_p99_9_us == approx(max(j[8] for j in jobs) / 1000)
        assert d.lat_p99_99_us == approx(max(j[9] for j in jobs) / 1000)
        averaged = sum(j[7] for j in jobs) / len(jobs) / 1000
        assert d.lat_p99_us != approx(averaged), "percentiles must never be averaged"
    assert result.directions["read"].lat_p99_us == approx(2736.128)
    assert result.directions["write"].lat_p99_9_us == approx(1073.152)
    metrics = result.metrics()
    assert metrics["total.iops"] == approx(
        sum(j[2] for j in FOUR_JOBS["read"]) + sum(j[2] for j in FOUR_JOBS["write"])
    )


def test_fio_3_36_uses_iops_not_bogus_iops_mean_and_direction_runtime() -> None:
    result = parse_fio_file(real("fio-3.36_seqread_2jobs_group_reporting_file.json"))
    assert result.jobs_merged == 1  # numjobs=2 with group_reporting: one entry, as is
    read = result.directions["read"]
    assert read.iops == approx(3266.695555)  # iops_mean/min/max are all 2 in this file
    assert read.bw_mbps == approx(428.172319)
    assert read.lat_p99_us == approx(3719.168)
    assert result.runtime_ms == 120002  # not job_runtime 240001 (summed over 2 threads)
    assert read.iops == pytest.approx(read.total_ios / (result.runtime_ms / 1000), rel=1e-6)


# --- text around the JSON -------------------------------------------------------------------


def test_error22_with_warnings_before_json_raises_job_error() -> None:
    path = real("fio-3.33_error22_warnings_before_json.json")
    with pytest.raises(FioJobError) as info:
        parse_fio_file(path)
    exc = info.value
    assert exc.errno == 22 and exc.job == "1m"
    message = str(exc)
    assert "job '1m' failed with error 22 (Invalid argument)" in message
    assert "fio: time_based requires a runtime/timeout setting" in message
    assert str(path) in message
    assert exc.raw_output is not None and '"error" : 22' in exc.raw_output
    before, doc, _after = extract_json_document(text_of(path))
    assert before.splitlines() == [
        "fio: time_based requires a runtime/timeout setting",
        "1m: you need to specify size=",
        "fio: pid=0, err=22/file:filesetup.c:1155, func=total_file_size, error=Invalid argument",
    ]
    assert doc["jobs"][0]["eta"] == 2147483647


def test_signal2_prefix_marks_terminated_run() -> None:
    result = parse_fio_file(real("fio-3.33_prefix_signal2_rw_mixed_group_reporting.json"))
    assert result.terminated_by_signal
    assert result.prefix_text == "\nfio: terminating on signal 2\n"
    assert result.runtime_ms == 48170  # read.runtime; job_runtime says 288990
    metrics = result.metrics()
    assert metrics["read.iops"] == approx(7662.030309)
    assert metrics["write.iops"] == approx(39338.066766)
    assert metrics["total.iops"] == approx(7662.030309 + 39338.066766)
    assert metrics["total.bw_mbps"] == approx((31383676 + 161128721) / 1e6)
    assert metrics["write.lat_p99_us"] == approx(6848.512)


def test_empty_file_is_an_output_error() -> None:
    path = real("fio-3.33_empty_output_0bytes.json")
    with pytest.raises(FioOutputError) as info:
        parse_fio_file(path)
    assert str(info.value) == (
        f"fio output {path} is empty (0 bytes): fio wrote nothing — see its stderr"
    )
    assert info.value.raw_output == ""


@pytest.mark.parametrize(
    ("name", "quoted"),
    [
        ("fio_noJSON_libaio_not_loadable_macos.json", "'fio: engine libaio not loadable'"),
        ("fio_noJSON_shm_segment_error.json", "'error: failed to setup shm segment'"),
    ],
)
def test_no_json_quotes_fios_first_line(name: str, quoted: str) -> None:
    path = real(name)
    with pytest.raises(FioOutputError) as info:
        parse_fio_file(path)
    message = str(info.value)
    assert f"fio output {path} holds no JSON document: fio printed {quoted}" in message
    assert info.value.raw_output == text_of(path)


def test_truncated_json_is_an_output_error_naming_the_line() -> None:
    text = text_of(real("fio-3.14_samsung860pro_randread_qd8_j32.json"))
    with pytest.raises(FioOutputError, match=r"truncated or invalid JSON.*line 1 breaks"):
        parse_fio_output(text[: len(text) // 2], source="/tmp/x.json")


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("  \n\n", r"^fio output holds only whitespace \(4 bytes\)"),
        ("[1, 2]", r"holds a JSON list, not the object fio writes"),
        ('{"fio version": "fio-3.33"}', r"JSON object without a 'jobs' list \(keys: fio version\)"),
        ("fio: warning\n{\"a\": 1}\n", r"JSON object without a 'jobs' list \(keys: a\)"),
    ],
)
def test_json_that_is_not_a_fio_result(text: str, match: str) -> None:
    with pytest.raises(FioOutputError, match=match) as info:
        parse_fio_output(text)
    assert info.value.raw_output == text


def test_wrong_value_type_is_an_output_error_with_its_path() -> None:
    doc = json.loads(text_of(real("fio-3.14_samsung860pro_randread_qd8_j32.json")))
    doc["jobs"][0]["read"]["iops"] = "fast"
    with pytest.raises(FioOutputError, match=r"jobs\[0\]\.read\.iops is 'fast', not a number"):
        parse_fio_output(json.dumps(doc))


def test_error5_names_job_errno_and_strerror() -> None:
    doc = json.loads(text_of(real("fio-3.14_samsung860pro_randread_qd8_j32.json")))
    doc["jobs"][0].update(jobname="seq", error=5)  # a job that did I/O, then hit EIO
    with pytest.raises(FioJobError) as info:
        parse_fio_output(json.dumps(doc), source="/tmp/x.json")
    assert str(info.value) == (
        "fio output /tmp/x.json: job 'seq' failed with error 5 (Input/output error)"
    )
    assert (info.value.job, info.value.errno) == ("seq", 5)


def test_no_io_and_no_error_is_an_output_error() -> None:
    doc = json.loads(text_of(real("fio-3.33_error22_warnings_before_json.json")).split("\n", 3)[3])
    doc["jobs"][0]["error"] = 0
    with pytest.raises(FioOutputError, match=r"no job did any I/O"):
        parse_fio_output(json.dumps(doc))


def test_parse_fio_file_missing_and_undecodable_bytes(tmp_path: Path) -> None:
    with pytest.raises(FioOutputError, match=r"nope\.json does not exist"):
        parse_fio_file(tmp_path / "nope.json")
    raw = real("fio-3.14_samsung860pro_randread_qd8_j32.json").read_bytes()
    odd = tmp_path / "odd.json"
    odd.write_bytes(b"fio: warning \xff\xfe\n" + raw)
    result = parse_fio_file(odd)
    assert result.prefix_text == "fio: warning \ufffd\ufffd\n"
    assert result.directions["read"].iops == approx(52427.943014)


# --- fio 3.33 runs made here (tests/data/fio) -----------------------------------------------


def test_local_group_reporting_one_entry_sums_are_consistent() -> None:
    result = parse_fio_file(DATA / "fio-3.33_local_randrw70_4k_qd16_2jobs_group_reporting.json")
    assert result.fio_version == "fio-3.33"
    assert result.jobs_merged == 1 and not result.percentiles_worst_of_jobs
    assert result.runtime_ms == 1001  # job_runtime is 2000: the sum over numjobs=2
    read, write = result.directions["read"], result.directions["write"]
    assert read.iops == approx(79074.925075) and write.iops == approx(33969.030969)
    assert read.lat_p99_us == approx(798.72) and write.lat_p99_us == approx(1957.888)
    metrics = result.metrics()
    assert metrics["total.iops"] == approx(read.iops + write.iops)
    assert metrics["total.bw_mbps"] == approx(read.bw_mbps + write.bw_mbps)
    for d in (read, write):
        seconds = result.runtime_ms / 1000
        assert d.bw_mbps * 1e6 == pytest.approx(d.io_bytes / seconds, rel=1e-3)
        assert d.iops == pytest.approx(d.total_ios / seconds, rel=1e-3)
        assert d.io_bytes == d.total_ios * 4096  # bs=4k
    assert read.total_ios / (read.total_ios + write.total_ios) == pytest.approx(0.70, abs=0.01)


def test_local_two_jobs_without_group_reporting_merged() -> None:
    name = "fio-3.33_local_randrw70_4k_qd8_2jobs_no_group_reporting.json"
    result = parse_fio_file(DATA / name)
    assert result.jobs_merged == 2 and result.job_names == ("randrw70", "randrw70")
    assert result.percentiles_worst_of_jobs
    read, write = result.directions["read"], result.directions["write"]
    assert read.iops == approx(28205.794206 + 28209.790210)
    assert write.iops == approx(12073.926074 + 12102.897103)
    assert read.total_ios == 28234 + 28238
    assert read.io_bytes == 115646464 + 115662848 == read.total_ios * 4096
    assert read.lat_p99_9_us == approx(2179.072)  # max(1728512, 2179072) ns
    assert write.lat_p99_9_us == approx(2375.68)  # max(2375680, 2342912) ns
    assert read.lat_max_us == approx(2948.897)
    assert result.metrics()["total.iops"] == approx(read.iops + write.iops)


def test_local_normal_and_json_text_around_the_document() -> None:
    path = DATA / "fio-3.33_local_seqwrite_128k_qd4_normal_and_json.txt"
    before, doc, after = extract_json_document(text_of(path))
    assert before.splitlines()[1:] == ["fio-3.33", "Starting 1 process"]
    assert before.startswith("seqwrite: (g=0): rw=write, bs=(R) 128KiB-128KiB")
    assert "Run status group 0 (all jobs):" in after
    assert doc["jobs"][0]["jobname"] == "seqwrite"
    result = parse_fio_file(path)
    assert result.prefix_text == before and not result.terminated_by_signal
    write = result.directions["write"]
    assert list(result.directions) == ["write"]
    assert write.iops == approx(12424.575425)
    assert write.bw_mbps == approx(1628.513950)
    assert write.io_bytes == write.total_ios * 131072  # bs=128k
    assert write.lat_p99_us == approx(552.96)


def test_local_json_plus_bins_ignored() -> None:
    path = DATA / "fio-3.33_local_randread_4k_qd1_json_plus.json"
    _before, doc, _after = extract_json_document(text_of(path))
    assert "bins" in doc["jobs"][0]["read"]["clat_ns"]
    read = parse_fio_file(path).directions["read"]
    assert read.iops == approx(15175.824176)
    assert (read.lat_p50_us, read.lat_p99_us, read.lat_p99_99_us) == (
        approx(45.824), approx(93.696), approx(1335.296),
    )


def test_local_status_interval_last_document_is_the_result() -> None:
    path = DATA / "fio-3.33_local_randread_4k_qd4_status_interval.json"
    text = text_of(path)
    assert text.count('"fio version"') == 3
    before, doc, after = extract_json_document(text)
    assert before.strip() == "" and after.strip() == ""
    assert doc["jobs"][0]["read"]["total_ios"] == 83533
    result = parse_fio_file(path)
    assert result.runtime_ms == 2001
    assert result.directions["read"].iops == approx(41745.627186)
    # the final document cut short must not fall back on an interim snapshot
    with pytest.raises(FioOutputError, match=r"last JSON document \(line \d+\) is truncated"):
        parse_fio_output(text[: len(text) - 2000])


def test_local_error22_after_one_io_raises_job_error() -> None:
    path = DATA / "fio-3.33_local_unaligned_bs1000_direct_error22.json"
    _before, doc, _after = extract_json_document(text_of(path))
    assert doc["jobs"][0]["read"]["total_ios"] == 1  # one refused I/O is counted
    with pytest.raises(FioJobError) as info:
        parse_fio_file(path)
    assert (info.value.job, info.value.errno) == ("unaligned", 22)
    assert "job 'unaligned' failed with error 22 (Invalid argument)" in str(info.value)


def test_local_client_server_all_clients_aggregate_skipped() -> None:
    path = DATA / "fio-3.33_local_client_server_2clients_all_clients.json"
    _before, doc, _after = extract_json_document(text_of(path))
    assert "jobs" not in doc and doc["client_stats"][2]["jobname"] == "All clients"
    result = parse_fio_file(path)
    assert result.job_names == ("remote", "remote") and result.jobs_merged == 2
    read = result.directions["read"]
    assert read.iops == approx(28411.588412 + 28473.053892)
    assert read.total_ios == 28440 + 28530 == doc["client_stats"][2]["read"]["total_ios"]
    assert read.lat_p99_us == approx(224.256)  # max(220160, 224256) ns
    # fio's own aggregate (total I/Os over the longest runtime) agrees within 0.1 %
    assert read.iops == pytest.approx(56856.287425, rel=1e-3)


# --- result objects -------------------------------------------------------------------------


def test_direction_metrics_skip_none_and_follow_catalog_order() -> None:
    d = DirectionResult("read", 4096, 1, 10.0, 0.04096, 5.0, None, 9.0, None, None, 12.0)
    assert d.metrics() == {
        "iops": 10.0, "bw_mbps": 0.04096, "lat_mean_us": 5.0, "lat_p99_us": 9.0,
        "lat_max_us": 12.0,
    }
    result = WorkloadResult("fio-3.33", ("j",), 1000, {"read": d}, 1, False, "", False)
    assert list(result.metrics()) == [f"read.{m}" for m in d.metrics()]
    with pytest.raises(AttributeError):
        result.runtime_ms = 5  # type: ignore[misc]


def test_errors_are_fio_errors() -> None:
    with pytest.raises(FioError):
        parse_fio_output("")
