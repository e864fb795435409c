"""OCP datacenter logs and SMART thermal fields through the plugin, with the recording ``nvme``
stand-in (``tests/fakenvme.py``) on PATH in place of an NVMe drive we must not touch.

The target is a scratch file (fio is the stand-in too); the plugin's health reads are the
real ``query_health`` told the target is an NVMe drive, so every command it runs goes to the
stand-in, which records them. C0h answers are the real ``nvme ocp smart-add-log`` output of
``cases/real/nvme``; after the write, one more end-to-end detected error and three more soft
ECC errors (derived from the real file in this test); C1h-C3h are the BUILT fixtures
(``tests/data/nvme_ocp``).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from pytest_ssdqual.drive import health_query
from pytest_ssdqual.plugin import health as plugin_health
from pytest_ssdqual.results.run_folder import StoredRun
from pytest_ssdqual.results.store import ResultsStore

from ..conftest import READ_WRITE_SUITE, FakeFio, flat_verdicts
from .test_health_plugin import _rejudge

TESTS = Path(__file__).resolve().parents[1]
BUILT = TESTS / "data" / "nvme_ocp"


def _stand_in(real_cases: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``nvme`` and ``smartctl`` stand-ins first on PATH; returns their answer folder."""
    real = real_cases / "nvme"
    answers = tmp_path / "answers"
    answers.mkdir()
    shutil.copy(real / "nvme-cli-2.11_smart-log_critical_warning_object.json",
                answers / "smart-log.json")
    c0 = json.loads((real / "nvme-cli_ocp_smart-add-log_C0_hi_lo.json").read_text())
    (answers / "ocp_smart-add-log.0.json").write_text(json.dumps(c0))
    c0["End to end detected errors"] += 1
    c0["Soft ecc error count"] += 3
    (answers / "ocp_smart-add-log.json").write_text(json.dumps(c0))
    for log, name in (("C1", "error-recovery-log"), ("C2", "fw-activate-history"),
                      ("C3", "latency-monitor-log")):
        shutil.copy(next(BUILT.glob(f"BUILT_*_{log}.json")), answers / f"ocp_{name}.json")
    (answers / "id-ctrl.json").write_text(json.dumps({"wctemp": 353, "cctemp": 358}))
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for program in ("nvme", "smartctl"):
        shutil.copy(TESTS / "fakenvme.py", bin_dir / program)
        (bin_dir / program).chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKENVME_DIR", str(answers))
    monkeypatch.setattr(plugin_health, "query_health", lambda path, **_: (
        health_query.query_health(path, kind="disk", transport="NVMe")))
    return answers


