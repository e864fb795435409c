"""Fuzzing (issue 6, item 7): generated and mutated inputs for the fio output reader, the
identity and health parsers, and the threshold and inventory loaders. Each may raise only the
project's documented errors (``SsdQualError`` subclasses; ``ValueError`` where a parser's
docstring promises it for an unreadable number) -- never a ``KeyError``, ``TypeError``,
``IndexError`` or ``RecursionError`` from a malformed document.

Inputs are real files mutated: ``../shared/cases/real/`` (fio, smartctl, nvme-cli),
``tests/data/fio/`` and the shipped ``thresholds/*.yaml``, cut, spliced, respelled, with
values replaced by arbitrary JSON/YAML values; plus wholly generated text.

Reproducible: ``derandomize=True`` (the examples come from a fixed seed, the same on every run)
and no example database. About 3,000 examples in all, about 35 s on a loaded 2-core
machine (the CI budget for fuzzing is 60 s).
"""

from __future__ import annotations

import copy
import json
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_ssdqual.drive.health import health_from_nvme_smart_log, health_from_smartctl
from pytest_ssdqual.drive.inventory import Inventory
from pytest_ssdqual.drive.nvme_identity import identity_from_nvme_id_ctrl
from pytest_ssdqual.drive.smartctl_identity import identity_from_smartctl
from pytest_ssdqual.drive.tool_values import coerce_int
from pytest_ssdqual.errors import ConfigError, DeviceError, FioError, SsdQualError
from pytest_ssdqual.fio.check import check_run
from pytest_ssdqual.fio.io_errors import parse_io_errors
from pytest_ssdqual.fio.parse import parse_fio_output
from pytest_ssdqual.fio.runner import FioRun
from pytest_ssdqual.thresholds.loader import ThresholdSet

from ..conftest import REPO, cases_dir

REAL = cases_dir() / "real"


def _texts(*folders: Path, pattern: str = "*") -> list[str]:
    out = []
    for folder in folders:
        if folder.is_dir():
            out += [p.read_text(errors="replace") for p in sorted(folder.glob(pattern))
                    if p.is_file() and p.name != "README.md"]
    return out


def _docs(texts: list[str]) -> list[Any]:
    docs = []
    for text in texts:
        try:
            docs.append(json.loads(text[text.find("{"):]) if "{" in text else None)
        except json.JSONDecodeError:
            continue
    return [d for d in docs if isinstance(d, dict)]


FIO_TEXTS = _texts(REAL / "fio", REPO / "tests" / "data" / "fio")
FIO_DOCS = _docs(FIO_TEXTS)
SMARTCTL_DOCS = _docs(_texts(REAL / "smartctl", pattern="*.json"))
NVME_DOCS = _docs(_texts(REAL / "nvme", REAL / "nvme" / "derived", pattern="*.json"))
THRESHOLD_TEXTS = _texts(REPO / "thresholds", pattern="*.yaml")
INVENTORY_TEXTS = _texts(REPO, pattern="inventory.example.yaml")

#: Keys the parsers look for, so generated documents reach past the first check.
KEYS = [
    "smartctl", "device", "model_name", "serial_number", "user_capacity", "nvme_namespaces",
    "rotation_rate", "nvme_smart_health_information_log", "temperature", "power_on_time",
    "smart_status", "critical_warning", "mn", "sn", "fr", "tnvmcap", "wctemp", "data_units_read",
    "avail_spare", "percent_used",
]

FUZZ = settings(
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=list(HealthCheck),
)

#: Pieces that break or bend fio's and the tools' documents in the ways seen in the wild.
FRAGMENTS = st.one_of(
    st.text(max_size=12),
    st.sampled_from([
        "{", "}", "[", "]", ",", ":", '"', "\n", "null", "-1", "0", "1e999", "NaN", "Infinity",
        "18446744073709551616", '"fio version" : "fio-3.33",', "\n{\n", "fio: terminating on "
        "signal 2\n", "fio: io_u error on file /dev/sdb: Input/output error: read offset=4096, "
        "buflen=4096\n", '{"jobs": []}', '"error" : 5,', '"clat_ns" : {', '"percentile" : {',
        "\ufeff", "\x00", "  - ", "version: 1\n", "&a [*a]", "!!python/object:os.system",
    ]),
)

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8)
    | st.sampled_from([2**64, 2**128 + 1, -1, 0, "1,234", "0,5", "", " "]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner,
                                                                max_size=3),
    max_leaves=6,
)


