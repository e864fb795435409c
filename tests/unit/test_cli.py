"""``ssdqual workloads`` and ``ssdqual thresholds show``: output a newcomer can read."""

from __future__ import annotations

import pytest

from pytest_ssdqual.catalog.workloads import CATALOG
from pytest_ssdqual.cli.main import main

from ..conftest import REPO


def test_workloads_jobs_says_what_each_methodology_test_runs(
    capsys: pytest.CaptureFixture[str]
) -> None:
    """Every methodology test used to say "several fio jobs, see README 'Dirty-state tests'",
    the health test (no fio at all) and the sweeps (their own section) too."""
    assert main(["workloads", "--jobs"]) == 0
    lines = capsys.readouterr().out.splitlines()

    def note(workload_id: str) -> str:
        [i] = [n for n, line in enumerate(lines) if line.split(" ", 1)[0] == workload_id]
        return lines[i + 1]

    assert "no fio job; see README 'Drive health and idle wake-up'" in note("health")
    assert "see README 'Sweeps and presets'" in note("qd_scaling")
    assert "see README 'Dirty-state tests'" in note("sustained_write")
    assert "see README 'Data states'" in note("drive_with_data")
    for w in CATALOG.values():  # every methodology test points to its own section
        if w.is_methodology:
            assert "see README 'Workloads'" not in note(w.id), w.id
        assert len(w.id) <= 26  # the id column (26 wide, then a space)


def test_thresholds_show_gives_each_source_once(capsys: pytest.CaptureFixture[str]) -> None:
    """The generic profile's ~1,900-character source was repeated on every limit row."""
    assert main(["thresholds", "show", str(REPO / "thresholds"), "--controller", "JMF667H",
                 "--nand", "L85C", "--firmware", "SVN417w", "--capacity-gb", "128"]) == 0
    out = capsys.readouterr().out
    assert out.count("source: generic sanity floors for any SSD") == 1
    row = next(line for line in out.splitlines() if line.startswith("rand_read_4k_qd1 ")
               and "read.iops >= 7140" in line)
    assert row.rstrip().endswith('jmicron-jmf667h.yaml:26 profile "JMF667H + IMFT L85C 128GB '
                                 'SVN417w"'), row
    rows = out.replace(str(REPO), "").splitlines()  # (the checkout's path is not the output's)
    assert max(len(line) for line in rows if not line.startswith(" ")) < 160
