"""The plugin is inert in a pytest run that does not use it (issue 11 item 4): with no
``--drive``, no ssdqual option and no test asking for a drive, it installs no SIGTERM handler,
never runs ``fio --version``, leaves ``--dist`` as given and prints nothing -- as pytest-xdist
registers its ``DSession`` only when distributing.

fio is the recording stand-in ``tests/fakefio.py``, put on ``PATH`` as ``fio`` (``--fio-bin``
would itself put the plugin in play).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ..conftest import FakeFio

PLAIN_TESTS = """
import signal

def test_sigterm_left_alone():
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL

def test_worker_tags_no_group(request):
    assert not request.config.getvalue("loadgroup")
"""
#: The controller's distribution mode, written at the end of the run.
DIST_CONFTEST = """
from pathlib import Path

def pytest_unconfigure(config):
    if not hasattr(config, "workerinput"):
        Path("dist.txt").write_text(config.getoption("dist"))
"""


@pytest.fixture
def fio_on_path(fake_fio: FakeFio, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeFio:
    """The recording fake fio as ``fio`` on ``PATH``."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "fio").symlink_to(fake_fio.path)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    return fake_fio


def test_a_run_without_drive_tests_is_left_alone(pytester: pytest.Pytester,
                                                 fio_on_path: FakeFio) -> None:
    pytester.makepyfile(test_plain=PLAIN_TESTS)
    pytester.makeconftest(DIST_CONFTEST)
    alluredir = pytester.path / "allure"
    result = pytester.runpytest_subprocess("-n", "2", "--dist=load", "-p", "no:cacheprovider",
                                           f"--alluredir={alluredir}")
    result.assert_outcomes(passed=2)
    out = result.stdout.str().replace("plugins: ssdqual-", "plugins: ") + result.stderr.str()
    assert "ssdqual" not in out  # no header, no summary
    assert fio_on_path.calls() == []  # not even fio --version for the header
    assert not (alluredir / "environment.properties").exists()
    assert (pytester.path / "dist.txt").read_text() == "load"  # not forced to loadgroup


def test_a_drive_test_without_options_still_gets_the_header(pytester: pytest.Pytester,
                                                            fio_on_path: FakeFio) -> None:
    """No ssdqual option, but a test asks for the drive: the header comes after collection."""
    pytester.makepyfile(test_drive="def test_drive(ssd_drive):\n    assert ssd_drive\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--collect-only")
    assert "ssdqual: profile smoke" in result.stdout.str()
    assert [c["argv"] for c in fio_on_path.calls()] == [["--version"]]
