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