def test_ocp_metrics_judged_stored_and_a_delta_fails_the_destructive_test(
    pytester: pytest.Pytester, fake_fio: FakeFio, monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path, capsys: pytest.CaptureFixture[str], real_cases: Path,
) -> None:
    answers = _stand_in(real_cases, tmp_path, monkeypatch)
    pytester.makepyfile(test_rw=READ_WRITE_SUITE)
    target = pytester.path / "target.img"
    limits = pytester.path / "limits.yaml"
    limits.write_text("version: 1\nprofiles: []\n")
    results = pytester.path / "results"
    result = pytester.runpytest(
        "test_rw.py", f"--drive=file:{target}", f"--fio-bin={fake_fio.path}",
        f"--thresholds={limits}", "--ssd-profile=smoke", f"--results-dir={results}",
        "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=1)
    out = flat_verdicts(result.stdout.str())
    change = "session start -> after seq_write_128k_qd32"
    assert f"HEALTH ({change}): ocp_e2e_detected_errors_delta 1 > max 0" in out
    failed = [line for line in out.splitlines() if line.startswith("FAILED")]
    assert len(failed) == 1 and "::test_write" in failed[0]
    row = [line.split() for line in out.splitlines()
           if f"ocp_e2e_detected_errors_delta @ {change}" in line]
    assert len(row) == 1 and row[0][0] == "health" and row[0][-1] == "FAIL", row
    # the exact commands, per reading: smartctl reads nothing, then nvme-cli
    calls = [json.loads(line)["argv"] for line in (answers / "calls.jsonl").read_text()
             .splitlines()]
    nvme = [c[1:] for c in calls if c[0] == "nvme"]
    one_reading = [["smart-log", "-o", "json", str(target)],
                   ["id-ctrl", "-o", "json", str(target)],
                   ["ocp", "smart-add-log", "-o", "json", str(target)],
                   ["ocp", "error-recovery-log", "-o", "json", str(target)],
                   ["ocp", "fw-activate-history", "-o", "json", str(target)],
                   ["ocp", "latency-monitor-log", "-o", "json", str(target)]]
    assert nvme == one_reading * 2  # session start, after the destructive write
    assert all(c[0] in ("nvme", "smartctl") for c in calls)
    # the stored records: the reading after the write holds the OCP and thermal values
    [run] = [StoredRun.load(p) for p in ResultsStore(results).complete_runs()]
    health = {next(iter(r["states"].values())): r for r in run.records
              if r["workload"] == "health"}
    after = health["after seq_write_128k_qd32"]["metrics"]
    assert after["ocp_e2e_detected_errors"] == 1 and after["ocp_soft_ecc_errors"] == 1120
    assert after["ocp_lm_active_bucket3_write"] == 1
    assert after["ocp_fw_activation_failures"] == 1 and after["thm_temp1_total_time_s"] == 1474
    assert after["nand_written_bytes"] == 39074645999616
    delta = health[change]["metrics"]
    assert delta["ocp_soft_ecc_errors_delta"] == 3
    assert delta["ocp_lm_static_bucket0_read_delta"] == 0
    # rejudged like any figure: a limit on soft ECC errors added later fails the change
    stricter = pytester.path / "stricter.yaml"
    stricter.write_text("version: 1\nprofiles:\n  - name: lab\n    match: {}\n    source: lab\n"
                        "    limits:\n      health:\n        ocp_soft_ecc_errors: "
                        "{max_delta: 0}\n")
    code, said = _rejudge(results, stricter, capsys)
    assert code == 1, said
    assert "  ocp_soft_ecc_errors_delta 3 > max 0" in said, said


def test_a_drive_refusing_ocp_logs_with_exit_1_is_asked_at_each_reading(
    pytester: pytest.Pytester, fake_fio: FakeFio, monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path, real_cases: Path,
) -> None:
    answers = _stand_in(real_cases, tmp_path, monkeypatch)
    for answer in answers.glob("ocp_*.json"):  # a non-OCP NVMe drive: nvme-cli refuses C0h
        answer.unlink()
    monkeypatch.setattr(plugin_health, "query_health", lambda path, *, kind, transport, **kw: (
        health_query.query_health(path, kind="disk", transport="NVMe", **kw)))
    pytester.makepyfile(test_rw=READ_WRITE_SUITE)
    limits = pytester.path / "limits.yaml"
    limits.write_text("version: 1\nprofiles: []\n")
    results = pytester.path / "results"
    result = pytester.runpytest(
        "test_rw.py", f"--drive=file:{pytester.path / 'target.img'}",
        f"--fio-bin={fake_fio.path}", f"--thresholds={limits}", "--ssd-profile=smoke",
        f"--results-dir={results}", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)
    calls = [json.loads(line)["argv"][1:3] for line in (answers / "calls.jsonl").read_text()
             .splitlines() if json.loads(line)["argv"][0] == "nvme"]
    assert calls.count(["smart-log", "-o"]) == 2  # two readings: session start, after the write
    # exit 1 without JSON is no definite refusal (a drive just back from a power cycle says
    # the same): asked again at the second reading, and C1h-C3h never (no C0h)
    assert [c for c in calls if c[0] == "ocp"] == [["ocp", "smart-add-log"]] * 2
