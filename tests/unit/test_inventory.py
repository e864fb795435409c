"""Tests of ``pytest_ssdqual.drive.inventory``: loading, validation errors, lookup, precedence."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from pytest_ssdqual.drive.identity import DriveIdentity
from pytest_ssdqual.drive.inventory import Assignment, Inventory, load_schema, resolve_assignment
from pytest_ssdqual.drive.smartctl_identity import identity_from_smartctl
from pytest_ssdqual.errors import ConfigError, ConfigErrors

REPO = Path(__file__).resolve().parents[2]

LAB = """\
version: 1
drives:
  - match: {model: "Samsung SSD 860*"}
    controller: MJX
    nand: V-NAND-64L-TLC
  - match: {model: "samsung ssd 860 evo*"}
    controller: SHADOWED
  - match: {serial: "S3YZNB0KB00864E"}
    controller: MJX-rev2
    nand: V-NAND-96L-TLC
    note: "the unit on bench 3"
  - match: {model: "JMicron*JMF667H*128*"}
    controller: JMF667H
    nand: L85C
  - match: {model: "*M4*", serial: "123009116906"}
    nand: Micron-25nm-MLC
"""


def drive(model: str, serial: str, **kw: object) -> DriveIdentity:
    fields: dict[str, object] = dict(
        model=model,
        serial=serial,
        firmware="FW1",
        capacity_bytes=128_035_676_160,
        logical_sector_bytes=512,
        physical_sector_bytes=512,
        transport="SATA",
        rotational=False,
    )
    fields.update(kw)
    return DriveIdentity(**fields)  # type: ignore[arg-type]


EVO = drive("Samsung SSD 860 EVO 500GB", "S3YZNB0KB00864E")
OTHER_EVO = drive("Samsung SSD 860 EVO 500GB", "S3YZNB0KB99999X")
JMF = drive("JMicron Tech JMF667H 128GB SSD", "JM0001")
UNKNOWN = drive("ACME Fast 1TB", "ACME42")
LOOP = drive("Linux loop device", "/tmp/x.img", transport="virtual", kind="loop", vendor="Linux")


@pytest.fixture
def lab(tmp_path: Path) -> Inventory:
    path = tmp_path / "inventory.yaml"
    path.write_text(LAB, encoding="utf-8")
    return Inventory.load(path)


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "inventory.yaml"
    path.write_text(text, encoding="utf-8")
    return path


# --------------------------------------------------------------------------- lookup / precedence


def test_serial_beats_model_glob_listed_before_it(lab: Inventory) -> None:
    found = resolve_assignment(EVO, lab)
    assert (found.controller, found.nand) == ("MJX-rev2", "V-NAND-96L-TLC")
    assert found.source == f"{lab.path}:8 (serial S3YZNB0KB00864E)"
    assert found.known


def test_first_model_glob_wins_case_insensitively(lab: Inventory) -> None:
    found = resolve_assignment(OTHER_EVO, lab)
    assert (found.controller, found.nand) == ("MJX", "V-NAND-64L-TLC")
    assert found.source == f'{lab.path}:3 (model glob "Samsung SSD 860*")'
    jmf = resolve_assignment(JMF, lab)
    assert (jmf.controller, jmf.nand) == ("JMF667H", "L85C")


def test_entry_with_model_and_serial_needs_both(lab: Inventory) -> None:
    m4 = drive("MTFDDAK128MAM-1J1 m4", "123009116906")
    assert lab.lookup(m4) == Assignment(
        None, "Micron-25nm-MLC", f"{lab.path}:15 (serial 123009116906)"
    )
    assert lab.lookup(replace(m4, serial="123009116907")) is None


def test_cli_overrides_beat_inventory_each_separately(lab: Inventory) -> None:
    both = resolve_assignment(EVO, lab, controller="PS3111-S11", nand="BiCS4")
    assert both == Assignment("PS3111-S11", "BiCS4", "--controller/--nand options")
    only_controller = resolve_assignment(EVO, lab, controller="PS3111-S11")
    assert (only_controller.controller, only_controller.nand) == ("PS3111-S11", "V-NAND-96L-TLC")
    assert only_controller.source == (
        f"controller: --controller option; nand: {lab.path}:8 (serial S3YZNB0KB00864E)"
    )
    only_nand = resolve_assignment(UNKNOWN, None, nand="B47R")
    assert only_nand == Assignment(None, "B47R", "--nand option")
    assert not only_nand.known


def test_unknown_drive_goes_on_with_generic_limits(lab: Inventory) -> None:
    found = resolve_assignment(UNKNOWN, lab)
    assert found == Assignment(
        None, None, f"not in inventory {lab.path}: ACME Fast 1TB (S/N ACME42)"
    )
    assert not found.known
    assert (
        resolve_assignment(UNKNOWN, None).source == "not in inventory: ACME Fast 1TB (S/N ACME42)"
    )
    assert lab.lookup(UNKNOWN) is None


def test_builtin_entries_for_virtual_targets(lab: Inventory) -> None:
    assert resolve_assignment(LOOP, None) == Assignment(
        "linux-loop", "host-file", "built-in (Linux loop device)"
    )
    zram = replace(LOOP, model="Linux zram device", serial="zram0", kind="zram")
    assert resolve_assignment(zram, lab) == Assignment(
        "linux-zram", "dram", "built-in (Linux zram device)"
    )
    scratch = replace(LOOP, model="Scratch file", kind="file")
    assert resolve_assignment(scratch, None) == Assignment(
        "host-file", "host-fs", "built-in (Scratch file)"
    )


def test_lab_inventory_beats_builtin(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        'version: 1\ndrives:\n  - match: {model: "Linux loop*"}\n    controller: my-loop\n',
    )
    found = resolve_assignment(LOOP, Inventory.load(path))
    # controller from the lab file; the lab entry has no nand, so the built-in one fills it.
    assert (found.controller, found.nand) == ("my-loop", "host-file")
    assert found.source == (
        f'controller: {path}:3 (model glob "Linux loop*"); nand: built-in (Linux loop device)'
    )


def test_real_smartctl_identities_against_example_inventory(real_cases: Path) -> None:
    """The example file shipped at the repo root loads and assigns the real drives it lists."""
    example = Inventory.load(REPO / "inventory.example.yaml")
    expected = {
        "smartctl-7.0_sat_samsung860evo_xall.json": ("MJX", "V-NAND-64L-TLC"),
        "smartctl-7.0_nvme_corsair_force_mp510_anonymized.json": ("PS5012-E12", "BiCS3"),
        "smartctl-7.1_nvme_intel660p_SSDPEKNW010T8.json": ("SM2263", "Intel-64L-QLC"),
        "smartctl-7.3_sat_kingston_a400_exit4_redacted.json": ("PS3111-S11", None),
        "smartctl-7.4_sat_crucial_m4_xall_truenas_farm_unsupported.json": (
            "88SS9174",
            "Micron-25nm-MLC",
        ),
        "smartctl-7.4_info_jmb39x_wd_red_exit4.json": (None, None),
    }
    for name, (controller, nand) in expected.items():
        doc = json.loads((real_cases / "smartctl" / name).read_text(encoding="utf-8"))
        found = identity_from_smartctl(doc)
        ident = drive(str(found["model"]), str(found["serial"]))
        assignment = resolve_assignment(ident, example)
        assert (assignment.controller, assignment.nand) == (controller, nand), name


# --------------------------------------------------------------------------- bad files


def test_yaml_syntax_error(tmp_path: Path) -> None:
    path = write(tmp_path, 'version: 1\ndrives:\n  - match: {model: "X*"\n    controller: Y\n')
    with pytest.raises(ConfigError) as info:
        Inventory.load(path)
    message = str(info.value)
    assert str(path) in message and "inventory.yaml:4:" in message
    assert "drives[0].match.model" in message  # the key it happened under
    assert "started at line 3" in message


def test_schema_violations_all_reported_with_lines(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """\
version: 2
drives:
  - match: {model: "JMicron*"}
    contoller: JMF667H
    nand: L85C
  - match:
      serial: 0123
    controller: PS5012-E12
  - controller: X
