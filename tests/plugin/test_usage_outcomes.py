"""Usage errors and how a run ends: ``--fio-bin`` pointing at nothing, a bare
``--drive=sdb``, broken tests reported in one line and kept in the verdict table, write tests
skipped by a refusal not exiting 0, and a run on an unconfirmed drive writing nothing.

fio is the recording stand-in ``tests/fakefio.py``: no device is ever touched.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from pytest_ssdqual.drive.spec import parse_drive_option
from pytest_ssdqual.errors import ConfigError

from ..conftest import REPO, FakeFio, flat_verdicts, unwrapped
from .test_plugin import _setup


def _args(pytester: pytest.Pytester, fio: str, *extra: str) -> list[str]:
    """The two-test suite of test_plugin (a read, a write) with floors every run meets."""
    th = _setup(pytester, read_min=1, write_min=1)
    return [f"--thresholds={th}", f"--fio-bin={fio}", "--ssd-profile=smoke",
            "-p", "no:cacheprovider", *extra]


def _existing_file(pytester: pytest.Pytester, size: int = 4 << 20) -> Path:
    """A file that exists before the run: writes to it need --confirm-destroy=<its path>."""
    path = pytester.path / "existing.img"
    path.write_bytes(os.urandom(size))
    return path


# ------------------------------------------------------------------------------ usage errors


def test_fio_bin_pointing_at_nothing_is_a_usage_error_naming_the_path(
    pytester: pytest.Pytester,
) -> None:
    result = pytester.runpytest(*_args(pytester, "/nonexistent/fio"),
                                f"--drive=file:{pytester.path / 't.img'}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    err = result.stderr.str()
    assert ("pytest-ssdqual: --fio-bin: /nonexistent/fio does not exist or is not an "
            "executable file (fix: give the path of the fio executable (which fio)") in err
    assert "Traceback" not in err + flat_verdicts(result.stdout.str())


def test_fio_bin_that_is_a_directory_is_a_usage_error(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest(*_args(pytester, str(pytester.path)),
                                f"--drive=file:{pytester.path / 't.img'}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert f"--fio-bin: {pytester.path} does not exist or is not an executable" in (
        result.stderr.str())


def test_a_relative_fio_bin_is_taken_from_where_pytest_was_started(
    pytester: pytest.Pytester, fake_fio: FakeFio
) -> None:
    """``--fio-bin=tools/fio`` passed the existence check but fio is started from per-test
    folders, so every test broke with a FileNotFoundError traceback (newcomer trial)."""
    (pytester.path / "tools").mkdir()
    (pytester.path / "tools" / "fio").symlink_to(fake_fio.path)
    result = pytester.runpytest_subprocess(*_args(pytester, "tools/fio"),
                                           f"--drive=file:{pytester.path / 't.img'}")
    result.assert_outcomes(passed=2)
    assert [c["rw"] for c in fake_fio.calls() if c["job"] and "[prefill" not in c["job"]] == [
        "read", "write"]


def test_bare_device_name_suggests_the_dev_path(tmp_path: Path) -> None:
    dev = tmp_path / "dev"
    dev.mkdir()
    (dev / "sdb").touch()  # stands in for the device node /dev/sdb
    with pytest.raises(ConfigError) as info:
        parse_drive_option("sdb", cwd=str(tmp_path / "cwd"), dev_dir=str(dev))
    assert info.value.key == "--drive"
    assert str(info.value) == (
        f"--drive: 'sdb' is not a file here ({tmp_path}/cwd/sdb does not exist); did you mean "
        f"--drive={dev}/sdb? (fix: write --drive={dev}/sdb (device paths start with {dev}/))")
    # a name that is not in /dev either keeps the scratch-file hint
    with pytest.raises(ConfigError, match="write --drive=file:.* to have a scratch file") as err:
        parse_drive_option("sdq", cwd=str(tmp_path / "cwd"), dev_dir=str(dev))
    assert f"give a block device ({dev}/sdX, {dev}/nvme0n1; lsblk lists them)" in str(err.value)


def test_bare_name_of_a_real_disk_is_a_usage_error_suggesting_dev(
    pytester: pytest.Pytester, fake_fio: FakeFio
) -> None:
    names = sorted(n for n in os.listdir("/sys/block") if os.path.exists(f"/dev/{n}"))
    if not names:
        pytest.skip("no block device node in /dev here")
    result = pytester.runpytest(*_args(pytester, fake_fio.path), f"--drive={names[0]}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert f"did you mean --drive=/dev/{names[0]}?" in result.stderr.str()
    assert fake_fio.calls() == []  # usage errors come before any I/O


# ------------------------------------------------------------------------------ broken tests


def test_fio_error_is_one_line_not_a_traceback_and_stays_in_the_table(
    pytester: pytest.Pytester, fake_fio: FakeFio, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKEFIO_MODE", "error5")
    monkeypatch.setenv("FAKEFIO_ONLY", "seq_read_128k_qd32")
    target = pytester.path / "t.img"
    result = pytester.runpytest(*_args(pytester, fake_fio.path), f"--drive=file:{target}",
                                "-k", "test_read")
    result.assert_outcomes(failed=1, deselected=1)
    out = flat_verdicts(result.stdout.str())
    failures = out.split("= FAILURES =")[1].split("= ssdqual verdicts =")[0]
    lines = [line for line in failures.splitlines()
             if line.strip() and "____" not in line and not line.startswith("=")]
    assert lines[0].startswith(f"FioJobError: file:{target} seq_read_128k_qd32: ")
    assert "error 5" in lines[0]
    assert "Traceback" not in failures and "session.py" not in failures
    assert "raise " not in failures
    # the verdict table keeps the test, broken, with its reason (one line under its drive)
    table = out.split("= ssdqual verdicts =")[1]
    assert f"\nfile:{target}\n  broken seq_read_128k_qd32: FioJobError: " in table
    assert result.ret == pytest.ExitCode.TESTS_FAILED


def test_unusable_drive_breaks_its_tests_in_one_line_each(
    pytester: pytest.Pytester, fake_fio: FakeFio
) -> None:
    real = _existing_file(pytester)
    link = pytester.path / "link.img"
    link.symlink_to(real)  # a file target is never reached through a symlink
    result = pytester.runpytest(*_args(pytester, fake_fio.path), f"--drive=file:{link}")
    result.assert_outcomes(errors=2)
    out = flat_verdicts(result.stdout.str())
    errors = out.split("= ERRORS =")[1].split("= ssdqual verdicts =")[0]
    assert errors.count(f"DriveUnusable: file:{link}: --drive: file:{link} is a symlink") == 2
    assert "Traceback" not in errors and "drive.py" not in errors
    table = out.split("= ssdqual verdicts =")[1]
    assert table.count("  broken ") == 2
    assert f"\nfile:{link}\n  broken test_read: DriveUnusable: " in table
    assert [c for c in fake_fio.calls() if c["job"]] == []


def test_bug_in_a_test_keeps_its_traceback(pytester: pytest.Pytester, fake_fio: FakeFio) -> None:
    pytester.makepyfile(test_bug="def test_bug(ssd_drive):\n    {}['missing']\n")
    result = pytester.runpytest(*_args(pytester, fake_fio.path), "test_bug.py",
                                f"--drive=file:{pytester.path / 't.img'}")
    result.assert_outcomes(failed=1)
    assert "KeyError: 'missing'" in flat_verdicts(result.stdout.str())
    assert "{}['missing']" in flat_verdicts(result.stdout.str())  # the source line of the traceback


# ------------------------------------------------------------------------------ skipped writes


def test_skipped_writes_exit_1_with_the_reason(
    pytester: pytest.Pytester, fake_fio: FakeFio
) -> None:
    target = _existing_file(pytester)
    result = pytester.runpytest(*_args(pytester, fake_fio.path), f"--drive={target}")
    result.assert_outcomes(passed=1, skipped=1)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert (f"INCOMPLETE: 1 write test(s) skipped on {target} (writes refused, reasons "
            "in the verdict table): the drive is not qualified, so the run exits 1; add "
            "--allow-skipped-writes to accept a read-only run") in unwrapped(
        result.stdout.str())


def test_allow_skipped_writes_exits_0_and_still_says_so(
    pytester: pytest.Pytester, fake_fio: FakeFio
) -> None:
    target = _existing_file(pytester)
    result = pytester.runpytest(*_args(pytester, fake_fio.path), f"--drive={target}",
                                "--allow-skipped-writes")
    result.assert_outcomes(passed=1, skipped=1)
    assert result.ret == pytest.ExitCode.OK
    assert (f"INCOMPLETE: 1 write test(s) skipped on {target} (writes refused); exit status "
            "not changed (--allow-skipped-writes)") in flat_verdicts(result.stdout.str())


def test_confirmed_run_with_nothing_skipped_exits_0(
    pytester: pytest.Pytester, fake_fio: FakeFio
) -> None:
    target = _existing_file(pytester)
    result = pytester.runpytest(*_args(pytester, fake_fio.path), f"--drive={target}",
                                f"--confirm-destroy={target}")
    result.assert_outcomes(passed=2)
    assert result.ret == pytest.ExitCode.OK
    assert "INCOMPLETE" not in flat_verdicts(result.stdout.str())


def test_other_skips_do_not_change_the_exit_status(
    pytester: pytest.Pytester, fake_fio: FakeFio
) -> None:
    pytester.makepyfile(test_other="import pytest\n\ndef test_s():\n    pytest.skip('nope')\n")
    result = pytester.runpytest(*_args(pytester, fake_fio.path), "test_other.py",
                                f"--drive=file:{pytester.path / 't.img'}")
    result.assert_outcomes(skipped=1)
    assert result.ret == pytest.ExitCode.OK


# ------------------------------------------------------------------- the unconfirmed dry run


def _all_suites_unconfirmed(
    pytester: pytest.Pytester, fake_fio: FakeFio, drive: str
) -> pytest.RunResult:
    """``pytest --drive=DRIVE suites/`` without --confirm-destroy, the default profile (quick
    with a drive): every job fio got reads with --readonly, write tests skipped, exit 1."""
    result = pytester.runpytest(
        f"--drive={drive}", f"--fio-bin={fake_fio.path}", str(REPO / "suites"),
        f"--thresholds={REPO / 'thresholds'}", "-p", "no:cacheprovider")
    assert "ssdqual: profile quick" in flat_verdicts(result.stdout.str())
    assert result.parseoutcomes().get("skipped", 0) >= 7  # 4 write workloads + 3 dirty-state
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert "INCOMPLETE: " in flat_verdicts(result.stdout.str())
    jobs = [c for c in fake_fio.calls() if c["job"]]
    assert jobs, "the read tests ran"
    assert f"ssdqual: wrote 0 bytes to {drive} in 0 of {len(jobs)} fio runs" in (
        flat_verdicts(result.stdout.str()))
    for call in jobs:
        assert "--readonly" in call["argv"]
        assert call["rw"] in ("read", "randread"), call["rw"]
    return result


def test_every_suite_on_an_unconfirmed_file_writes_nothing(
    pytester: pytest.Pytester, fake_fio: FakeFio
) -> None:
    """No write job, no purge either: the file's bytes are unchanged."""
    target = _existing_file(pytester)
    before = hashlib.sha256(target.read_bytes()).hexdigest()
    _all_suites_unconfirmed(pytester, fake_fio, str(target))
    assert hashlib.sha256(target.read_bytes()).hexdigest() == before


def test_every_suite_on_an_unconfirmed_block_device_writes_nothing(
    pytester: pytest.Pytester, fake_fio: FakeFio, loop_device: str
) -> None:
    _all_suites_unconfirmed(pytester, fake_fio, loop_device)
