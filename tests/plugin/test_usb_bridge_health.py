"""The found case B38 through pytest: a USB disk in a fake sysfs tree (the case's
``ssdq_fakesys`` plugin points ``DriveTarget.open`` at it) whose smartctl answers "Unknown USB
bridge ... Please specify device type with the -d option." (exit 1).

* smartctl never reads it: the health row says NOT READ with the reason, the run exits 1 with
  an INCOMPLETE line, and the results store records the drive as not passed (before: exit 0,
  no health row, the drive ``"passed": true``);
* smartctl reads it with ``-d sntjmicron`` only: every health call after identification passes
  that type.

Needs root for the stand-in device node (``mknod``, major 240, no driver; never opened).
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from ..conftest import FAKE_FIO, REPO, cases_dir, flat_verdicts, need_root
from ..unit.test_identity import USB_PATH, FakeSysfs

B38 = cases_dir() / "found" / "t3" / "B38"
SUITES = [str(REPO / "suites" / "test_sequential.py"), str(REPO / "suites" / "test_health.py")]

#: smartctl that reads the drive only with ``-d $WORKS`` (prints $GOOD_FILE), else $SMARTCTL_FILE
BRIDGE_STANDIN = """#!/bin/sh
echo "smartctl $*" >> "${TOOL_LOG:-/dev/null}"
case " $* " in
  *" -d $WORKS "*) cat "$GOOD_FILE"; exit 0;;
esac
cat "$SMARTCTL_FILE"
exit 1
"""


@pytest.fixture
def b38(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> Path:
    """The fake sysfs tree, the stand-in node ``<tmp>/dev/sdN`` and the smartctl stand-in on
    PATH; returns the node's path. ``$WORKS`` unset: smartctl never reads the drive. Each
    test's node has a name of its own (``sdx``, ``sdy``): the drive lock is keyed by the node's
    name (``/run/lock/pytest-ssdqual-sdx.lock``), so two of these tests on two xdist workers at
    once broke each other's run ("in use by another pytest-ssdqual run")."""
    need_root()
    if not (B38 / "ssdq_fakesys.py").is_file():
        pytest.skip(f"found case {B38} not found: set SSDQUAL_CASES_DIR")
    root = tmp_path / "fakesys"
    fake = FakeSysfs(root / "sys")
    name = "sdx" if "bridge_type_that_works" in request.node.name else "sdy"
    fake.disk(name, USB_PATH, sectors=976773168, rotational=1,
              device={"model": "HDS721050DLE630\n", "vendor": "ATA     \n"},
              extra={"dev": "240:0\n", "ro": "0\n"})
    (root / "mountinfo").write_text("")
    (root / "swaps").write_text("Filename\tType\tSize\tUsed\tPriority\n")
    dev = tmp_path / "dev"
    dev.mkdir()
    os.mknod(dev / name, 0o600 | stat.S_IFBLK, os.makedev(240, 0))
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "smartctl").write_text(BRIDGE_STANDIN)
    (bindir / "smartctl").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("SSDQ_FAKESYS", str(root))
    monkeypatch.setenv("SMARTCTL_FILE", str(B38 / "smartctl-7.4_unknown_usb_bridge_exit1.json"))
    monkeypatch.setenv("TOOL_LOG", str(tmp_path / "tool_calls.log"))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(B38), str(REPO)]))
    monkeypatch.setenv("FAKEFIO_LOG", str(tmp_path / "fakefio.log"))
    return dev / name


def _run(pytester: pytest.Pytester, node: Path, results: Path) -> pytest.RunResult:
    return pytester.runpytest_subprocess(
        "-p", "ssdq_fakesys", *SUITES, "-k", "seq_read_128k_qd32 or health",
        f"--drive={node}", f"--fio-bin={FAKE_FIO}", "--ssd-profile=smoke",
        f"--results-dir={results}", "-p", "no:cacheprovider", "-rA", timeout=120)


def _calls(tmp_path: Path) -> list[str]:
    return (tmp_path / "tool_calls.log").read_text().splitlines()


def test_health_never_read_makes_the_run_incomplete(pytester: pytest.Pytester, b38: Path,
                                                     tmp_path: Path) -> None:
    results = tmp_path / "results"
    result = _run(pytester, b38, results)
    out = flat_verdicts(result.stdout.str())
    assert result.ret == 1, out
    result.assert_outcomes(passed=1, skipped=2)  # the read test as found; the health tests
    # every bridge type was tried, once, at identification; health tried them again
    calls = _calls(tmp_path)
    assert calls[:5] == [f"smartctl -j -i {b38}", f"smartctl -j -d sat -i {b38}",
                         f"smartctl -j -d sntjmicron -i {b38}",
                         f"smartctl -j -d sntasmedia -i {b38}",
                         f"smartctl -j -d sntrealtek -i {b38}"]
    assert f"smartctl -j -d sntrealtek -a {b38}" in calls
    assert (f"  health not read: SMART / health never checked: {b38}: no health data: "
            "smartctl 7.4 read no device data") in out
    assert (f"INCOMPLETE: {b38}: its SMART / health could not be read, so the drive is not "
            "qualified and the run exits 1") in out
    (run_json,) = results.glob("*/run.json")
    info = json.loads(run_json.read_text())
    assert info["exitstatus"] == 1 and info["passed"] is False
    (drive,) = info["drives"]
    assert drive["passed"] is False


def test_a_bridge_type_that_works_is_used_for_every_health_read(
    pytester: pytest.Pytester, b38: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    real_cases: Path
) -> None:
    monkeypatch.setenv("WORKS", "sntjmicron")
    monkeypatch.setenv("GOOD_FILE",
                       str(real_cases / "smartctl" / "smartctl-7.0_sat_samsung860evo_xall.json"))
    result = _run(pytester, b38, tmp_path / "results")
    out = flat_verdicts(result.stdout.str())
    calls = _calls(tmp_path)
    assert calls[:3] == [f"smartctl -j -i {b38}", f"smartctl -j -d sat -i {b38}",
                         f"smartctl -j -d sntjmicron -i {b38}"]
    health_calls = [c for c in calls if " -a " in c]
    assert health_calls and set(health_calls) == {f"smartctl -j -d sntjmicron -a {b38}"}
    assert "NOT READ" not in out and "could not be read" not in out
    assert f"{b38}: Samsung SSD 860 EVO 500GB, firmware RVT02B6Q, S/N S3YZNB0KB00864E" in out
