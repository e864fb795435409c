"""Tests of ``pytest_ssdqual.thresholds`` (loader, schema_check, sense_check, profile): schema,
sense checks, matching, resolution.

Every bad-input case asserts the message names the file, the YAML line and the key, and that
every problem of every file is reported at once (not first-only).
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from pytest_ssdqual.errors import ConfigError, ConfigErrors
from pytest_ssdqual.thresholds.loader import ThresholdSet
from pytest_ssdqual.thresholds.profile import DriveFacts, ResolvedLimits, ThresholdProfile
from pytest_ssdqual.thresholds.schema_check import schema

GOOD = """\
version: 1
profiles:
  - name: JMF667H + L85C 128GB
    match: {controller: JMF667H, nand: L85C, capacity_gb: [120, 130]}
    source: "figure 155 MB/s, limit 10 % below"
    limits:
      seq_write_128k_qd32:
        bw_mbps: {min: 139.5, marginal_pct: 5}
      rand_rw70_4k_qd32: {read.lat_p99_us: {max: 2000}, iops: {min: 20000}}
    regression: {max_drop_pct: 5, per_metric: {seq_write_128k_qd32.write.bw_mbps: 3}}
  - name: generic
    match: {}
    source: sanity floors
    limits:
      seq_write_128k_qd32: {bw_mbps: {min: 10}, lat_p99_99_us: {max: 1000000}}