extra: true
""",
    )
    with pytest.raises(ConfigErrors) as info:
        Inventory.load(path)
    got = [(e.line, e.key, e.message) for e in info.value.errors]
    assert got == [
        (1, "version", "unsupported version 2"),
        (4, "drives[0].contoller", "unknown key 'contoller'"),
        (7, "drives[1].match.serial", "YAML read the unquoted value 0123 as the number 83"),
        (9, "drives[2]", "'match' is a required property"),
        (10, "extra", "unknown key 'extra'"),
    ]
    fixes = [e.fix for e in info.value.errors]
    assert fixes[1] == "did you mean 'controller'?"
    assert fixes[2] == 'quote it: serial: "0123"'
    text = str(info.value)
    assert text.startswith("5 errors:\n")
    assert f"{path}:4: drives[0].contoller: unknown key 'contoller'" in text


def test_match_with_neither_model_nor_serial(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "version: 1\ndrives:\n  - match: {firmware: X1}\n    controller: A\n"
        "  - match: {}\n    controller: B\n",
    )
    with pytest.raises(ConfigErrors) as info:
        Inventory.load(path)
    got = [(e.line, e.key, e.message) for e in info.value.errors]
    assert got == [
        (3, "drives[0].match", "match has neither 'model' nor 'serial'"),
        (3, "drives[0].match.firmware", "unknown key 'firmware'"),
        (5, "drives[1].match", "match has neither 'model' nor 'serial'"),
    ]
    assert f"{path}:5: drives[1].match: match has neither 'model' nor 'serial'" in str(info.value)


def test_entry_assigning_nothing_and_empty_value(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        'version: 1\ndrives:\n  - match: {model: "A*"}\n    note: hi\n'
        '  - match: {model: "B*"}\n    nand:\n',
    )
    with pytest.raises(ConfigErrors) as info:
        Inventory.load(path)
    got = [(e.line, e.key, e.message) for e in info.value.errors]
    assert got == [
        (3, "drives[0]", "entry assigns neither 'controller', 'nand' nor "
             "'smartctl_device_type'"),
        (6, "drives[1].nand", "no value given"),
    ]


def test_duplicate_match_is_an_error(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        'version: 1\ndrives:\n  - match: {serial: "S1"}\n    nand: A\n'
        '  - match: {serial: "S1"}\n    nand: B\n',
    )
    with pytest.raises(ConfigError) as info:
        Inventory.load(path)
    assert str(info.value) == (
        f"{path}:5: drives[1].match: same match as drives[0] (line 3): this entry never applies"
        " (fix: merge the two entries or remove one)"
    )


def test_duplicate_key_is_an_error(tmp_path: Path) -> None:
    path = write(tmp_path, "version: 1\ndrives:\n  - match: {model: A}\n    nand: X\n    nand: Y\n")
    with pytest.raises(ConfigError, match=r"inventory.yaml:5: drives\[0\].nand: duplicate key"):
        Inventory.load(path)


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("", "the file is empty"),
        ("- a\n", "expected a mapping with 'version' and 'drives', got list"),
        ("version: 1\n", "'drives' is a required property"),
    ],
)
def test_file_shape_errors(tmp_path: Path, text: str, words: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as info:
        Inventory.load(path)
    assert words in str(info.value)
    assert str(path) in str(info.value)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="file not found"):
        Inventory.load(tmp_path / "nope.yaml")


def test_schema_is_shipped_and_valid() -> None:
    import jsonschema

    schema = load_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["properties"]["version"] == {
        "description": "Format version of this file.",
        "const": 1,
    }


def test_example_inventory_loads() -> None:
    example = Inventory.load(REPO / "inventory.example.yaml")
    assert len(example) == 8
    jmf = example.entries[0]
    assert (jmf.model, jmf.controller, jmf.nand, jmf.note) == (
        "JMicron*JMF667H*128GB*L85C*",
        "JMF667H",
        "L85C",
        "Reference board, IMFT L85C, 128 GB (firmware SVN417w)",
    )


def test_example_inventory_globs_each_match_one_jmf667h_board() -> None:
    """Formerly ``JMicron*JMF667H*128*`` -> L85C also matched the Toshiba A19 128 GB board,
    which then got the L85C's limits. Each board's model string (as its emulated twin reports
    it) is matched by one entry, with its own NAND."""
    import fnmatch

    example = Inventory.load(REPO / "inventory.example.yaml")
    boards = {"JMicron JMF667H 128GB reference (IMFT L85C)": "L85C",
              "JMicron JMF667H 128GB reference (Toshiba A19)": "A19",
              "JMicron JMF667H 240GB reference (Toshiba A19)": None,
              "JMicron JMF667H 256GB reference (IMFT L85A)": None}
    for model, nand in boards.items():
        matching = [e for e in example.entries
                    if e.model and fnmatch.fnmatchcase(model.casefold(), e.model.casefold())]
        assert len(matching) == (0 if nand is None else 1), (model, matching)
        assignment = resolve_assignment(drive(model, "SN1"), example)
        assert assignment.nand == nand, model
        if nand is not None:
            assert assignment.controller == "JMF667H"
