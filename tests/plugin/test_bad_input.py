"""Bad files and options through the plugin: a usage error (exit status 4)
before any I/O, naming the file, the line and the key -- never a traceback, never a fio job.

The loaders' every message is tested on its own in ``test_thresholds.py``, ``test_inventory.py``,
``test_yamlutil.py`` and ``test_drive.py``; ``test_plugin.py`` covers bad option values (profile,
size, missing paths, a character device) and a min > max limit. This module adds what reaches
the user only through pytest: each kind of bad threshold file and inventory, more bad
``--drive`` values, a bad ini value, and two profiles that contradict each other only for the
drive at hand.
"""

from __future__ import annotations

import textwrap

import pytest

from ..conftest import FakeFio

SUITE = """
def test_read(qualify):
    qualify("seq_read_128k_qd32")
"""

GOOD = """\
version: 1
profiles:
  - name: floors
    match: {kind: file}
    source: s
    limits:
      seq_read_128k_qd32: {bw_mbps: {min: 1}}
"""

BAD_THRESHOLDS = {
    "yaml syntax": (
        "version: 1\nprofiles:\n  - name: x\n    match: {kind: [file\n    source: s\n",
        ["bad.yaml:", "YAML syntax error"],
    ),
    "schema: unknown key": (
        GOOD.replace("    limits:", "    limts:"),
        ["bad.yaml:6", "profiles[0].limts", "unknown key 'limts'", "did you mean `limits`?"],
    ),
    "schema: wrong type": (
        GOOD.replace("{min: 1}", "{min: fast}"),
        ["bad.yaml:7", "profiles[0].limits.seq_read_128k_qd32.bw_mbps.min"],
    ),
    "unknown workload": (
        GOOD.replace("seq_read_128k_qd32:", "seq_raed_128k_qd32:"),
        ["bad.yaml:7", "seq_raed_128k_qd32", "seq_read_128k_qd32"],
    ),
    "unknown metric": (
        GOOD.replace("bw_mbps:", "bw_mpbs:"),
        ["bad.yaml:7", "bw_mpbs", "did you mean `bw_mbps`?"],
    ),
    "min > max": (
        GOOD.replace("{min: 1}", "{min: 200, max: 100}"),
        ["bad.yaml:7", "seq_read_128k_qd32"],
    ),
    "same match, different limits": (
        GOOD + GOOD.split("profiles:\n", 1)[1].replace("floors", "floors again")
        .replace("{min: 1}", "{min: 2}"),
        ["bad.yaml:7", "(bad.yaml:12)", "seq_read_128k_qd32.read.bw_mbps", "have the same match"],
    ),
    # found by the t3 trial: RecursionError (INTERNALERROR, exit 3), OverflowError, a NaN
    # range that loaded and never matched
    "nested 1000 deep": (
        "version: 1\nprofiles: " + "[" * 1000 + "]" * 1000 + "\n",
        ["bad.yaml:2", "profiles", "nested more than 64 levels deep", "close the brackets"],
    ),
    "version of 401 digits": (
        GOOD.replace("version: 1", "version: 1" + "0" * 400),
        ["bad.yaml:1", "version", "a 401-digit integer is beyond 2^64"],
    ),
    "NaN capacity": (
        GOOD.replace("{kind: file}", "{kind: file, capacity_gb: [.nan, 120]}"),
        ["bad.yaml:4", "profiles[0].match.capacity_gb[0]", "nan is not a finite number"],
    ),
}