"""

L85C_128 = DriveFacts(
    controller="JMF667H",
    nand="L85C",
    firmware="SVN417w",
    model="JMicron JMF667H 128GB",
    serial="S1",
    capacity_bytes=128_035_676_160,
    transport="sata",
    kind="block",
)


def write(tmp_path: Path, text: str, name: str = "t.yaml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def load_errors(*paths: Path) -> list[ConfigError]:
    with pytest.raises(ConfigErrors) as info:
        ThresholdSet.load(paths)
    return info.value.errors


def only_error(*paths: Path) -> ConfigError:
    errors = load_errors(*paths)
    assert len(errors) == 1, "\n".join(map(str, errors))
    return errors[0]


def profile_yaml(name: str, match: str, limits: str, regression: str = "") -> str:
    text = f"  - name: {name}\n    match: {match}\n    source: s\n    limits:\n{limits}"
    return text + (f"    regression: {regression}\n" if regression else "")


# -- schema ------------------------------------------------------------------------------------


def test_schema_is_valid_draft_2020_12() -> None:
    Draft202012Validator.check_schema(schema())
    assert schema()["$schema"] == "https://json-schema.org/draft/2020-12/schema"


def test_good_file_loads_with_canonical_metrics_and_provenance(tmp_path: Path) -> None:
    path = write(tmp_path, GOOD)
    tset = ThresholdSet.load([path])
    assert tset.files == (str(path),)
    first, generic = tset.profiles
    assert (first.name, first.line, first.specificity, generic.specificity) == (
        "JMF667H + L85C 128GB", 3, 3, 0
    )
    assert [(lim.workload, lim.metric, lim.min, lim.max) for lim in first.limits] == [
        ("rand_rw70_4k_qd32", "read.lat_p99_us", None, 2000.0),
        ("rand_rw70_4k_qd32", "total.iops", 20000.0, None),
        ("seq_write_128k_qd32", "write.bw_mbps", 139.5, None),
    ]
    bw = first.limits[2]
    assert bw.marginal_pct == 5.0
    assert bw.provenance.file == str(path)
    assert bw.provenance.line == 8  # the metric's own line
    assert bw.provenance.profile == "JMF667H + L85C 128GB"
    assert bw.provenance.source == "figure 155 MB/s, limit 10 % below"
    assert first.regression_max_drop_pct == 5.0
    assert first.regression_per_metric == {"seq_write_128k_qd32.write.bw_mbps": 3.0}


def test_yaml_syntax_error_names_file_and_line(tmp_path: Path) -> None:
    path = write(tmp_path, "version: 1\nprofiles:\n  - name: x\n    match: {controller: [JMF\n")
    err = only_error(path)
    assert err.file == str(path)
    assert "YAML syntax error" in str(err)
    assert str(err).startswith(f"{path}:")
    assert err.line is not None and err.line >= 4


def test_unknown_key_gets_did_you_mean(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """\
        version: 1
        profiles:
          - name: p
            match: {}
            source: s
            limts:
              seq_write_128k_qd32: {bw_mbps: {min: 1}}
        """,
    )
    err = only_error(path)
    text = str(err)
    assert f"{path.name}:6" in text
    assert err.key == "profiles[0].limts"
    assert "unknown key 'limts'" in text
    assert "did you mean `limits`?" in text


def test_unknown_match_key_gets_did_you_mean(tmp_path: Path) -> None:
    path = write(tmp_path, "version: 1\nprofiles:\n  - name: p\n    match:\n      nnad: L85C\n"
                           "    source: s\n")
    err = only_error(path)
    assert (err.line, err.key) == (5, "profiles[0].match.nnad")
    assert "did you mean `nand`?" in str(err)


def test_unknown_limit_key_in_a_limit(tmp_path: Path) -> None:
    path = write(tmp_path, "version: 1\nprofiles:\n" + profile_yaml(
        "p", "{}", "      seq_write_128k_qd32:\n        bw_mbps: {mni: 1, min: 2}\n"))
    err = only_error(path)
    assert err.key == 'profiles[0].limits.seq_write_128k_qd32.bw_mbps.mni'
    assert err.line == 8
    assert "did you mean `min`?" in str(err)


def test_unknown_workload_lists_the_known_ones(tmp_path: Path) -> None:
    path = write(tmp_path, "version: 1\nprofiles:\n" + profile_yaml(
        "p", "{}", "      seq_write_128k_qd23:\n        bw_mbps: {min: 1}\n"))
    err = only_error(path)
    text = str(err)
    assert f"{path.name}:7" in text
    assert err.key == "profiles[0].limits.seq_write_128k_qd23"
    assert "unknown workload 'seq_write_128k_qd23'" in text
    assert err.fix is not None
    assert "did you mean `seq_write_128k_qd32`?" in err.fix
    assert "rand_read_4k_qd1" in err.fix and "seq_read_128k_qd32" in err.fix


def test_unknown_metric_gets_did_you_mean(tmp_path: Path) -> None:
    path = write(tmp_path, "version: 1\nprofiles:\n" + profile_yaml(
        "p", "{}", "      seq_write_128k_qd32:\n        bw_mpbs: {min: 1}\n"))
    err = only_error(path)
    assert (err.line, err.key) == (8, "profiles[0].limits.seq_write_128k_qd32.bw_mpbs")
    assert "unknown metric 'bw_mpbs' for seq_write_128k_qd32" in str(err)
    assert "did you mean `bw_mbps`?" in str(err)


def test_bare_latency_on_mixed_workload_is_ambiguous(tmp_path: Path) -> None:
    path = write(tmp_path, "version: 1\nprofiles:\n" + profile_yaml(
        "p", "{}", "      rand_rw70_4k_qd32:\n        lat_p99_us: {max: 2000}\n"))
    err = only_error(path)
    assert (err.line, err.key) == (8, "profiles[0].limits.rand_rw70_4k_qd32.lat_p99_us")
    assert "ambiguous" in str(err)
    assert err.fix == "write read.lat_p99_us or write.lat_p99_us"


def test_direction_the_workload_does_not_measure(tmp_path: Path) -> None:
    path = write(tmp_path, "version: 1\nprofiles:\n" + profile_yaml(
        "p", "{}", "      seq_write_128k_qd32:\n        read.bw_mbps: {min: 1}\n"))
    err = only_error(path)
    assert err.key == 'profiles[0].limits.seq_write_128k_qd32["read.bw_mbps"]'
    assert err.line == 8
    assert "no 'read' direction" in str(err)
    assert err.fix == "use bw_mbps or write.bw_mbps"


def test_same_metric_twice_bare_and_canonical(tmp_path: Path) -> None:
    path = write(tmp_path, "version: 1\nprofiles:\n" + profile_yaml(
        "p", "{}", "      seq_write_128k_qd32:\n        bw_mbps: {min: 1}\n"
                   "        write.bw_mbps: {min: 2}\n"))
    err = only_error(path)
    assert err.line == 9
    assert "same metric (write.bw_mbps)" in str(err)


def test_min_greater_than_max(tmp_path: Path) -> None:
    path = write(tmp_path, "version: 1\nprofiles:\n" + profile_yaml(
        "p", "{}", "      rand_read_4k_qd1:\n        iops: {min: 9000, max: 8000}\n"))
    err = only_error(path)
    text = str(err)
    assert f"{path.name}:8" in text
    assert err.key == "profiles[0].limits.rand_read_4k_qd1.iops"
    assert "min 9000 > max 8000" in text
    assert err.fix


@pytest.mark.parametrize(
    ("limit", "key", "needle"),
    [
        ("{min: -5}", "min", "-5 must be > 0"),
        ("{max: 0}", "max", "0 must be > 0"),
        ("{min: 5, marginal_pct: 100}", "marginal_pct", "100 must be < 100"),
        ("{min: fast}", "min", "'fast' is not a number"),
        ("{min: .nan}", "min", "not a finite number"),
    ],
)
def test_bad_limit_values(tmp_path: Path, limit: str, key: str, needle: str) -> None:
    path = write(tmp_path, "version: 1\nprofiles:\n" + profile_yaml(
        "p", "{}", f"      rand_read_4k_qd1:\n        iops: {limit}\n"))
    err = only_error(path)
    assert err.key == f"profiles[0].limits.rand_read_4k_qd1.iops.{key}"
    assert err.line == 8
    assert needle in str(err)


def test_limit_needs_min_or_max(tmp_path: Path) -> None:
    path = write(tmp_path, "version: 1\nprofiles:\n" + profile_yaml(
        "p", "{}", "      rand_read_4k_qd1:\n        iops: {marginal_pct: 5}\n"))
    err = only_error(path)
    assert (err.line, err.key) == (8, "profiles[0].limits.rand_read_4k_qd1.iops")
    assert "needs `min`, `max` or both" in str(err)


def test_missing_required_key_says_what_to_add(tmp_path: Path) -> None:
    path = write(tmp_path, "version: 1\nprofiles:\n  - name: p\n    match: {}\n")
    err = only_error(path)
    assert (err.line, err.key) == (3, "profiles[0]")
    assert "missing required key 'source'" in str(err)
    assert err.fix is not None and "source:" in err.fix


def test_each_missing_required_key_is_reported_once(found_cases: Path) -> None:
    """jsonschema gives one ``required`` error per missing key, each naming the whole list:
    a file missing both top-level keys got each reported twice (found/t3)."""
    path = found_cases / "t3" / "foreign-thresholds-folder" / "thresholds" / "limits.yaml"
    messages = [f"{e.key}: {e.message}" if e.key else e.message for e in load_errors(path)]
    assert sorted(messages) == ["cpu: unknown key 'cpu'", "missing required key 'profiles'",
                                "missing required key 'version'"]


def test_version_must_be_1(tmp_path: Path) -> None:
    err = only_error(write(tmp_path, "version: 2\nprofiles: []\n"))
    assert (err.line, err.key) == (1, "version")
    assert "unsupported version 2" in str(err)


def test_capacity_range_inverted(tmp_path: Path) -> None:
    path = write(tmp_path, "version: 1\nprofiles:\n  - name: p\n    match:\n"
                           "      capacity_gb: [130, 120]\n    source: s\n")
    err = only_error(path)
    assert (err.line, err.key) == (5, "profiles[0].match.capacity_gb")
    assert "inverted" in str(err) and err.fix == "write [low, high]: [120, 130]"


def test_capacity_range_needs_two_numbers(tmp_path: Path) -> None:
    path = write(tmp_path, "version: 1\nprofiles:\n  - name: p\n    match:\n"
                           "      capacity_gb: [128]\n    source: s\n")
    err = only_error(path)
    assert err.key == "profiles[0].match.capacity_gb"
    assert "exactly two numbers" in str(err)


def test_regression_per_metric_keys_are_checked(tmp_path: Path) -> None:
    path = write(tmp_path, "version: 1\nprofiles:\n" + profile_yaml(
        "p", "{}", "      rand_read_4k_qd1: {iops: {min: 1}}\n",
        "{per_metric: {rand_read_4k_qd1.read.iops: 5, seq_raed_128k_qd32: 4}}"))
    err = only_error(path)
    assert err.line == 8
    assert err.key == "profiles[0].regression.per_metric.seq_raed_128k_qd32"
    assert "did you mean `seq_read_128k_qd32`?" in str(err)


def test_duplicate_yaml_key_is_an_error(tmp_path: Path) -> None:
    path = write(tmp_path, "version: 1\nprofiles:\n" + profile_yaml(
        "p", "{}", "      rand_read_4k_qd1: {iops: {min: 1}}\n"
                   "      rand_read_4k_qd1: {iops: {min: 2}}\n"))
    err = only_error(path)
    assert err.line == 8 and "duplicate key" in str(err)


def test_duplicate_profile_names_across_files(tmp_path: Path) -> None:
    a = write(tmp_path, GOOD, "a.yaml")
    b = write(tmp_path, "version: 1\nprofiles:\n" + profile_yaml(
        "generic", "{controller: X}", "      rand_read_4k_qd1: {iops: {min: 1}}\n"), "b.yaml")
    err = only_error(a, b)
    text = str(err)
    assert f"{b}:3" in text
    assert err.key == "name"
    assert f'duplicate profile name "generic" (first at {a}:11)' in text


def test_duplicate_profile_names_in_one_file(tmp_path: Path) -> None:
    path = write(tmp_path, "version: 1\nprofiles:\n"
                 + profile_yaml("p", "{}", "      rand_read_4k_qd1: {iops: {min: 1}}\n")
                 + profile_yaml("p", "{controller: X}",
                                "      rand_read_4k_qd1: {iops: {min: 1}}\n"))
    err = only_error(path)
    assert (err.line, err.key) == (8, "profiles[1].name")
    assert "(first at line 3)" in str(err)


def test_every_problem_of_every_file_is_reported(tmp_path: Path) -> None:
    a = write(tmp_path, "version: 3\nprofiles:\n" + profile_yaml(
        "p", "{nnad: x}", "      seq_write_128k_qd32: {bw_mbps: {min: 2, max: 1}}\n"), "a.yaml")
    b = write(tmp_path, "version: 1\nprofiles: [\n", "b.yaml")
    errors = load_errors(a, b, tmp_path / "missing.yaml")
    assert [(Path(e.file or "").name, e.line) for e in errors] == [
        ("missing.yaml", None),  # path problems come first
        ("a.yaml", 1),
        ("a.yaml", 4),
        ("a.yaml", 7),
        ("b.yaml", 3),
    ]
    with pytest.raises(ConfigErrors, match=r"^5 errors:\n  - "):
        ThresholdSet.load([a, b, tmp_path / "missing.yaml"])


def test_empty_file_and_empty_directory(tmp_path: Path) -> None:
    empty = write(tmp_path, "", "empty.yaml")
    folder = tmp_path / "none"
    folder.mkdir()
    errors = load_errors(empty, folder)
    assert "no threshold files" in str(errors[0]) and errors[0].file == str(folder)
    assert "empty threshold file" in str(errors[1]) and errors[1].file == str(empty)


def test_directory_loads_yaml_and_yml_sorted_and_ignores_other_files(tmp_path: Path) -> None:
    write(tmp_path, GOOD, "b.yml")
    write(tmp_path, "version: 1\nprofiles: []\n", "a.yaml")
    write(tmp_path, "not: yaml: at: all", "notes.txt")
    tset = ThresholdSet.load([tmp_path])
    assert [Path(f).name for f in tset.files] == ["a.yaml", "b.yml"]
    assert len(tset.profiles) == 2
    # a file named again (directly and through its folder) is read once: no duplicate names
    again = ThresholdSet.load([tmp_path / "b.yml", tmp_path])
    assert [Path(f).name for f in again.files] == ["b.yml", "a.yaml"]
    assert len({hash(p) for p in again.profiles}) == 2  # profiles are hashable


# -- matching ----------------------------------------------------------------------------------


def make_profile(match: dict[str, object]) -> ThresholdProfile:
    return ThresholdProfile("p", "f.yaml", 1, "s", dict(match), ())


@pytest.mark.parametrize(
    ("match", "matches"),
    [
        ({}, True),
        ({"controller": "jmf667h"}, True),  # case-insensitive
        ({"controller": "JMF667"}, False),  # exact, not a prefix
        ({"nand": "l85c"}, True),
        ({"firmware": "SVN41*"}, True),  # glob
        ({"firmware": "svn417W"}, True),  # glob, case-insensitive
        ({"firmware": "SVN418?"}, False),
        ({"model": "*jmf667h*"}, True),
        ({"serial": "S1"}, True),
        ({"serial": "s1"}, False),  # serial is exact
        ({"capacity_gb": [120, 130]}, True),
        ({"capacity_gb": [128.035676160, 130]}, True),  # inclusive
        ({"capacity_gb": [100, 128]}, False),
        ({"transport": "SATA"}, True),
        ({"kind": "file"}, False),
        ({"controller": "JMF667H", "nand": "L85C", "firmware": "SVN417w"}, True),
        ({"controller": "JMF667H", "nand": "A19"}, False),  # every key must hold
    ],
)
def test_match_semantics(match: dict[str, object], matches: bool) -> None:
    profile = make_profile(match)
    assert profile.matches(L85C_128) is matches
    assert profile.specificity == len(match)


def test_unknown_drive_facts_never_match_a_key_that_names_them() -> None:
    unknown = DriveFacts(controller=None, nand=None)
    assert not make_profile({"controller": "JMF667H"}).matches(unknown)
    assert not make_profile({"nand": "L85C"}).matches(unknown)
    assert not make_profile({"firmware": "*"}).matches(unknown)
    assert not make_profile({"capacity_gb": [0, 1000]}).matches(unknown)
    assert make_profile({}).matches(unknown)


# -- resolution --------------------------------------------------------------------------------

LAYERED = """\
version: 1
profiles:
  - name: generic
    match: {}
    source: generic floors
    limits:
      seq_write_128k_qd32: {bw_mbps: {min: 10}, lat_p99_99_us: {max: 1000000}}
      rand_read_4k_qd1: {iops: {min: 100}}
    regression: {max_drop_pct: 10, per_metric: {rand_read_4k_qd1.read.iops: 20}}
  - name: family
    match: {controller: JMF667H}
    source: family floors
    limits:
      seq_write_128k_qd32: {bw_mbps: {min: 100}}
      rand_read_4k_qd1: {iops: {min: 5500}, lat_p99_us: {max: 2000}}
    regression: {max_drop_pct: 5, per_metric: {rand_write_4k_qd32: 12}}
  - name: firmware
    match: {controller: JMF667H, nand: L85C, firmware: SVN417w, capacity_gb: [120, 130]}
    source: firmware figures
    limits:
      seq_write_128k_qd32: {bw_mbps: {min: 139.5}}
    regression: {per_metric: {seq_write_128k_qd32.write.bw_mbps: 3}}
