"""The Phison E12 twin through the plugin -- its limits are the real drive's
scaled by its ``figures_scale`` (0.1), each scaled verdict says so; a real drive (here a file
target assigned the same controller) in the same session is judged by the unscaled limits.

Builds the emulated drive (root, cgroup-v1 blkio); fio is the stand-in (it never touches the
drive), so the figures are the stand-in's: 280 MB/s for every job.
"""

from __future__ import annotations

import json

import pytest

from pytest_ssdqual.emulate.host import host_problems
from pytest_ssdqual.results.store import ResultsStore, StoredRun

from ..conftest import REPO, FakeFio, flat_verdicts

NOTE = "limit scaled x0.1 for the emulated twin (figures_scale)"
SUITE = ("import pytest\n\n\n@pytest.mark.destructive\n"
         "def test_write(qualify):\n    qualify('seq_write_128k_qd32')\n")


def test_the_twin_is_judged_by_scaled_limits_a_real_drive_never(
    pytester: pytest.Pytester, fake_fio: FakeFio, monkeypatch: pytest.MonkeyPatch
) -> None:
    problems = host_problems()
    if problems:
        pytest.skip("; ".join(problems))
    monkeypatch.setenv("FAKEFIO_BW_MBPS", "280")
    pytester.makepyfile(test_suite=SUITE)
    store = pytester.path / "store"
    result = pytester.runpytest(
        f"--fio-bin={fake_fio.path}", "-p", "no:cacheprovider",
        f"--emu-models={REPO / 'emulated'}", f"--thresholds={REPO / 'thresholds'}",
        "--drive=emu:phison-e12-960g", f"--drive=file:{pytester.path / 'real.img'}",
        "--controller=PS5012-E12", "--ssd-profile=smoke", f"--results-dir={store}",
    )
    # the twin passes 2,700 x 0.1 = 270; the file target fails the family floor 500, unscaled
    result.assert_outcomes(passed=1, failed=1)
    out = result.stdout.str()
    table = flat_verdicts(out).split("= ssdqual verdicts =")[1]
    twin_block = table.split("\nemu:phison-e12-960g\n")[1].split("\nfile:")[0]
    twin_rows = [line for line in twin_block.splitlines()
                 if line.startswith("seq_write_128k_qd32  write.bw_mbps")]
    assert twin_rows and ">= 270 (scaled x0.1)" in twin_rows[0] and "PASS" in twin_rows[0]
    assert "write.bw_mbps 280 < min 500" in out
    # the failure line shows in FAILURES and, under -ra (CI passes it), in the short summary too
    failures = [line for line in out.splitlines() if "280 < min 500" in line]
    assert failures and not [line for line in failures if "scaled" in line]
    [run] = [StoredRun.load(p) for p in ResultsStore(store).complete_runs()]
    by_kind = {r["facts"]["kind"]: r for r in run.records}
    assert by_kind["emu"]["facts"]["figures_scale"] == 0.1
    assert by_kind["file"]["facts"]["figures_scale"] is None
    twin = {v["metric"]: v for v in by_kind["emu"]["verdicts"]}
    assert twin["write.bw_mbps"]["min"] == 270 and NOTE in twin["write.bw_mbps"]["source"]
    assert twin["write.bw_mbps"]["status"] == "pass"
    real = {v["metric"]: v for v in by_kind["file"]["verdicts"]}
    assert real["write.bw_mbps"]["min"] == 500 and "scaled" not in real["write.bw_mbps"]["source"]
    assert json.dumps(by_kind["file"]).count("figures_scale)") == 0
