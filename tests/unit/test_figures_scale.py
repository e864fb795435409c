"""The Phison E12 twin's ``figures_scale``, its NVMe facts, the threshold scaling
for an emulated twin (never a real drive), and the power-state metrics named for what they hold
(the old ``max_exit_latency_us`` name is an error naming the new ones)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from pytest_ssdqual.drive.identity import DriveIdentity
from pytest_ssdqual.drive.inventory import Assignment
from pytest_ssdqual.drive.power_states import PowerState, PowerStateTable
from pytest_ssdqual.emulate.model_file import load_model
from pytest_ssdqual.errors import ConfigErrors
from pytest_ssdqual.qualify.session import drive_facts
from pytest_ssdqual.thresholds.loader import ThresholdSet
from pytest_ssdqual.thresholds.profile import DriveFacts
from pytest_ssdqual.thresholds.scaling import scale_kind, scale_limit
from pytest_ssdqual.thresholds.verdict import Limit, Provenance

from ..conftest import REPO

E12_MODEL = REPO / "emulated" / "phison-e12-960g.yaml"
NOTE = "limit scaled x0.1 for the emulated twin (figures_scale)"


def e12_facts(kind: str, scale: float | None) -> DriveFacts:
    return DriveFacts("PS5012-E12", "BiCS3", "ECFM11.0", "Phison PS5012-E12 960GB reference",
                      "EMU-PHISON-E12-960G", 960197124096, "emulated", kind, scale)


def test_the_e12_twin_states_its_factor_and_the_reviews_power_table() -> None:
    model = load_model(E12_MODEL)
    assert model.figures_scale is not None and model.figures_scale.factor == 0.1
    assert "80-100k 4K IOPS on 2 cores" in model.figures_scale.why
    assert (model.controller, model.nand, model.firmware) == ("PS5012-E12", "BiCS3", "ECFM11.0")
    assert round(model.capacity_bytes / 1e9) == 960
    # the shape: a 300 MB/s burst (3,000 x 0.1) falling past the cache to about a third
    assert model.caps.write_bw_mbps == 300
    assert model.slc_cache is not None and model.slc_cache.write_bw_mbps == 110
    assert 0.3 <= model.slc_cache.write_bw_mbps / model.caps.write_bw_mbps <= 0.4
    nvme = model.nvme
    assert nvme is not None
    assert [ps.max_power_w for ps in nvme.power_states] == [8.9, 2.3, 1.8, 0.049, 0.0018]
    assert [ps.non_operational for ps in nvme.power_states] == [False] * 3 + [True] * 2
    assert [(ps.entry_latency_us, ps.exit_latency_us) for ps in nvme.power_states[3:]] == [
        (2000, 2000), (25000, 25000)]
    assert (nvme.apst_supported, nvme.apst_enabled) == (True, True)
    assert (nvme.warning_temperature_c, nvme.critical_temperature_c) == (70, 90)
    # @SPEED does not change the stated factor (the limits scale by figures_scale alone)
    assert model.with_speed(0.8).figures_scale == model.figures_scale


def _model(tmp_path: Path, extra: str) -> Path:
    text = E12_MODEL.read_text()
    text = text[:text.index("power_states:")] + textwrap.dedent(extra)
    path = tmp_path / "twin.yaml"
    path.write_text(text)
    return path


def test_bad_nvme_facts_are_errors_with_line_key_and_fix(tmp_path: Path) -> None:
    path = _model(tmp_path, """\
        power_states:
          - {max_power_w: 0.05, non_operational: true, exit_latency_us: 2000}
          - {max_power_w: 9, non_operational: false}
        apst: {supported: false, enabled: true}
        temperature: {warning_c: 90, critical_c: 70}
        """)
    with pytest.raises(ConfigErrors) as info:
        load_model(path)
    text = str(info.value)
    assert "power_states[0].non_operational: PS0 is non-operational" in text
    assert "apst.enabled: APST enabled but not supported" in text
    assert "temperature.warning_c: warning_c 90 is not below critical_c 70" in text
    assert "twin.yaml:" in text
    bad_factor = E12_MODEL.read_text().replace("factor: 0.1", "factor: 1.5")
    (tmp_path / "f.yaml").write_text(bad_factor)
    with pytest.raises(ConfigErrors, match=r"figures_scale\.factor"):
        load_model(tmp_path / "f.yaml")


def test_scale_kind_by_metric_name() -> None:
    assert [scale_kind(m) for m in ("write.bw_mbps", "sustained_bw_mbps", "read.iops",
                                    "fresh_iops", "rand_read_4k_qd1.read.iops")] == ["rate"] * 5
    assert [scale_kind(m) for m in ("read.lat_p99_us", "steady_lat_mean_us",
                                    "busy.lat_p50_us")] == ["latency"] * 3
    assert [scale_kind(m) for m in (
        "fragmented_seq_read_128k_qd32.read.bw_mbps_ratio", "recovery_ratio", "scaling_ratio",
        "slc_cache_bytes", "time_to_recover_s", "max_transition_latency_us",
        "max_idle_exit_latency_us", "wake_penalty_us", "warning_temperature_c",
        "power_states")] == [None] * 10


def test_scale_limit_rates_times_the_factor_latencies_divided_provenance_says_so() -> None:
    prov = Provenance("thresholds/phison-e12.yaml", "E12", "review p. 9", 70)
    rate = scale_limit(Limit("sustained_write", "sustained_bw_mbps", 900, None, None, prov), 0.1)
    assert (rate.min, rate.max) == (90, None)
    assert rate.provenance.scaled == NOTE
    assert rate.provenance.source == f"review p. 9 [{NOTE}]"
    assert (rate.provenance.file, rate.provenance.line) == ("thresholds/phison-e12.yaml", 70)
    lat = scale_limit(Limit("rand_read_4k_qd1", "read.lat_p99_us", None, 1000, 5, prov), 0.1)
    assert (lat.min, lat.max, lat.marginal_pct) == (None, 10000, 5)
    assert lat.provenance.scaled.startswith(NOTE) and "latency limit x10" in lat.provenance.scaled
    ratio = Limit("seq_after_random", "worst_ratio", 0.9, None, None, prov)
    assert scale_limit(ratio, 0.1) is ratio
    assert scale_limit(Limit("x", "write.bw_mbps", 270, None, None, prov), 1).min == 270
    with pytest.raises(ValueError, match="not in"):
        scale_limit(ratio, 0)
    # the verdict says it, passed or failed
    passed = rate.evaluate(104.2)
    assert passed.status == "pass" and passed.line().endswith(NOTE)
    failed = rate.evaluate(60.0)
    assert failed.failed and "60 < min 90" in failed.line() and NOTE in failed.line()


def test_resolution_scales_an_emulated_twin_never_a_real_drive() -> None:
    thresholds = ThresholdSet.load([REPO / "thresholds"])
    twin = thresholds.resolve(e12_facts("emu", 0.1))
    real = thresholds.resolve(e12_facts("block", None))
    # a real drive whose facts somehow carry a factor is still never scaled
    forced = thresholds.resolve(e12_facts("block", 0.1))
    key = ("sustained_write", "sustained_bw_mbps")
    assert twin.limits[key].min == 90 and real.limits[key].min == 900 == forced.limits[key].min
    burst = ("sustained_write", "burst_bw_mbps")
    assert twin.limits[burst].min == 270 and real.limits[burst].min == 2700
    seq = ("seq_write_128k_qd32", "write.bw_mbps")
    assert twin.limits[seq].min == 270 and twin.limits[seq].marginal_pct == 5
    assert twin.limits[("rand_read_4k_qd32", "read.iops")].min == 30000
    assert twin.limits[("rand_read_4k_qd1", "read.lat_p99_us")].max == 10000
    assert real.limits[("rand_read_4k_qd1", "read.lat_p99_us")].max == 1000
    # facts of the table and the thermal thresholds, and the wake-up limit: unchanged
    for metric, (low, high) in {"max_idle_exit_latency_us": (25000, 25000),
                                "max_transition_latency_us": (50000, 50000),
                                "warning_temperature_c": (70, 70),
                                "critical_temperature_c": (90, 90),
                                "wake_penalty_us": (None, 25000)}.items():
        lim = twin.limits[("idle_wake_read_4k_qd1", metric)]
        assert (lim.min, lim.max) == (low, high) and lim.provenance.scaled == "", metric
    scaled = [lim for lim in twin.limits.values() if lim.provenance.scaled]
    assert scaled and all(NOTE in lim.provenance.source for lim in scaled)
    assert not any(lim.provenance.scaled for lim in real.limits.values())
    assert (twin.figures_scale, real.figures_scale, forced.figures_scale) == (0.1, None, None)
    assert "rate limits x0.1, latency limits x10" in twin.describe()
    assert "figures_scale" not in real.describe()


def test_drive_facts_carry_the_factor_for_an_emulated_drive_only() -> None:
    assignment = Assignment("PS5012-E12", "BiCS3", "emulated drive model")
    twin = DriveIdentity("E12", "EMU-1", "ECFM11.0", 960197124096, 512, 4096, "emulated", False,
                         kind="emu", figures_scale=0.1)
    block = DriveIdentity("E12", "S1", "ECFM11.0", 960197124096, 512, 4096, "NVMe", False,
                          kind="block", figures_scale=0.1)
    assert drive_facts(twin, assignment).figures_scale == 0.1
    assert drive_facts(block, assignment).figures_scale is None


def test_power_state_metrics_are_named_for_what_they_hold() -> None:
    """The E12's table (review p. 8): PS4 25 ms entry / 25 ms exit. The old name held 50,000
    for it, and a limit written from the name (exit <= 25 ms) failed the very drive."""
    table = PowerStateTable((
        PowerState(0, 8.9, False, 0, 0), PowerState(1, 2.3, False, 0, 0),
        PowerState(2, 1.8, False, 0, 0), PowerState(3, 0.049, True, 2000, 2000),
        PowerState(4, 0.0018, True, 25000, 25000)), True, 70.0, 90.0)
    assert table.metrics() == {
        "power_states": 5, "non_operational_states": 2, "max_idle_exit_latency_us": 25000,
        "max_transition_latency_us": 50000, "warning_temperature_c": 70,
        "critical_temperature_c": 90}


def test_a_threshold_file_with_the_renamed_metric_gets_an_error_naming_the_new_ones(
    tmp_path: Path,
) -> None:
    path = tmp_path / "lab.yaml"
    path.write_text(textwrap.dedent("""\
        version: 1
        profiles:
          - name: lab
            match: {controller: PS5012-E12}
            source: PS4 exit 25 ms
            limits:
              idle_wake_read_4k_qd1:
                max_exit_latency_us: {max: 25000}
        """))
    with pytest.raises(ConfigErrors) as info:
        ThresholdSet.load([path])
    [error] = info.value.errors
    text = str(error)
    assert "lab.yaml:8" in text
    assert "metric 'max_exit_latency_us' of idle_wake_read_4k_qd1 was renamed" in text
    assert "entry + exit" in text and "50,000 us" in text
    assert "max_transition_latency_us" in text and "max_idle_exit_latency_us" in text


def test_emulated_list_describes_the_factor_and_the_reported_power_table() -> None:
    from pytest_ssdqual.cli.emu import describe_model

    text = "\n".join(describe_model(load_model(E12_MODEL)))
    assert "figures x0.1 of the real drive's (figures_scale: an NVMe drive's speed" in text
    assert ("NVMe power states (reported, not emulated): PS0 8.9 W, PS1 2.3 W, PS2 1.8 W, "
            "PS3 0.049 W idle 2,000/2,000 us, PS4 0.0018 W idle 25,000/25,000 us; "
            "APST supported") in text
    assert "WCTEMP 70 °C, CCTEMP 90 °C" in text
