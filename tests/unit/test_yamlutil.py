"""Tests of ``pytest_ssdqual.yamlutil``: YAML data with the line of every node, path formatting."""

from __future__ import annotations

from collections import deque
from pathlib import Path

import jsonschema
import pytest
import yaml

from pytest_ssdqual import yamlutil
from pytest_ssdqual.errors import ConfigError
from pytest_ssdqual.yamlutil import json_path, line_of, load_yaml_with_lines, parse_yaml_with_lines

from ..conftest import REPO

INVENTORY_TEXT = """\
# lab inventory
version: 1
drives:
  - match: {model: "JMicron*JMF667H*128*"}
    controller: JMF667H
    nand: L85C
  - match:
      serial: S3Z9NB0K123456
    controller: PS5012-E12
"""


def write(tmp_path: Path, text: str, name: str = "f.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("parts", "text"),
    [
        ([], ""),
        (["drives"], "drives"),
        (["drives", 0, "match"], "drives[0].match"),
        (deque(["drives", 0, "match", "model"]), "drives[0].match.model"),
        ([0, 1], "[0][1]"),
        (["limits", "write.bw_mbps", "min"], 'limits["write.bw_mbps"].min'),
        (["a b"], '["a b"]'),
        (["x", ""], 'x[""]'),
        (['q"uote'], '["q\\"uote"]'),
        (["glob*?"], "glob*?"),
    ],
)
def test_json_path_formats(parts: list[str | int], text: str) -> None:
    assert json_path(parts) == text


def test_lines_of_every_node(tmp_path: Path) -> None:
    data, lines = load_yaml_with_lines(write(tmp_path, INVENTORY_TEXT))
    assert data == {
        "version": 1,
        "drives": [
            {"match": {"model": "JMicron*JMF667H*128*"}, "controller": "JMF667H", "nand": "L85C"},
            {"match": {"serial": "S3Z9NB0K123456"}, "controller": "PS5012-E12"},
        ],
    }
    assert lines == {
        "": 2,
        "version": 2,
        "drives": 3,
        "drives[0]": 4,
        "drives[0].match": 4,
        "drives[0].match.model": 4,
        "drives[0].controller": 5,
        "drives[0].nand": 6,
        "drives[1]": 7,
        "drives[1].match": 7,
        "drives[1].match.serial": 8,
        "drives[1].controller": 9,
    }


def test_jsonschema_paths_find_their_lines(tmp_path: Path) -> None:
    schema = {
        "type": "object",
        "properties": {
            "drives": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"nand": {"type": "integer"}},
                    "required": ["nand"],
                },
            }
        },
    }
    data, lines = load_yaml_with_lines(write(tmp_path, INVENTORY_TEXT))
    errors = sorted(
        jsonschema.Draft202012Validator(schema).iter_errors(data), key=lambda e: list(e.path)
    )
    found = [(json_path(e.absolute_path), line_of(lines, e.absolute_path)) for e in errors]
    # drives[0].nand is a string (line 6); drives[1] lacks nand: reported at the item (line 7).
    assert found == [("drives[0].nand", 6), ("drives[1]", 7)]


def test_line_of_falls_back_to_ancestor() -> None:
    lines = {"": 1, "drives": 3, "drives[0]": 4}
    assert line_of(lines, ["drives", 0, "match", "model"]) == 4
    assert line_of(lines, ["other"]) == 1
    assert line_of({}, ["x"]) is None


def test_merge_keys_take_the_line_of_their_definition() -> None:
    text = "base: &b\n  x: 1\n  y: 2\nitem:\n  <<: *b\n  x: 3\n"
    data, lines = parse_yaml_with_lines(text)
    assert data == {"base": {"x": 1, "y": 2}, "item": {"x": 3, "y": 2}}
    assert lines["item.x"] == 6  # overridden here
    assert lines["item.y"] == 3  # comes from the anchor


def test_dotted_keys_are_quoted_consistently() -> None:
    _, lines = parse_yaml_with_lines("limits:\n  seq:\n    write.bw_mbps: {min: 1}\n")
    key = json_path(["limits", "seq", "write.bw_mbps", "min"])
    assert key == 'limits.seq["write.bw_mbps"].min'
    assert lines[key] == 3


