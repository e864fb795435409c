"""A file target whose file system does direct I/O in 4096-byte units (statx
``STATX_DIOALIGN`` stood in for; the real set-up is ``tests/e2e/test_e2e_4kn_file.py``) through
``pytester`` with the fio stand-in: no fio job ever gets a transfer below the unit."""

from __future__ import annotations

import pytest

from pytest_ssdqual.drive import dio_align

from ..conftest import REPO, FakeFio

PATTERN_SUITE = """
def test_small(fio_workload):
    fio_workload(rw="randread", bs=512)

def test_4k(fio_workload):
    fio_workload(rw="randread", bs="4k")
"""


def test_a_512_byte_pattern_on_a_4096_byte_file_target_is_not_applicable(
    pytester: pytest.Pytester, fake_fio: FakeFio, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A plain fio pattern whose transfers are no whole number of the target's sectors is
    skipped as not applicable (fio would fail it with EINVAL); a 4 KiB one runs."""
    monkeypatch.setattr(dio_align, "statx_dio_offset_align", lambda p: 4096)
    pytester.makepyfile(test_patterns=PATTERN_SUITE)
    result = pytester.runpytest(
        f"--drive=file:{pytester.path / 'target.img'}", f"--fio-bin={fake_fio.path}",
        "--ssd-profile=smoke", "-p", "no:cacheprovider", "-rs")
    result.assert_outcomes(passed=1, skipped=1)
    result.stdout.fnmatch_lines([
        f"SKIPPED * rand_read_512_qd1: 512-byte transfers are no whole number of "
        f"file:{pytester.path / 'target.img'}'s 4096-byte logical sectors *"])
    jobs = [c["job"] for c in fake_fio.calls() if c["job"]]
    assert not any("bs=512\n" in j for j in jobs)
    assert any("bs=4096\n" in j for j in jobs)
    assert result.ret == 0  # not applicable: the run is not incomplete


def test_the_transfer_sweep_on_a_4096_byte_file_target_never_runs_512(
    pytester: pytest.Pytester, fake_fio: FakeFio, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(dio_align, "statx_dio_offset_align", lambda p: 4096)
    result = pytester.runpytest(
        str(REPO / "suites" / "test_transfer_size.py"),
        f"--drive=file:{pytester.path / 'target.img'}", f"--fio-bin={fake_fio.path}",
        "--ssd-profile=smoke", "--scratch-size=64M", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    sizes = sorted({int(line.split("=", 1)[1]) for c in fake_fio.calls() if c["job"]
                    for line in c["job"].splitlines() if line.startswith("bs=")})
    assert sizes[0] == 4096 and 512 not in sizes and 2048 not in sizes