@st.composite
def mutated_text(draw: st.DrawFn, sources: list[str]) -> str:
    """A real text with 1-4 edits: cut, delete, insert, replace, duplicate."""
    text = draw(st.sampled_from(sources))
    for _ in range(draw(st.integers(1, 4))):
        i = draw(st.integers(0, len(text)))
        j = draw(st.integers(i, min(len(text), i + 300)))
        op = draw(st.sampled_from(["cut", "delete", "insert", "replace", "duplicate"]))
        if op == "cut":
            text = text[:i]
        elif op == "delete":
            text = text[:i] + text[j:]
        elif op == "insert":
            text = text[:i] + draw(FRAGMENTS) + text[i:]
        elif op == "replace":
            text = text[:i] + draw(FRAGMENTS) + text[j:]
        else:
            text = text[:j] + text[i:j] + text[j:]
    return text


def _slots(node: Any, out: list[tuple[Any, Any]]) -> list[tuple[Any, Any]]:
    """Every (container, key or index) in a JSON tree."""
    if isinstance(node, dict):
        for key, value in node.items():
            out.append((node, key))
            _slots(value, out)
    elif isinstance(node, list):
        for index, value in enumerate(node):
            out.append((node, index))
            _slots(value, out)
    return out


@st.composite
def mutated_doc(draw: st.DrawFn, sources: list[Any]) -> Any:
    """A real document with 1-5 values replaced by arbitrary JSON values or deleted."""
    doc = copy.deepcopy(draw(st.sampled_from(sources)))
    for _ in range(draw(st.integers(1, 5))):
        slots = _slots(doc, [])
        if not slots:
            break
        container, key = draw(st.sampled_from(slots))
        if isinstance(container, dict) and draw(st.booleans()):
            del container[key]
        else:
            container[key] = draw(JSON_VALUES)
    return doc


def _only(allowed: tuple[type[BaseException], ...], call: Callable[[], object]) -> None:
    try:
        call()
    except allowed:
        pass


# --------------------------------------------------------------------------- fio output


@settings(FUZZ, max_examples=600)
@given(st.data())
def test_fio_reader_on_mutated_real_outputs(data: st.DataObject) -> None:
    text = data.draw(mutated_text(FIO_TEXTS))
    try:
        parse_fio_output(text, source="fuzz")
    except FioError as exc:
        assert exc.raw_output in (text, text.removeprefix("\ufeff"))  # a BOM is dropped
    parse_io_errors(text)  # never raises


@settings(FUZZ, max_examples=400)
@given(st.data())
def test_fio_reader_on_real_documents_with_values_replaced(data: st.DataObject) -> None:
    doc = data.draw(mutated_doc(FIO_DOCS))
    _only((FioError,), lambda: parse_fio_output(json.dumps(doc), source="fuzz"))


@settings(FUZZ, max_examples=300)
@given(st.text(max_size=400), st.integers(-64, 255), st.text(max_size=200),
       st.none() | st.floats(0, 1000))
def test_check_run_on_generated_output(
    raw: str, returncode: int, stderr: str, runtime_s: float | None
) -> None:
    run = FioRun(argv=("fio",), job_path=Path("j.fio"), output_path=Path("j.json"),
                 returncode=returncode, duration_s=1.0, raw_output=raw, stderr=stderr)
    _only((FioError,), lambda: check_run(run, expected_runtime_s=runtime_s))


# --------------------------------------------------------------------------- identity, health


@settings(FUZZ, max_examples=300)
@given(st.data())
def test_smartctl_parsers_on_mutated_real_documents(data: st.DataObject) -> None:
    if not SMARTCTL_DOCS:
        pytest.skip(f"real cases folder {REAL} not found: set SSDQUAL_CASES_DIR")
    doc = data.draw(mutated_doc(SMARTCTL_DOCS))
    _only((DeviceError,), lambda: identity_from_smartctl(doc))
    _only((DeviceError,), lambda: health_from_smartctl(doc))


@settings(FUZZ, max_examples=400)
@given(st.data())
def test_nvme_parsers_on_mutated_real_documents(data: st.DataObject) -> None:
    if not NVME_DOCS:
        pytest.skip(f"real cases folder {REAL} not found: set SSDQUAL_CASES_DIR")
    doc = data.draw(mutated_doc(NVME_DOCS))
    # identity_from_nvme_id_ctrl documents ValueError for a number in no known spelling
    _only((DeviceError, ValueError), lambda: identity_from_nvme_id_ctrl(doc))
    _only((DeviceError,), lambda: health_from_nvme_smart_log(doc))


