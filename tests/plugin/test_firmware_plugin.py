"""The firmware update test's options and skips, without I/O (fio stand-in)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ..conftest import REPO, FakeFio

SUITE = (REPO / "suites" / "test_firmware_update.py").read_text()


@pytest.mark.parametrize(("args", "message"), [
    (["--firmware-action=0"], "'0' is no commit action that installs and activates"),
    # action 2 activates the slot's own image: --firmware-image would never run
    (["--firmware-action=2"], "'2' is no commit action that installs and activates"),
    # a mistyped image path skipped the test and the run passed with nothing tested
    (["--firmware-image=/nonexistent/fw.bin"], "'/nonexistent/fw.bin' does not exist or is not "
                                               "a file: give the firmware image's path"),
    (["--firmware-slot=9"], "'9' is no firmware slot: NVMe slots are 1-7"),
    (["--firmware-xfer=4k"], "'4k' is no transfer size"),
    (["--firmware-updater=quarch:USB::X"], "'quarch' is not a firmware updater plug"),
])
def test_bad_firmware_options_are_usage_errors(pytester: pytest.Pytester, fake_fio: FakeFio,
                                               args: list[str], message: str) -> None:
    pytester.makepyfile(test_firmware_update=SUITE)
    result = pytester.runpytest(f"--fio-bin={fake_fio.path}", *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert message in result.stderr.str()
    assert fake_fio.job_rws() == []


def test_no_updater_or_no_image_skips_with_the_reason(pytester: pytest.Pytester,
                                                      fake_fio: FakeFio, tmp_path: Path) -> None:
    pytester.makepyfile(test_firmware_update=SUITE)
    image = tmp_path / "fw.bin"
    image.write_text("FW2\n")
    result = pytester.runpytest(f"--fio-bin={fake_fio.path}", "-rs", f"--firmware-image={image}")
    result.assert_outcomes(skipped=1)
    assert "no firmware updater for" in result.stdout.str()
    assert "give --firmware-updater=SPEC or a plugs: firmware_updater: entry" in " ".join(
        result.stdout.str().split())
    result = pytester.runpytest(f"--fio-bin={fake_fio.path}", "-rs", "--firmware-updater=nvme")
    result.assert_outcomes(skipped=1)
    assert "no --firmware-image given" in result.stdout.str()
    assert fake_fio.job_rws() == []


STOPPED_SUITE = '''
def test_a_first(ssd_drive):
    ssd_drive.probes.stop_reason = "x now reports firmware NEW (was OLD), and the threshold "\\
        "files (limits.yaml) give it no limits: conflict. Its later tests are not run"

def test_b_later(qualify):
    qualify("seq_read_128k_qd32")
'''


def test_a_stopped_drive_breaks_its_later_tests_with_the_reason(
        pytester: pytest.Pytester, fake_fio: FakeFio) -> None:
    """``DriveProbes.stop_reason`` (``adopt_reported_firmware`` sets it when the new build's
    threshold profiles conflict): the drive's later tests are errors with it, no fio job."""
    from ..conftest import limits_yaml, qual_args, write_suite

    th = write_suite(pytester.path, STOPPED_SUITE,
                     limits_yaml({"seq_read_128k_qd32": {"read.bw_mbps": {"min": 1}}}))
    result = pytester.runpytest_subprocess(*qual_args(pytester.path, th, str(fake_fio.path)))
    result.assert_outcomes(passed=1, errors=1)
    assert "give it no limits: conflict. Its later tests are not run" in result.stdout.str()
    assert fake_fio.job_rws() == []
