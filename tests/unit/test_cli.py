"""``ssdqual workloads`` and ``ssdqual thresholds show``: output a newcomer can read."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pytest_ssdqual.catalog.workloads import CATALOG
from pytest_ssdqual.cli.main import main

from ..conftest import REPO


def test_workloads_jobs_says_what_each_methodology_test_runs(
    capsys: pytest.CaptureFixture[str]
) -> None:
    """Every methodology test used to say "several fio jobs, see README 'Dirty-state tests'",
    the health test (no fio at all) and the sweeps (their own section) too. The sections now
    live in the docs pages; each pointer names a page that has that section."""
    assert main(["workloads", "--jobs"]) == 0
    lines = capsys.readouterr().out.splitlines()

    def note(workload_id: str) -> str:
        [i] = [n for n, line in enumerate(lines) if line.split(" ", 1)[0] == workload_id]
        return lines[i + 1]

    assert "no fio job; see docs/methodology.md 'Drive health and idle wake-up'" in note("health")
    assert "see docs/methodology.md 'Sweeps and presets'" in note("qd_scaling")
    assert "see docs/methodology.md 'Dirty-state tests'" in note("sustained_write")
    assert "see docs/methodology.md 'Data states'" in note("drive_with_data")
    for w in CATALOG.values():  # every methodology test points to its own section
        if w.is_methodology:
            assert "'Workloads'" not in note(w.id), w.id
            pointer = re.search(r"see (docs/\S+\.md) '([^']+)'", note(w.id))
            assert pointer, (w.id, note(w.id))
            page, section = pointer.groups()
            headings = [line.lstrip("#").strip() for line in
                        (REPO / page).read_text().splitlines() if line.startswith("## ")]
            assert any(h.startswith(section) for h in headings), (w.id, page, section)
        assert len(w.id) <= 26  # the id column (26 wide, then a space)


def test_thresholds_show_gives_each_source_once(capsys: pytest.CaptureFixture[str]) -> None:
    """The generic profile's ~1,900-character source was repeated on every limit row."""
    assert main(["thresholds", "show", str(REPO / "thresholds"), "--controller", "JMF667H",
                 "--nand", "L85C", "--firmware", "SVN417w", "--capacity-gb", "128"]) == 0
    out = capsys.readouterr().out
    assert out.count("source: generic sanity floors for any SSD") == 1
    lines = out.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("rand_read_4k_qd1 ")
              and "read.iops >= 7140" in line)
    # a row too wide for 120 columns gives its provenance a line of its own, under it
    row = " ".join(part.strip() for part in lines[at:at + 3])
    assert 'jmicron-jmf667h.yaml:54 profile "JMF667H + IMFT L85C 128GB SVN417w"' in row, row
    # every line fits 120 columns, the profiles' paragraph-long sources included (up to
    # 2,769 columns before), even with the checkout's absolute path in each provenance
    assert max(len(line) for line in lines) <= 120


def _show_rows(capsys: pytest.CaptureFixture[str], *drive: str) -> dict[str, list[str]]:
    """``ssdqual thresholds show`` rows by ``workload limit``: [severity, marginal band]."""
    assert main(["thresholds", "show", str(REPO / "thresholds"), *drive]) == 0
    out = capsys.readouterr().out
    header = next(line for line in out.splitlines() if line.startswith("workload "))
    assert header.split() == ["workload", "limit", "severity", "marginal", "from"]
    rows: dict[str, list[str]] = {}
    for line in out.splitlines():
        cells = line.split()
        for i, cell in enumerate(cells):
            if cell in ("fail", "WARN") and i >= 3 and cells[i - 2] in (">=", "<="):
                rows[" ".join(cells[:i])] = [cell, cells[i + 1]]
    return rows


def test_thresholds_show_gives_each_limits_severity_and_marginal_band(
    capsys: pytest.CaptureFixture[str]
) -> None:
    """A warn limit read exactly like a fail limit."""
    rows = _show_rows(capsys, "--controller", "JMF667H", "--nand", "L85C", "--firmware",
                      "SVN417w", "--capacity-gb", "128")
    # the directional HD Tach limit of the 128 GB boards only warns; no marginal band
    assert rows["seq_after_random fragmented_seq_write_128k_qd32.write.bw_mbps_ratio <= "
                "0.85"] == ["WARN", "-"]
    # the ATTO write peak fails, MARGINAL within 5 % above 139.5 MB/s
    assert rows["transfer_size_sweep seq_write_peak.write.bw_mbps >= 139.5"] == [
        "fail", "139.5..146.5"]
    assert rows["health media_errors_delta <= 0"] == ["fail", "-"]
    assert rows["health unsafe_shutdowns_delta <= 0"] == ["WARN", "-"]
    out = main(["thresholds", "show", str(REPO / "thresholds"), "--controller", "JMF667H"])
    assert out == 0
    assert "WARN: it is reported, the test passes" in capsys.readouterr().out


