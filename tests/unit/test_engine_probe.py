"""The I/O-engine probe does not depend on the temp folder's O_DIRECT support (found
case B31: a tmpfs basetemp on Linux < 6.6 broke every test with "no fio I/O engine works
here" although the drive under test takes O_DIRECT)."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from pytest_ssdqual.fio.runner import FioRunner

from ..conftest import FakeFio

# A fio stand-in for a folder without O_DIRECT (tmpfs before Linux 6.6): a direct=1 open of a
# file under NO_ODIRECT fails with what real fio prints (JonMagon/KDiskMark #108), exit 1;
# everything else goes to the project's fake fio.
NO_ODIRECT_FIO = """#!{python}
import os, runpy, sys
argv = sys.argv[1:]
prefix = {prefix!r}
name = next((a.split("=", 1)[1] for a in argv if a.startswith("--filename=")), "")
if name.startswith(prefix) and "--direct=1" in argv:
    sys.stderr.write("fio: looks like your file system does not support direct=1/buffered=0\\n"
                     "fio: destination does not support O_DIRECT\\n"
                     f"fio: pid=4242, err=22/file:filesetup.c:805, func=open(\\"{{name}}\\"), "
                     "error=Invalid argument\\n")
    sys.exit(1)
sys.exit(runpy.run_path({fake!r})["main"](argv))
"""


def test_probe_works_in_a_temp_folder_without_o_direct(tmp_path: Path, fake_fio: FakeFio) -> None:
    no_odirect = tmp_path / "tmpfs"
    no_odirect.mkdir()
    wrapper = tmp_path / "fio"
    wrapper.write_text(NO_ODIRECT_FIO.format(python=sys.executable, prefix=str(no_odirect),
                                             fake=fake_fio.path))
    wrapper.chmod(0o755)
    runner = FioRunner(str(wrapper))
    assert runner.ioengine(no_odirect / "engine-probe.bin") == "io_uring"
    probes = [c["argv"] for c in fake_fio.calls() if "--name=probe" in c["argv"]]
    assert len(probes) == 1
    assert "--direct=1" not in probes[0] and "--readonly" in probes[0]
    assert f"--filename={no_odirect / 'engine-probe.bin'}" in probes[0]


def test_real_fio_probe_is_buffered_and_read_only(tmp_path: Path) -> None:
    """With the real fio (when installed): the probe reads the file it created and writes
    nothing (fio --readonly), whatever the engine."""
    if shutil.which("fio") is None:
        pytest.skip("fio not installed")
    probe = tmp_path / "engine-probe.bin"
    engine = FioRunner("fio").ioengine(probe)
    assert engine in ("io_uring", "libaio", "psync")
    assert probe.read_bytes() == b"\0" * 65536