"""


def test_most_specific_wins_per_metric_and_generic_fills_the_rest(tmp_path: Path) -> None:
    tset = ThresholdSet.load([write(tmp_path, LAYERED)])
    resolved = tset.resolve(L85C_128)
    assert [p.name for p in resolved.profiles] == ["firmware", "family", "generic"]
    got = {key: (lim.min, lim.max, lim.provenance.profile) for key, lim in resolved.limits.items()}
    assert got == {
        ("seq_write_128k_qd32", "write.bw_mbps"): (139.5, None, "firmware"),
        ("seq_write_128k_qd32", "write.lat_p99_99_us"): (None, 1000000.0, "generic"),
        ("rand_read_4k_qd1", "read.iops"): (5500.0, None, "family"),
        ("rand_read_4k_qd1", "read.lat_p99_us"): (None, 2000.0, "family"),
    }
    assert [str(lim) for lim in resolved.for_workload("seq_write_128k_qd32")] == [
        "write.bw_mbps >= 139.5",
        "write.lat_p99_99_us <= 1000000",
    ]
    assert resolved.for_workload("rand_rw70_4k_qd32") == []


def test_other_firmware_falls_back_to_the_family(tmp_path: Path) -> None:
    tset = ThresholdSet.load([write(tmp_path, LAYERED)])
    other = DriveFacts("JMF667H", "L85C", "SVN500x", "m", "s", 128_000_000_000, "sata", "block")
    resolved = tset.resolve(other)
    assert [p.name for p in resolved.profiles] == ["family", "generic"]
    assert resolved.limits[("seq_write_128k_qd32", "write.bw_mbps")].min == 100


def test_unknown_controller_gets_only_generic(tmp_path: Path) -> None:
    tset = ThresholdSet.load([write(tmp_path, LAYERED)])
    resolved = tset.resolve(DriveFacts(controller=None, nand=None, capacity_bytes=128 * 10**9))
    assert [p.name for p in resolved.profiles] == ["generic"]
    assert {lim.provenance.profile for lim in resolved.limits.values()} == {"generic"}
    assert resolved.limits[("seq_write_128k_qd32", "write.bw_mbps")].min == 10


def test_regression_limit_precedence(tmp_path: Path) -> None:
    resolved = ThresholdSet.load([write(tmp_path, LAYERED)]).resolve(L85C_128)
    pct = resolved.regression_limit_pct
    assert pct("seq_write_128k_qd32", "write.bw_mbps") == 3  # firmware per_metric
    assert pct("rand_write_4k_qd32", "write.iops") == 12  # family, per workload
    assert pct("seq_read_128k_qd32", "read.bw_mbps") == 5  # family default
    # the more specific family's default beats generic's per_metric entry
    assert pct("rand_read_4k_qd1", "read.iops") == 5
    unknown = ThresholdSet.load([write(tmp_path, LAYERED)]).resolve(DriveFacts(None, None))
    assert unknown.regression_limit_pct("rand_read_4k_qd1", "read.iops") == 20
    assert unknown.regression_limit_pct("sustained_write", "write.bw_mbps") == 10
    assert empty_resolution().regression_limit_pct("x", "y") is None


def empty_resolution() -> ResolvedLimits:
    return ThresholdSet().resolve(DriveFacts(None, None))


def test_describe_names_profiles_files_and_counts(tmp_path: Path) -> None:
    path = write(tmp_path, LAYERED)
    lines = ThresholdSet.load([path]).resolve(L85C_128).describe().splitlines()
    assert lines[0] == "3 threshold profile(s) match, most specific first:"
    assert max(len(line) for line in lines) <= 120  # wrapped: a long temp path, a long source
    text = " ".join(" ".join(lines).split())
    assert f'{path}:17 profile "firmware"' in text
    assert "(specificity 4): 1 limit(s) in effect" in text
    assert f'{path}:3 profile "generic" match {{}} (specificity 0): 1 limit(s) in effect' in text
    assert "source: family floors" in text
    assert "no threshold profile matches" in empty_resolution().describe()


TIE = """\
version: 1
profiles:
  - name: by nand
    match: {controller: JMF667H, nand: L85C}
    source: a
    limits:
      seq_write_128k_qd32: {bw_mbps: {min: 140}}
      rand_read_4k_qd1: {iops: {min: 7000}}