def test_thresholds_show_lines_its_columns_up_whatever_the_limits_length(
    capsys: pytest.CaptureFixture[str]
) -> None:
    """A newcomer's trial (2026-12-06): limits longer than 40 characters pushed the severity
    column of their rows to the right. Every row's severity and marginal band now start under
    their headings, and no line is wider than 120 columns."""
    assert main(["thresholds", "show", str(REPO / "thresholds"), "--controller",
                 "linux-loop"]) == 0
    lines = capsys.readouterr().out.splitlines()
    header = next(line for line in lines if line.startswith("workload "))
    severity_at, marginal_at = header.index("severity"), header.index("marginal")
    rows = [line for line in lines if re.match(r"^[a-z]\w+ +\S.* (fail|WARN) ", line)]
    assert len(rows) > 60  # the loop profile's and the generic floors
    assert any(len(line.split()[1]) > 40 for line in rows)  # a long limit is among them
    for line in rows:
        assert line[severity_at:severity_at + 4] in ("fail", "WARN"), line
        assert line[marginal_at - 1] == " " and line[marginal_at] != " ", line
    assert max(len(line) for line in lines if not line.startswith("      source:")) <= 120


def test_marginal_band_of_an_upper_and_of_a_two_sided_limit() -> None:
    from pytest_ssdqual.cli.main import marginal_band
    from pytest_ssdqual.thresholds.verdict import Limit, Provenance

    prov = Provenance("t.yaml", "p", "test")
    assert marginal_band(Limit("w", "read.lat_p99_us", None, 400, 10, prov)) == "360..400"
    assert marginal_band(Limit("w", "x.ratio", 0.5, 2, 10, prov)) == "0.5..0.55 and 1.8..2"
    assert marginal_band(Limit("w", "x.ratio", 0.5, None, None, prov)) == "-"



def test_thresholds_show_for_an_emulated_twin_gives_its_profile_scaled_as_in_its_run(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--drive emu:MODEL``: the facts come from the model file (no drive is built), and a twin
    at a stated factor gets its profile's rate limits scaled as its run would judge it."""
    monkeypatch.chdir(REPO)  # emu:NAME is looked up in ./emulated, as pytest does from rootdir
    assert main(["thresholds", "show", "--drive", "emu:phison-e12-960g"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("emu:phison-e12-960g: Phison PS5012-E12 960GB reference (Toshiba "
                          "BiCS3), firmware ECFM11.0, 960.2 GB, controller PS5012-E12 / NAND "
                          "BiCS3\n")
    assert 'profile "PS5012-E12 + Toshiba BiCS3 960GB ECFM11.0"' in out
    assert "rate limits x0.1" in out
    rows = _show_rows(capsys, "--drive", "emu:phison-e12-960g")
    assert rows["seq_write_128k_qd32 write.bw_mbps >= 270"] == ["fail", "270..283.5"]  # 2,700 x 0.1

    assert main(["thresholds", "show", "--drive", "emu:jmf612-43nm-64g"]) == 0
    out = capsys.readouterr().out
    assert 'profile "JMF612 + Toshiba 43nm MLC 64GB"' in out and "x0.1" not in out
    # an option overrides what the drive reports: another firmware, another profile set
    assert main(["thresholds", "show", "--drive", "emu:jmf667h-l85c-128g"]) == 0
    l85c = capsys.readouterr().out
    assert main(["thresholds", "show", "--drive", "emu:jmf667h-l85c-128g", "--nand", "A19"]) == 0
    a19 = capsys.readouterr().out
    assert "NAND L85C" in l85c and "NAND A19" in a19 and l85c != a19


def test_thresholds_show_for_a_file_and_for_unknown_drives(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A file target is identified read-only and left as it was; a missing file or an unknown
    model is a usage error (exit 4) naming the drive, never a traceback."""
    monkeypatch.chdir(REPO)
    image = tmp_path / "x.img"
    image.write_bytes(b"\0" * 4096)
    assert main(["thresholds", "show", "--drive", f"file:{image}"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"file:{image}: ") and 'profile "generic SSD sanity floors"' in out
    assert image.read_bytes() == b"\0" * 4096
    assert main(["thresholds", "show", "--drive", f"file:{tmp_path / 'none.img'}"]) == 4
    assert "none.img does not exist" in capsys.readouterr().err
    assert main(["thresholds", "show", "--drive", "emu:no-such-twin"]) == 4
    assert "no-such-twin" in capsys.readouterr().err
