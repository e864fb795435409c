"""``--drive=emu:MODEL`` through the plugin, without building a drive: model lookup, model-file
errors and a host that cannot emulate are usage errors before any I/O; ids and host checks.

Building real emulated drives (root) is in ``test_emulator_e2e.py``.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pytest_ssdqual.drive.inventory import Entry, resolve_assignment
from pytest_ssdqual.drive.spec import DriveSpec
from pytest_ssdqual.emulate.host import host_problems
from pytest_ssdqual.emulate.model import DriveModel
from pytest_ssdqual.emulate.model_file import load_model
from pytest_ssdqual.emulate.resolve import drive_id, resolve_spec
from pytest_ssdqual.errors import ConfigError

from ..conftest import REPO, FakeFio

MODELS = REPO / "emulated"

SUITE = "def test_read(qualify):\n    qualify('seq_read_128k_qd32')\n"


def test_host_problems_say_what_is_missing(tmp_path: Path) -> None:
    problems = host_problems(blkio_root=tmp_path, euid=1000, which=lambda _tool: None)
    assert len(problems) == 3
    assert "need root" in problems[0] and "sudo" in problems[0]
    assert "cgroup-v1 blkio throttling is not available" in problems[1]
    assert "losetup is not installed" in problems[2]
    (tmp_path / "blkio.throttle.write_bps_device").write_text("")
    assert host_problems(blkio_root=tmp_path, euid=0, which=lambda t: "/sbin/" + t) == []


def test_drive_ids_name_the_model_and_the_speed() -> None:
    assert drive_id(DriveSpec("emu:jmf612-43nm-64g", "emu", "x")) == "emu-jmf612-43nm-64g"
    assert drive_id(DriveSpec("emu:jmf612-43nm-64g@0.8", "emu", "x")) == \
        "emu-jmf612-43nm-64g@0.8"
    assert drive_id(DriveSpec("emu:lab/fast.yaml@1.1", "emu", "x")) == "emu-fast@1.1"


def test_resolve_spec_finds_the_model_file(tmp_path: Path) -> None:
    spec = resolve_spec(DriveSpec("emu:JMF612-43nm-64g@0.8", "emu", "JMF612-43nm-64g"),
                        [tmp_path, MODELS], check_host=False)
    assert spec == DriveSpec("emu:JMF612-43nm-64g@0.8", "emu",
                             str(MODELS / "jmf612-43nm-64g.yaml"))


def test_the_model_supplies_controller_and_nand_the_options_override() -> None:
    """What ``EmulatedTarget.assignment_entries`` gives ``resolve_assignment``."""
    from pytest_ssdqual.drive.identity import DriveIdentity

    model: DriveModel = load_model(MODELS / "jmf667h-l85c-128g.yaml")
    identity = DriveIdentity(model.model, model.serial, model.firmware, model.capacity_bytes,
                             512, 4096, "emulated", False, kind="emu")
    entry = Entry(model=None, serial=model.serial, controller=model.controller, nand=model.nand,
                  where=f"emulated model {model.file}:{model.line}")
    got = resolve_assignment(identity, None, extra_builtin=(entry,))
    assert (got.controller, got.nand) == ("JMF667H", "L85C")
    assert got.source.startswith("emulated model ") and "serial EMU-JMF667H-L85C-128G" in got.source
    forced = resolve_assignment(identity, None, controller="JMF612", extra_builtin=(entry,))
    assert (forced.controller, forced.nand) == ("JMF612", "L85C")
    assert "--controller option" in forced.source


def _run(pytester: pytest.Pytester, fake_fio: FakeFio, *args: str) -> pytest.RunResult:
    pytester.makepyfile(test_suite=SUITE)
    return pytester.runpytest(f"--fio-bin={fake_fio.path}", "-p", "no:cacheprovider",
                              f"--emu-models={MODELS}", *args)


def test_help_lists_emu_models_and_the_emu_drive_kind(pytester: pytest.Pytester) -> None:
    out = pytester.runpytest("--help").stdout.str()
    assert "--emu-models=DIR" in out and "emu:MODEL[@SPEED]" in out


def test_unknown_model_is_a_usage_error_listing_the_models(
    pytester: pytest.Pytester, fake_fio: FakeFio
) -> None:
    result = _run(pytester, fake_fio, "--drive=emu:jmf667h-l85c-12g")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    err = result.stderr.str()
    assert "no drive model 'jmf667h-l85c-12g'" in err
    assert "did you mean 'jmf667h-l85c-128g'?" in err and "jmf612-43nm-64g" in err
    assert fake_fio.job_rws() == []


def test_bad_model_file_is_a_usage_error_with_file_line_and_key(
    pytester: pytest.Pytester, fake_fio: FakeFio
) -> None:
    bad = pytester.path / "bad.yaml"
    bad.write_text((MODELS / "jmf612-43nm-64g.yaml").read_text()
                   .replace("  read_bw_mbps: 259.3", "  read_bw_mbs: 259.3"))
    line = bad.read_text().splitlines().index("  read_bw_mbs: 259.3") + 1
    result = _run(pytester, fake_fio, f"--drive=emu:{bad}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    err = result.stderr.str()
    assert f"bad.yaml:{line}: caps.read_bw_mbs: unknown key 'read_bw_mbs'" in err
    assert "did you mean 'read_bw_mbps'?" in err
    assert fake_fio.job_rws() == []


def test_without_root_a_usage_error_before_any_test(
    pytester: pytest.Pytester, fake_fio: FakeFio, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    result = _run(pytester, fake_fio, "--drive=emu:jmf612-43nm-64g")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "emu:jmf612-43nm-64g: emulated drives need root" in result.stderr.str()
    assert fake_fio.job_rws() == []


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--drive=emu:jmf612-43nm-64g@fast"], "speed 'fast' is not a number"),
        ([f"--emu-models={MODELS}", "--drive=emu:jmf612-43nm-64g",
          "--drive=emu:jmf612-43nm-64g"], "is given twice"),
        (["--drive=emu:x", "--emu-models=/nonexistent-models"],
         "model folder /nonexistent-models does not exist"),
    ],
)
def test_bad_emu_options_are_usage_errors(
    pytester: pytest.Pytester, fake_fio: FakeFio, args: list[str], message: str
) -> None:
    pytester.makepyfile(test_suite=SUITE)
    result = pytester.runpytest(f"--fio-bin={fake_fio.path}", "-p", "no:cacheprovider", *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert message in result.stderr.str()


def test_model_found_in_the_rootdir_emulated_folder(tmp_path: Path) -> None:
    folder = tmp_path / "emulated"
    folder.mkdir()
    (folder / "mine.yaml").write_text((MODELS / "jmf612-43nm-64g.yaml").read_text())
    from pytest_ssdqual.emulate.resolve import model_folders

    spec = resolve_spec(DriveSpec("emu:mine", "emu", "mine"), model_folders(tmp_path),
                        check_host=False)
    assert spec.path == str(folder / "mine.yaml")
    # the shipped models (the checkout's emulated/, an installed wheel's copy) come last
    assert model_folders(tmp_path) == [folder, MODELS]
    with pytest.raises(ConfigError, match="known models: demo-dirty-no-recovery, .*, mine, "
                                          r"phison-e12-960g\)$"):
        resolve_spec(DriveSpec("emu:yours", "emu", "yours"), model_folders(tmp_path),
                     check_host=False)


def test_cli_lists_checks_and_identifies_models_without_building_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from pytest_ssdqual.cli.main import main

    monkeypatch.chdir(REPO)
    assert main(["emulated", "list"]) == 0
    out = capsys.readouterr().out
    assert ("jmf667h-a19-240g: JMicron JMF667H 240GB reference (Toshiba A19), "
            "firmware SVN423a") in out
    assert "recovery: 50 % after 5 s idle, 100 % after 10 s idle" in out
    assert main(["identify", "emu:jmf667h-l85c-128g@0.8"]) == 0
    out = capsys.readouterr().out
    assert "(every cap x0.8)" in out and "write 124 MB/s" in out and "controller JMF667H" in out
    assert main(["emulated", "check"]) == 0
    count = len(list(MODELS.glob("*.yaml")))
    assert count >= 8 and f"ok: {count} model file(s)" in capsys.readouterr().out
    bad = tmp_path / "bad.yaml"
    bad.write_text("version: 2\n")
    assert main(["emulated", "check", str(bad)]) == 4
    err = capsys.readouterr().err
    assert "bad.yaml:1: version: unsupported version 2" in err


def test_an_emulated_drive_and_its_slower_copy_are_two_drives_in_allure(
    pytester: pytest.Pytester, fake_fio: FakeFio
) -> None:
    """``emu:X`` and ``emu:X@0.8`` in one session report the model's one serial;
    they used to share a history id, a parent suite and a summary page. Builds both drives (root,
    cgroup-v1 blkio; fio is the stand-in, which never touches them)."""
    problems = host_problems()
    if problems:
        pytest.skip("; ".join(problems))
    import json

    alluredir = pytester.path / "allure"
    result = _run(pytester, fake_fio, "--drive=emu:jmf612-43nm-64g",
                  "--drive=emu:jmf612-43nm-64g@0.8", "--ssd-profile=smoke",
                  f"--alluredir={alluredir}", f"--results-dir={pytester.path / 'store'}")
    result.assert_outcomes(passed=2)
    results = [json.loads(p.read_text()) for p in alluredir.glob("*-result.json")]
    assert len({r["historyId"] for r in results}) == 2
    suites = sorted(lab["value"] for r in results for lab in r["labels"]
                    if lab["name"] == "parentSuite")
    serial = "EMU-JMF612-43NM-64G"
    assert [s.rsplit("S/N ", 1)[1] for s in suites] == [f"{serial})", f"{serial}@0.8)"]
    pages = sorted(p.name for p in (alluredir / "summary").glob("*.md"))
    assert len(pages) == 2 and pages[0].endswith(f"-{serial}-0.8.md"), pages