@pytest.mark.parametrize("text", ["", "# just a comment\n"])
def test_empty_document(text: str) -> None:
    assert parse_yaml_with_lines(text) == (None, {})


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        ("a: [1, 2\nb: 3\n", 2, ["but got ':'", "started at line 1"]),
        ("a:\n\t- b\n", 2, ["'\\t'", "not tabs"]),
        ("a: b: c\n", 1, ["mapping values are not allowed", "column 5"]),
        ('a: "open\n', 2, ["end of stream", "started at line 1"]),
        ("a: 1\n---\nb: 2\n", 2, ["another document"]),
        ("a: !!python/object:os.system x\n", 1, ["could not determine a constructor"]),
    ],
)
def test_syntax_errors_name_file_and_line(
    tmp_path: Path, text: str, line: int, words: list[str]
) -> None:
    path = write(tmp_path, text, "bad.yaml")
    with pytest.raises(ConfigError) as info:
        load_yaml_with_lines(path)
    assert info.value.file == str(path)
    assert info.value.line == line
    message = str(info.value)
    assert f"bad.yaml:{line}:" in message
    for word in words:
        assert word in message


def test_duplicate_key_is_an_error(tmp_path: Path) -> None:
    path = write(tmp_path, "drives:\n  - controller: A\n    nand: X\n    controller: B\n")
    with pytest.raises(ConfigError) as info:
        load_yaml_with_lines(path)
    assert info.value.line == 4
    assert info.value.key == "drives[0].controller"
    assert "duplicate key 'controller' (first at line 2)" in str(info.value)


def test_recursive_alias_does_not_loop() -> None:
    data, lines = parse_yaml_with_lines("- &a [*a]\n")
    assert isinstance(data, list)
    assert lines == {"": 1, "[0]": 1, "[0][0]": 1}


def test_missing_and_non_utf8_files(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="file not found"):
        load_yaml_with_lines(tmp_path / "nope.yaml")
    bad = tmp_path / "latin1.yaml"
    bad.write_bytes(b"model: Caf\xe9\n")
    with pytest.raises(ConfigError, match="not UTF-8") as info:
        load_yaml_with_lines(bad)
    assert str(bad) in str(info.value)


def test_syntax_error_names_the_key_it_happened_under(tmp_path: Path) -> None:
    text = 'version: 1\ndrives:\n  - match: {model: "X*"}\n    nand: [L85C\n'
    path = write(tmp_path, text, "inventory.yaml")
    with pytest.raises(ConfigError) as info:
        load_yaml_with_lines(path)
    assert info.value.key == "drives[0].nand[0]"
    message = str(info.value)
    assert "inventory.yaml:5: drives[0].nand[0]: YAML syntax error" in message
    assert "started at line 4: 'nand: [L85C'" in message


SHIPPED_YAML = sorted([*(REPO / "thresholds").glob("*.yaml"), *(REPO / "emulated").glob("*.yaml"),
                       *REPO.glob("*.example.yaml")])
#: Texts the libyaml parse hands to the pure-Python one: syntax errors, a duplicate key, a
#: number beyond 2**64, nesting deeper than MAX_DEPTH, a recursive alias, a control character,
#: a tab, two documents.
AWKWARD_YAML = [
    "a: [1, 2\n", "a: 1\na: 2\n", "a: 1e999\n", "a: " + "[" * 70 + "]" * 70 + "\n",
    "- &a [*a]\n", "a: b\x07\n", "a:\n\tb: 1\n", "a: 1\n---\nb: 2\n", "key: {a: 1, b: [x, y]}\n",
    "base: &b {x: 1}\nuse:\n  <<: *b\n  y: 2\n", "? [a, b]\n: c\n",
]


def _pure(monkeypatch: pytest.MonkeyPatch) -> None:
    """Parse with PyYAML's pure-Python loader only, as without libyaml."""
    monkeypatch.setattr(yamlutil, "_libyaml_loader", lambda: None)


def _outcome(text: str) -> tuple[object, ...]:
    try:
        data, lines = parse_yaml_with_lines(text, file="f.yaml")
    except ConfigError as exc:
        return ("error", str(exc), exc.line, exc.key)
    return ("ok", repr(data), lines)


def test_libyaml_is_used_when_pyyaml_has_it() -> None:
    if not yaml.__with_libyaml__:
        pytest.skip("PyYAML built without libyaml: the pure-Python loader is the only one")
    assert yamlutil._libyaml_loader() is yaml.CSafeLoader


@pytest.mark.parametrize("path", SHIPPED_YAML, ids=lambda p: p.name)
def test_libyaml_and_pure_python_give_the_same_data_and_lines(
        path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = path.read_text(encoding="utf-8")
    fast = _outcome(text)
    assert fast[0] == "ok" and len(fast[2]) > 10  # type: ignore[arg-type]
    _pure(monkeypatch)
    assert _outcome(text) == fast


@pytest.mark.parametrize("text", AWKWARD_YAML)
def test_awkward_texts_read_or_fail_the_same_with_and_without_libyaml(
        text: str, monkeypatch: pytest.MonkeyPatch) -> None:
    fast = _outcome(text)
    _pure(monkeypatch)
    assert _outcome(text) == fast