"""

TIE_OTHER = """\
version: 1
profiles:
  - name: by firmware
    match: {controller: JMF667H, firmware: SVN417w}
    source: b
    limits:
      rand_read_4k_qd1: {iops: {min: 7000}}
      seq_write_128k_qd32:
        bw_mbps: {min: 150}
"""


def test_equally_specific_profiles_that_disagree_fail_resolution(tmp_path: Path) -> None:
    a = write(tmp_path, TIE, "a.yaml")
    b = write(tmp_path, TIE_OTHER, "b.yaml")
    tset = ThresholdSet.load([a, b])  # they only meet on a drive that matches both
    with pytest.raises(ConfigErrors) as info:
        tset.resolve(L85C_128)
    (err,) = info.value.errors  # rand_read_4k_qd1 agrees (7000 both): fine
    text = str(err)
    assert err.key == "seq_write_128k_qd32.write.bw_mbps"
    assert f"{a}:7" in text and f"{b}:9" in text
    assert '"by nand"' in text and '"by firmware"' in text
    assert "write.bw_mbps >= 140" in text and "write.bw_mbps >= 150" in text
    assert err.fix is not None and "more specific" in err.fix
    # a drive matching only one of them resolves
    other_fw = DriveFacts("JMF667H", "L85C", "SVN999", "m", "s", 128 * 10**9, "sata", "block")
    assert tset.resolve(other_fw).limits[("seq_write_128k_qd32", "write.bw_mbps")].min == 140


def test_a_more_specific_profile_settles_a_tie(tmp_path: Path) -> None:
    a = write(tmp_path, TIE, "a.yaml")
    b = write(tmp_path, TIE_OTHER, "b.yaml")
    c = write(tmp_path, "version: 1\nprofiles:\n" + profile_yaml(
        "both", "{controller: JMF667H, nand: L85C, firmware: SVN417w}",
        "      seq_write_128k_qd32: {bw_mbps: {min: 145}}\n"), "c.yaml")
    resolved = ThresholdSet.load([a, b, c]).resolve(L85C_128)
    assert resolved.limits[("seq_write_128k_qd32", "write.bw_mbps")].min == 145


def test_identical_match_with_different_limits_fails_at_load(tmp_path: Path) -> None:
    a = write(tmp_path, TIE, "a.yaml")
    b = write(tmp_path, "version: 1\nprofiles:\n" + profile_yaml(
        "same match", "{nand: l85c, controller: jmf667h}",
        "      seq_write_128k_qd32: {bw_mbps: {min: 141}}\n"), "b.yaml")
    err = only_error(a, b)
    assert err.key == "seq_write_128k_qd32.write.bw_mbps"
    assert f"{a}:7" in str(err) and f"{b}:7" in str(err)
    assert "have the same match" in str(err)


def test_identical_limits_in_equally_specific_profiles_are_fine(tmp_path: Path) -> None:
    a = write(tmp_path, TIE, "a.yaml")
    b = write(tmp_path, TIE_OTHER.replace("min: 150", "min: 140"), "b.yaml")
    resolved = ThresholdSet.load([a, b]).resolve(L85C_128)
    winner = resolved.limits[("seq_write_128k_qd32", "write.bw_mbps")]
    assert winner.min == 140 and winner.provenance.profile == "by nand"  # load order


def test_equally_specific_regression_disagreement_fails_resolution(tmp_path: Path) -> None:
    a = write(tmp_path, TIE + "    regression: {max_drop_pct: 5}\n", "a.yaml")
    b = write(tmp_path, TIE_OTHER.replace("min: 150", "min: 140")
              + "    regression: {max_drop_pct: 8}\n", "b.yaml")
    tset = ThresholdSet.load([a, b])
    with pytest.raises(ConfigErrors) as info:
        tset.resolve(L85C_128)
    (err,) = info.value.errors
    assert err.key == "regression"
    assert "allows 5 %" in str(err) and "allows 8 %" in str(err)