@pytest.mark.parametrize("case", list(BAD_THRESHOLDS))
def test_bad_threshold_file_is_a_usage_error_naming_file_line_and_key(
    pytester: pytest.Pytester, fake_fio: FakeFio, case: str
) -> None:
    text, needles = BAD_THRESHOLDS[case]
    (pytester.path / "bad.yaml").write_text(text)
    pytester.makepyfile(test_suite=SUITE)
    result = pytester.runpytest(
        f"--drive=file:{pytester.path / 't.img'}", "--thresholds=bad.yaml",
        f"--fio-bin={fake_fio.path}", "-p", "no:cacheprovider",
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    err = result.stderr.str()
    assert err.startswith("ERROR: pytest-ssdqual: "), err
    for needle in needles:
        assert needle in err, (needle, err)
    assert "Traceback" not in err + result.stdout.str()
    assert fake_fio.calls() == []
    assert not (pytester.path / "t.img").exists()  # nothing created either


BAD_INVENTORIES = {
    "yaml syntax": (
        'version: 1\ndrives:\n  - match: {model: "X*"\n    controller: Y\n',
        ["inv.yaml:4", "drives[0].match.model"],
    ),
    "schema": (
        "version: 1\ndrives:\n  - match: {model: 'X*'}\n    contoller: JMF667H\n",
        ["inv.yaml:4", "contoller"],
    ),
    "match on nothing": (
        "version: 1\ndrives:\n  - match: {}\n    controller: JMF667H\n",
        ["inv.yaml:3", "drives[0].match"],
    ),
    "nested 1000 deep": (
        "version: 1\ndrives: " + "[" * 1000 + "]" * 1000 + "\n",
        ["inv.yaml:2", "drives", "nested more than 64 levels deep"],
    ),
}


@pytest.mark.parametrize("case", list(BAD_INVENTORIES))
def test_bad_inventory_is_a_usage_error_naming_file_line_and_key(
    pytester: pytest.Pytester, fake_fio: FakeFio, case: str
) -> None:
    text, needles = BAD_INVENTORIES[case]
    (pytester.path / "inv.yaml").write_text(text)
    (pytester.path / "good.yaml").write_text(GOOD)
    pytester.makepyfile(test_suite=SUITE)
    result = pytester.runpytest(
        f"--drive=file:{pytester.path / 't.img'}", "--thresholds=good.yaml",
        "--inventory=inv.yaml", f"--fio-bin={fake_fio.path}", "-p", "no:cacheprovider",
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    err = result.stderr.str()
    for needle in needles:
        assert needle in err, (needle, err)
    assert fake_fio.calls() == []


@pytest.mark.parametrize(
    ("value", "needle"),
    [
        ("", "--drive: empty drive value"),
        ("emu:NOSUCHMODEL", "emu:NOSUCHMODEL: no drive model 'NOSUCHMODEL'"),
        ("fio://host:99999/dev/sdb", "port '99999' is not a number 1-65535"),
        ("file:", "--drive: file: needs a path"),
        ("file:/dev/sda", "is under /dev: a file target must be a regular file"),
        ("file:/nonexistent-dir/x.img", "parent directory /nonexistent-dir does not exist"),
        ("/dev/nonexistent-sdz", "/dev/nonexistent-sdz does not exist"),
        ("bogus:thing", "unknown drive kind 'bogus'"),
    ],
)
def test_bad_drive_values_are_usage_errors(
    pytester: pytest.Pytester, fake_fio: FakeFio, value: str, needle: str
) -> None:
    pytester.makepyfile(test_suite=SUITE)
    result = pytester.runpytest(f"--drive={value}", f"--fio-bin={fake_fio.path}",
                                "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert needle in result.stderr.str()
    assert fake_fio.calls() == []


def test_a_confirmation_without_a_drive_is_a_usage_error(
    pytester: pytest.Pytester, fake_fio: FakeFio
) -> None:
    """``--confirm-destroy=SERIAL`` without ``--drive`` (a forgotten drive) ran the dry run on
    the plugin's scratch file, listing the serial as confirmed: the engineer believed the
    drive was being qualified."""
    pytester.makepyfile(test_suite=SUITE)
    result = pytester.runpytest("--confirm-destroy=S3Z9NB0K123456", f"--fio-bin={fake_fio.path}",
                                "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    err = result.stderr.str()
    assert ("--confirm-destroy: --confirm-destroy=S3Z9NB0K123456 is given but no --drive: "
            "nothing to confirm") in err, err
    assert "fix: add the drive (--drive=/dev/sdX)" in err and "Traceback" not in err
    assert fake_fio.calls() == []


def test_bad_ini_profile_is_a_usage_error(pytester: pytest.Pytester, fake_fio: FakeFio) -> None:
    pytester.makeini("[pytest]\nssdqual_profile = turbo\n")
    pytester.makepyfile(test_suite=SUITE)
    result = pytester.runpytest(f"--fio-bin={fake_fio.path}", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "ssdqual_profile: unknown profile 'turbo'" in result.stderr.str()
    assert fake_fio.calls() == []


def test_profiles_that_contradict_each_other_only_for_this_drive(
    pytester: pytest.Pytester, fake_fio: FakeFio
) -> None:
    # Equally specific profiles that disagree can only be found once the drive is identified
    # (they match different keys). Every test on that drive is an error naming both files,
    # lines and the key, and no fio job runs; the limits are not guessed.
    (pytester.path / "a.yaml").write_text(textwrap.dedent("""\
        version: 1
        profiles:
          - name: by kind
            match: {kind: file}
            source: a
            limits:
              seq_read_128k_qd32: {bw_mbps: {min: 1}}
        """))
    (pytester.path / "b.yaml").write_text(textwrap.dedent("""\
        version: 1
        profiles:
          - name: by transport
            match: {transport: virtual}
            source: b
            limits:
              seq_read_128k_qd32: {bw_mbps: {min: 2}}
        """))
    pytester.makepyfile(test_suite=SUITE)
    result = pytester.runpytest(
        f"--drive=file:{pytester.path / 't.img'}", "--thresholds=a.yaml",
        "--thresholds=b.yaml", f"--fio-bin={fake_fio.path}", "-p", "no:cacheprovider",
    )
    result.assert_outcomes(errors=1)
    out = result.stdout.str()
    assert "a.yaml:7" in out and "b.yaml:7" in out
    assert "seq_read_128k_qd32.read.bw_mbps" in out
    assert "Traceback" not in out
    assert fake_fio.job_rws() == []