@settings(FUZZ, max_examples=300)
@given(st.dictionaries(st.sampled_from(KEYS) | st.text(max_size=6), JSON_VALUES, max_size=8),
       JSON_VALUES)
def test_parsers_on_generated_documents(doc: dict[str, Any], value: Any) -> None:
    # the parsers take a JSON object (``dict``), as the tools print and identify() checks
    for parser in (identity_from_smartctl, health_from_smartctl, health_from_nvme_smart_log):
        _only((DeviceError,), lambda p=parser: p(doc))  # type: ignore[misc]
    _only((DeviceError, ValueError), lambda: identity_from_nvme_id_ctrl(doc))
    _only((ValueError,), lambda: coerce_int(value, field="x"))


@settings(FUZZ, max_examples=300)
@given(st.one_of(st.text(max_size=30), st.from_regex(r"[ +-]?[\d,.eE]{1,30}", fullmatch=True)))
def test_coerce_int_reads_or_raises_value_error(text: str) -> None:
    try:
        value = coerce_int(text, field="x")
    except ValueError as exc:
        assert "x: expected an integer" in str(exc)
    else:
        assert isinstance(value, int)


# --------------------------------------------------------------------------- loaders


def _load_yaml(loader: Callable[[Path], object], text: str) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "fuzz.yaml"
        path.write_text(text)
        try:
            loader(path)
        except ConfigError as exc:
            assert str(path) in str(exc) or "fuzz.yaml" in str(exc), str(exc)


@settings(FUZZ, max_examples=200)
@given(st.data())
def test_threshold_loader_on_mutated_real_files(data: st.DataObject) -> None:
    text = data.draw(mutated_text(THRESHOLD_TEXTS))
    _load_yaml(lambda p: ThresholdSet.load([p]), text)


@settings(FUZZ, max_examples=80)
@given(st.data())
def test_threshold_loader_on_real_files_with_values_replaced(data: st.DataObject) -> None:
    docs = [yaml.safe_load(t) for t in THRESHOLD_TEXTS]
    doc = data.draw(mutated_doc(docs))
    text = yaml.safe_dump(doc, allow_unicode=True)
    _load_yaml(lambda p: ThresholdSet.load([p]), text)


@settings(FUZZ, max_examples=120)
@given(st.data())
def test_inventory_loader_on_mutated_files(data: st.DataObject) -> None:
    if data.draw(st.booleans()):
        text = data.draw(mutated_text(INVENTORY_TEXTS))
    else:
        doc = data.draw(mutated_doc([yaml.safe_load(t) for t in INVENTORY_TEXTS]))
        text = yaml.safe_dump(doc, allow_unicode=True)
    _load_yaml(Inventory.load, text)


def test_every_fuzzed_error_is_a_project_error() -> None:
    # The allowed families above are the documented ones: all but ValueError (documented by
    # coerce_int / nvme id-ctrl) derive from SsdQualError.
    for family in (FioError, DeviceError, ConfigError):
        assert issubclass(family, SsdQualError)
    assert FIO_TEXTS and FIO_DOCS and THRESHOLD_TEXTS and INVENTORY_TEXTS


# --------------------------------------------------------------------------- what fuzzing found


def test_found_non_finite_numbers_in_fio_json_are_output_errors() -> None:
    # json reads NaN/Infinity; int(nan) used to escape as ValueError / OverflowError
    text = (REPO / "tests" / "data" / "fio"
            / "fio-3.33_local_randrw70_4k_qd16_2jobs_group_reporting.json").read_text()
    doc = json.loads(text)
    for bad in (float("nan"), float("inf")):
        doc["jobs"][0]["read"]["runtime"] = bad
        with pytest.raises(FioError, match=r"jobs\[0\]\.read\.runtime is .*not a finite number"):
            parse_fio_output(json.dumps(doc))


def test_found_control_character_in_yaml_is_a_config_error_with_its_line(tmp_path: Path) -> None:
    # PyYAML's reader rejects it while the loader is built, which used to be outside the try
    path = tmp_path / "limits.yaml"
    path.write_text("version: 1\nprofiles:\n  - name: \x1f\n")
    with pytest.raises(ConfigError, match=r"limits.yaml:3: YAML syntax error: unacceptable "
                       r"character #x001f"):
        ThresholdSet.load([path])
