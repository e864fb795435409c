"""Fuzzing: generated and mutated inputs for the fio output reader, the
identity and health parsers, and the threshold and inventory loaders. Each may raise only the
project's documented errors (``SsdQualError`` subclasses; ``ValueError`` where a parser's
docstring promises it for an unreadable number) -- never a ``KeyError``, ``TypeError``,
``IndexError`` or ``RecursionError`` from a malformed document.

Inputs are real files mutated: ``../shared/cases/real/`` (fio, smartctl, nvme-cli),
``tests/data/fio/`` and the shipped ``thresholds/*.yaml``, cut, spliced, respelled, with
values replaced by arbitrary JSON/YAML values; plus wholly generated text.

The classes of input the t3 trial found (``../shared/cases/found/t3/parser-crashes/``) are
generated too: integers of 401 digits, NaN/infinity, negative figures, nesting past the readers'
stack (fio, smartctl/nvme-cli text, YAML), fio log lines with negative, 0 or far-future stamps,
and emulated model files; each case of that trial has its own test at the end.

Reproducible: ``derandomize=True`` (the examples come from a fixed seed, the same on every run)
and no example database. About 4,600 examples in all, about 25-45 s on a loaded 2-core
machine (the CI budget for fuzzing is 60 s).
"""

from __future__ import annotations

import copy
import json
import math
import tempfile
import time
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
from pytest_ssdqual.drive.tool_runner import run_tool
from pytest_ssdqual.drive.tool_values import coerce_int
from pytest_ssdqual.emulate.model_file import load_model
from pytest_ssdqual.errors import (
    ConfigError,
    DeviceError,
    FioError,
    FioJobError,
    SsdQualError,
)
from pytest_ssdqual.fio.check import check_run
from pytest_ssdqual.fio.io_errors import parse_io_errors
from pytest_ssdqual.fio.logs import parse_log, read_series, to_series
from pytest_ssdqual.fio.parse import parse_fio_output
from pytest_ssdqual.fio.runner import FioRun
from pytest_ssdqual.fio.series import BandwidthSeries
from pytest_ssdqual.methodology.slc_cache import detect_slc_cliff
from pytest_ssdqual.thresholds.loader import ThresholdSet
from pytest_ssdqual.yamlutil import json_path

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
MODEL_TEXTS = _texts(REPO / "emulated", pattern="*.yaml")
TOOL_TEXTS = _texts(REAL / "smartctl", REAL / "nvme", pattern="*.json")
#: The YAML files parsed once (``mutated_doc`` mutates a deep copy): parsing the thresholds
#: again for each example took 8 of the test's 8.1 s.
THRESHOLD_DOCS = [yaml.safe_load(t) for t in THRESHOLD_TEXTS]
#: The tests that draw only from the real smartctl / nvme-cli outputs skip without them (a clone
#: without ``../shared/cases``; CI has it, and ``SSDQUAL_REQUIRE_CASES=1`` makes its absence an
#: error there).
NEEDS_REAL_TOOL_OUTPUTS = pytest.mark.skipif(
    not (TOOL_TEXTS and SMARTCTL_DOCS + NVME_DOCS),
    reason=f"no real smartctl / nvme-cli outputs in {REAL} (set SSDQUAL_CASES_DIR)")
INVENTORY_DOCS = [yaml.safe_load(t) for t in INVENTORY_TEXTS]
MODEL_DOCS = [yaml.safe_load(t) for t in MODEL_TEXTS]

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
        # out of physical range or past the readers' stack: what the t3 trial found
        "1" + "0" * 400, "-5000", "-0.5", "1e400", ".nan", ".inf", "[" * 2000, "{" * 1200,
    ]),
)

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8)
    | st.sampled_from([2**64, 2**128 + 1, -1, 0, "1,234", "0,5", "", " ", 10**400, -10**400,
                       -5000, -0.5, 2**64 - 1, float("nan"), float("-inf")]),
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


#: Log columns: mostly what fio writes, sometimes out of range (negative, 0, beyond 2**64,
#: a stamp years after the start).
LOG_INTS = st.one_of(st.integers(0, 100_000), st.sampled_from(
    [0, -1, -999999, 2**64, 2**64 + 1, 10**11, 10**400, -10**400]))


@settings(FUZZ, max_examples=300)
@given(st.lists(st.tuples(LOG_INTS, LOG_INTS, st.sampled_from([0, 1, 1, 2, -1]), LOG_INTS),
                max_size=12),
       st.sampled_from([None, 1000, 250]))
def test_log_reader_on_generated_lines(
    lines: list[tuple[int, int, int, int]], window_ms: int | None
) -> None:
    # every line is refused with its line number or read into a series the SLC-cache analysis
    # takes: never OverflowError / ZeroDivisionError, never a series of 10**8 windows
    text = "\n".join(f"{t}, {v}, {d}, {b}, 0" for t, v, d, b in lines)
    try:
        series = to_series([parse_log(text, source="fuzz.log")], "bw", window_ms=window_ms)
    except FioError as exc:
        assert "fuzz.log:" in str(exc) or "fio log:" in str(exc), str(exc)
        return
    assert len(series) <= 1_000_000
    assert all(v >= 0 for v in series.values) and all(t >= 0 for t in series.t_s)
    if any(series.values):
        report = detect_slc_cliff(BandwidthSeries.from_series(series))
        assert report.slc_cache_bytes is None or report.slc_cache_bytes >= 0


@NEEDS_REAL_TOOL_OUTPUTS
@settings(FUZZ, max_examples=150)
@given(st.data())
def test_tool_output_reader_on_mutated_real_texts(data: st.DataObject) -> None:
    # smartctl / nvme-cli stdout, cut and spliced (deep nesting, long numbers): a document or
    # a note, as for any output without JSON -- never an exception
    text = data.draw(mutated_text(TOOL_TEXTS))
    notes: list[str] = []
    doc = run_tool(lambda argv: (0, text), ["smartctl"], "smartctl", notes)
    assert (doc is None) == (notes == ["smartctl (exit 0, no JSON output)"])
    if doc is not None:
        _only((DeviceError,), lambda: identity_from_smartctl(doc))
        _only((DeviceError,), lambda: health_from_smartctl(doc))
        _only((DeviceError,), lambda: health_from_nvme_smart_log(doc))


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
    doc = data.draw(mutated_doc(THRESHOLD_DOCS))
    text = yaml.safe_dump(doc, allow_unicode=True)
    _load_yaml(lambda p: ThresholdSet.load([p]), text)


@settings(FUZZ, max_examples=120)
@given(st.data())
def test_inventory_loader_on_mutated_files(data: st.DataObject) -> None:
    if data.draw(st.booleans()):
        text = data.draw(mutated_text(INVENTORY_TEXTS))
    else:
        doc = data.draw(mutated_doc(INVENTORY_DOCS))
        text = yaml.safe_dump(doc, allow_unicode=True)
    _load_yaml(Inventory.load, text)


@settings(FUZZ, max_examples=150)
@given(st.data())
def test_model_loader_on_mutated_files(data: st.DataObject) -> None:
    if data.draw(st.booleans()):
        text = data.draw(mutated_text(MODEL_TEXTS))
    else:
        doc = data.draw(mutated_doc(MODEL_DOCS))
        text = yaml.safe_dump(doc, allow_unicode=True)
    _load_yaml(load_model, text)


def test_every_fuzzed_error_is_a_project_error() -> None:
    # The allowed families above are the documented ones: all but ValueError (documented by
    # coerce_int / nvme id-ctrl) derive from SsdQualError.
    for family in (FioError, DeviceError, ConfigError):
        assert issubclass(family, SsdQualError)
    assert FIO_TEXTS and FIO_DOCS and THRESHOLD_TEXTS and INVENTORY_TEXTS and MODEL_TEXTS


# ------------------------------------------------ out of physical range, nested past the stack

#: Numbers no reader may take: beyond 2**64, NaN, infinite (YAML and the fio figures).
UNBOUNDED = st.sampled_from([10**400, -10**400, 2**64 + 1, float("nan"), float("inf"),
                             float("-inf")])
#: ... and, for fio's figures (latencies, rates, counts, runtimes, errnos), negative ones.
NEGATIVE = st.sampled_from([-1, -5000, -0.5, -(2**63)])
#: Where the fio reader takes its figures, in a direction and in the job entry.
FIO_FIELDS = [("runtime",), ("iops",), ("io_bytes",), ("bw_bytes",), ("bw",), ("total_ios",),
              ("clat_ns", "mean"), ("clat_ns", "max"), ("clat_ns", "percentile", "99.000000"),
              ("clat_ns", "percentile", "50.000000"), ("clat", "percentile", "99.000000")]
DEEP = "DEEPSLOT"


def _numeric_paths(node: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Paths of every number (not bool) in a parsed document."""
    if isinstance(node, dict):
        return [p for k, v in node.items() for p in _numeric_paths(v, (*path, k))]
    if isinstance(node, list):
        return [p for i, v in enumerate(node) for p in _numeric_paths(v, (*path, i))]
    return [path] if isinstance(node, int | float) and not isinstance(node, bool) else []


def _set(doc: Any, path: tuple[Any, ...], value: Any) -> None:
    for part in path[:-1]:
        doc = doc[part]
    doc[path[-1]] = value


@settings(FUZZ, max_examples=200)
@given(st.data())
def test_fio_reader_refuses_figures_out_of_range(data: st.DataObject) -> None:
    # a figure the parser reads set out of range: a FioError, or (a field of a direction that
    # did no I/O, which is never read) a result whose every figure is finite and not negative
    doc = copy.deepcopy(data.draw(st.sampled_from(FIO_DOCS)))
    jobs = [j for j in doc.get("jobs", doc.get("client_stats", [])) if isinstance(j, dict)]
    job = data.draw(st.sampled_from(jobs))
    value = data.draw(UNBOUNDED | NEGATIVE)
    directions = [d for d in ("read", "write", "trim") if isinstance(job.get(d), dict)]
    field = data.draw(st.sampled_from(FIO_FIELDS))
    target = job[data.draw(st.sampled_from(directions))] if directions else job
    if not directions or data.draw(st.integers(0, 9)) == 0:
        target, field = job, ("error",)
    for part in field[:-1]:
        target = target.setdefault(part, {}) if isinstance(target, dict) else {}
    target[field[-1]] = value
    try:
        result = parse_fio_output(json.dumps(doc), source="fuzz")
    except FioError:
        return
    for direction in result.directions.values():
        for name in ("io_bytes", "total_ios", "iops", "bw_mbps", "lat_mean_us", "lat_p50_us",
                     "lat_p99_us", "lat_p99_9_us", "lat_p99_99_us", "lat_max_us"):
            figure = getattr(direction, name)
            assert figure is None or (math.isfinite(figure) and figure >= 0), (name, figure)


YAML_LOADERS: list[tuple[str, Callable[[Path], object], list[str]]] = [
    ("thresholds", lambda p: ThresholdSet.load([p]), THRESHOLD_TEXTS),
    ("inventory", Inventory.load, INVENTORY_TEXTS),
    ("model", load_model, MODEL_TEXTS),
]


@settings(FUZZ, max_examples=150)
@given(st.data())
def test_yaml_loaders_refuse_numbers_out_of_range_naming_the_key(data: st.DataObject) -> None:
    _, loader, texts = data.draw(st.sampled_from(YAML_LOADERS))
    doc = yaml.safe_load(data.draw(st.sampled_from(texts)))
    path = data.draw(st.sampled_from(_numeric_paths(doc)))
    _set(doc, path, data.draw(UNBOUNDED))
    with tempfile.TemporaryDirectory() as folder:
        file = Path(folder) / "fuzz.yaml"
        file.write_text(yaml.safe_dump(doc, allow_unicode=True))
        with pytest.raises(ConfigError) as caught:
            loader(file)
    # a mapping's int key (qd_iops.read.1) is a key, not a list index
    shown = json_path(str(p) if isinstance(p, int) and _is_key(doc, path, i) else p
                      for i, p in enumerate(path))
    assert str(file) in str(caught.value) and shown in str(caught.value)


def _is_key(doc: Any, path: tuple[Any, ...], i: int) -> bool:
    """True when ``path[i]`` is a key of a mapping (not an index of a list)."""
    for part in path[:i]:
        doc = doc[part]
    return isinstance(doc, dict)


@settings(FUZZ, max_examples=60)
@given(st.data(), st.integers(65, 3000))
def test_yaml_loaders_refuse_deep_nesting_naming_the_line(data: st.DataObject, depth: int) -> None:
    _, loader, texts = data.draw(st.sampled_from(YAML_LOADERS))
    doc = yaml.safe_load(data.draw(st.sampled_from(texts)))
    path = data.draw(st.sampled_from(_numeric_paths(doc)))
    _set(doc, path, DEEP)
    text = yaml.safe_dump(doc, allow_unicode=True)
    line = text[: text.index(DEEP)].count("\n") + 1
    with tempfile.TemporaryDirectory() as folder:
        file = Path(folder) / "fuzz.yaml"
        file.write_text(text.replace(DEEP, "[" * depth + "]" * depth))
        with pytest.raises(ConfigError, match=rf"fuzz\.yaml:{line}: .*collections nested more "
                           r"than 64 levels deep"):
            loader(file)


@NEEDS_REAL_TOOL_OUTPUTS
@settings(FUZZ, max_examples=80)
@given(st.data(), st.integers(500, 5000))
def test_json_readers_on_deep_nesting(data: st.DataObject, depth: int) -> None:
    # fio: an output error (nested past json's stack anywhere in the document: about 1000
    # levels, hypothesis adds up to 2000 while a test runs); smartctl / nvme-cli: a document
    # or a note, never an exception
    deep = "[" * depth + "]" * depth
    if data.draw(st.booleans()):
        deep = "[" * (depth + 5000) + "]" * (depth + 5000)
        doc = copy.deepcopy(data.draw(st.sampled_from(FIO_DOCS)))
        _set(doc, data.draw(st.sampled_from(_numeric_paths(doc))), DEEP)
        with pytest.raises(FioError):
            parse_fio_output(json.dumps(doc).replace(f'"{DEEP}"', deep), source="fuzz")
        return
    doc = copy.deepcopy(data.draw(st.sampled_from(SMARTCTL_DOCS + NVME_DOCS)))
    _set(doc, data.draw(st.sampled_from(_numeric_paths(doc))), DEEP)
    notes: list[str] = []
    got = run_tool(lambda argv: (0, json.dumps(doc).replace(f'"{DEEP}"', deep)), ["smartctl"],
                   "smartctl", notes)
    if got is not None:
        _only((DeviceError,), lambda: identity_from_smartctl(got))
        _only((DeviceError,), lambda: health_from_smartctl(got))


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


# ------------------------------------------------- what the t3 trial found (parser-crashes/)

BIG = "1" + "0" * 400  # 10**400: float() of it raises OverflowError


def _fio(job_over: str = "", dir_over: str = "", pct: str = '"99.000000": 5000') -> str:
    """One fio 3.x job entry, as the trial's repro.py builds it."""
    return ('{"fio version": "fio-3.33", "jobs": [{"jobname": "j", "error": 0' + job_over
            + ', "read": {"io_bytes": 4096, "io_kbytes": 4, "bw_bytes": 4096, "bw": 4, '
            '"iops": 1.0, "runtime": 1000, "total_ios": 1' + dir_over + ', "clat_ns": '
            '{"mean": 5000.0, "max": 5000, "percentile": {' + pct + '}}}}]}')


def test_found_fio_percentile_of_401_digits_is_an_output_error() -> None:
    assert parse_fio_output(_fio()).directions["read"].lat_p99_us == 5.0  # the sound one reads
    with pytest.raises(FioError, match=r"fio output: jobs\[0\]\.read\.clat_ns\.percentile"
                       r"\['99\.000000'\] is out of range \(a 401-digit integer is beyond 2\^64\)"):
        parse_fio_output(_fio(pct=f'"99.000000": {BIG}'))


def test_found_fio_runtime_of_401_digits_is_an_output_error() -> None:
    text = _fio(dir_over=f', "runtime": {BIG}').replace('"runtime": 1000, ', "")
    with pytest.raises(FioError, match=r"jobs\[0\]\.read\.runtime is out of range "
                       r"\(a 401-digit integer is beyond 2\^64\)"):
        parse_fio_output(text)


def test_found_fio_job_error_beyond_a_c_int_is_named_not_an_overflow() -> None:
    text = _fio(job_over=', "error": 100000000000000000000').replace('"error": 0, ', "")
    with pytest.raises(FioError, match=r"jobs\[0\]\.error is out of range "
                       r"\(100000000000000000000 is beyond 2\^64\)"):
        parse_fio_output(text)
    # within 2**64 but beyond a C int: os.strerror overflowed; the job's failure is reported
    with pytest.raises(FioJobError, match=r"job 'j' failed with error 1099511627776 "
                       r"\(unknown error\)") as caught:
        parse_fio_output(_fio(job_over=', "error": 1099511627776').replace('"error": 0, ', ""))
    assert caught.value.errno == 2**40


@pytest.mark.parametrize(("value", "why"), [("NaN", "nan is not a finite number"),
                                            ("-5000", "-5000 is negative"),
                                            ("-Infinity", "-inf is not a finite number")])
def test_found_fio_p99_nan_or_negative_is_refused_not_read(value: str, why: str) -> None:
    # a p99 of -5 us passed every max limit; NaN matched none
    with pytest.raises(FioError, match=r"percentile\['99\.000000'\] is out of range \("
                       + why.replace("-", r"\-") + r"\)"):
        parse_fio_output(_fio(pct=f'"99.000000": {value}'))


def test_found_fio_json_nested_100000_deep_is_an_output_error() -> None:
    with pytest.raises(FioError, match=r"truncated or invalid JSON.*nested too deeply to read"):
        parse_fio_output('{"jobs": ' + "[" * 100000 + "]" * 100000 + "}")


def test_found_fio_json_integer_of_5000_digits_is_an_output_error() -> None:
    # json builds no int of more than 4300 digits: a bare ValueError escaped
    with pytest.raises(FioError, match=r"a number too long to read \(Exceeds the limit"):
        parse_fio_output(_fio(pct='"99.000000": ' + "9" * 5000))


def test_fio_sentinels_in_fields_not_read_still_parse() -> None:
    # fio writes 2**64-1 style values in fields the parser does not read: not refused
    text = _fio(job_over=', "latency_target": 18446744073709551615, "latency_window": '
                + BIG + ', "lat_ns_bogus": -1')
    assert parse_fio_output(text).directions["read"].lat_p99_us == 5.0


def _series(text: str, window_ms: float | None = 1000, **kw: Any) -> Any:
    return to_series([parse_log(text, source="bw.1.log")], "bw", "write", window_ms=window_ms,
                     sources=["bw.1.log"], **kw)


def test_found_bw_log_with_one_line_stamped_0_is_a_window_of_1_ms() -> None:
    # it made a window of no length: ZeroDivisionError in the SLC-cache analysis. Refusing it
    # was wrong too: real fio 3.33 stamps a job done within 1 ms at 0 ("0, 5208, 1, 0, 0" in
    # a 64 KiB write's lat log), and every methodology step reads its lat log (review)
    assert _series("0, 1216, 1, 0, 0").durations_s == (0.001,)
    assert _series("1, 1216, 1, 0, 0").durations_s == (0.001,)  # 1 ms is a (partial) window


def test_found_bw_log_value_of_401_digits_is_an_output_error() -> None:
    with pytest.raises(FioError, match=r"bw\.1\.log:2: the value is out of range \(a 401-digit "
                       r"integer is beyond 2\^64\)"):
        _series(f"1000, 5, 1, 0, 0\n2000, {BIG}, 1, 0, 0")


def test_found_bw_log_stamp_of_401_digits_is_an_output_error() -> None:
    with pytest.raises(FioError, match=r"bw\.1\.log:2: the time stamp is out of range \(a "
                       r"401-digit integer is beyond 2\^64\)"):
        _series(f"1000, 5, 1, 0, 0\n{BIG}, 5, 1, 0, 0", window_ms=None)


def test_found_bw_log_stamped_3_years_late_fails_fast_naming_the_line(tmp_path: Path) -> None:
    text = "1000, 100, 1, 0, 0\n100000000000, 100, 1, 0, 0"
    start = time.monotonic()
    with pytest.raises(FioError, match=r"bw\.1\.log:2: the stamp 100000000000 ms closes logging "
                       r"window 100000000 of 1000 ms, beyond the most a log may span "
                       r"\(1000000 windows\)"):
        _series(text)
    assert time.monotonic() - start < 2.0  # it looped over 10**8 windows: the test hung
    # with the job's runtime known (methodology steps pass it), the bound is the runtime
    (tmp_path / "log_bw.1.log").write_text("1000, 100, 1, 0, 0\n2000, 100, 1, 0, 0\n"
                                           "200000, 100, 1, 0, 0\n")
    with pytest.raises(FioError, match=r"log_bw\.1\.log:3: the stamp 200000 ms closes logging "
                       r"window 200 of 1000 ms, beyond the job's runtime with slack \(64 s\)"):
        read_series(tmp_path, "bw", window_ms=1000, max_span_ms=64_000)
    assert len(read_series(tmp_path, "bw", window_ms=1000, max_span_ms=200_000)) == 200


def test_found_bw_log_negative_value_is_refused_at_its_line() -> None:
    with pytest.raises(FioError, match=r"bw\.1\.log:1: the value is out of range \(-17452 is "
                       r"negative\)"):
        _series("1000, -17452, 1, 0, 0\n2000, 100, 1, 0, 0")


def test_found_bw_log_negative_stamps_are_refused_not_a_negative_cache_size() -> None:
    # slc_cache_bytes came out as -34453625992596
    with pytest.raises(FioError, match=r"bw\.1\.log:1: the time stamp is out of range "
                       r"\(-999999 is negative\)"):
        _series("-999999, 33646605, 1, 0, 0\n-422, 452220, 1, 0, 0\n9999999, 2730, 1, 0, 0")


def test_found_smartctl_output_nested_2000_deep_is_noted_as_no_json() -> None:
    # handled as any tool output without JSON: a note, identity falls back to sysfs
    text = '{"json_format_version": ' + "[" * 2000 + "]" * 2000 + "}"
    notes: list[str] = []
    assert run_tool(lambda argv: (0, text), ["smartctl", "-j"], "smartctl", notes) is None
    assert notes == ["smartctl (exit 0, no JSON output)"]
    long_number = '{"nvme_smart_health_information_log": {"data_units_written": ' + "9" * 5000
    assert run_tool(lambda argv: (0, long_number + "}}"), ["nvme"], "nvme", notes) is None


def test_found_tool_integer_beyond_128_bits_is_a_value_error() -> None:
    assert coerce_int(2**128, field="tnvmcap") == 2**128  # NVMe's 128-bit fields still read
    with pytest.raises(ValueError, match=r"data_units_written: expected an integer of at most "
                       r"128 bits, got a 401-digit integer is beyond 2\^128"):
        coerce_int(int(BIG), field="data_units_written")


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_found_threshold_version_of_401_digits_is_a_config_error(tmp_path: Path) -> None:
    path = _write(tmp_path, "t.yaml", f"version: {BIG}\nprofiles: []\n")
    with pytest.raises(ConfigError, match=r"t\.yaml:1: version: a 401-digit integer is beyond "
                       r"2\^64: not a value any setting can take \(fix: write a finite number"):
        ThresholdSet.load([path])


def test_an_unquoted_long_serial_is_told_to_be_quoted(tmp_path: Path) -> None:
    """Review: the range check now meets an unquoted 21-digit serial before the inventory's own
    "quote it" hint, so its fix says how to quote it, with the key and the value."""
    path = _write(tmp_path, "inv.yaml", "version: 1\ndrives:\n  - match: {serial: "
                  "123456789012345678901}\n    controller: X\n")
    with pytest.raises(ConfigError, match=r'inv\.yaml:3: drives\[0\]\.match\.serial: '
                       r'123456789012345678901 is beyond 2\^64.*quote it: serial: '
                       r'"123456789012345678901"'):
        Inventory.load(path)


def test_found_threshold_file_nested_1000_deep_is_a_config_error(tmp_path: Path) -> None:
    path = _write(tmp_path, "t.yaml", "version: 1\nprofiles: " + "[" * 1000 + "]" * 1000 + "\n")
    with pytest.raises(ConfigError, match=r"t\.yaml:2: profiles: collections nested more than "
                       r"64 levels deep \(fix: close the brackets"):
        ThresholdSet.load([path])


def test_found_threshold_capacity_range_of_nan_is_a_config_error(tmp_path: Path) -> None:
    # it loaded and the profile never matched any drive
    text = ("version: 1\nprofiles:\n  - name: p\n    source: s\n"
            "    match: {controller: X, capacity_gb: [.nan, 120]}\n"
            "    limits:\n      seq_read_128k_qd32: {bw_mbps: {min: 1}}\n")
    path = _write(tmp_path, "t.yaml", text)
    with pytest.raises(ConfigError, match=r"t\.yaml:5: profiles\[0\]\.match\.capacity_gb\[0\]: "
                       r"nan is not a finite number"):
        ThresholdSet.load([path])


def test_found_inventory_nested_1000_deep_is_a_config_error(tmp_path: Path) -> None:
    path = _write(tmp_path, "inv.yaml", "version: 1\ndrives: " + "[" * 1000 + "]" * 1000 + "\n")
    with pytest.raises(ConfigError, match=r"inv\.yaml:2: drives: collections nested more than "
                       r"64 levels deep"):
        Inventory.load(path)


MODEL = (REPO / "emulated" / "demo-dirty-recovery.yaml").read_text()


def test_found_model_write_iops_of_401_digits_is_a_config_error(tmp_path: Path) -> None:
    assert "write_iops: 40000" in MODEL
    path = _write(tmp_path, "m.yaml", MODEL.replace("write_iops: 40000", f"write_iops: {BIG}", 1))
    line = MODEL.splitlines().index(next(x for x in MODEL.splitlines() if "write_iops: 40000"
                                         in x)) + 1
    with pytest.raises(ConfigError, match=rf"m\.yaml:{line}: caps\.write_iops: a 401-digit "
                       r"integer is beyond 2\^64"):
        load_model(path)


def test_found_model_lift_pct_nan_is_a_config_error(tmp_path: Path) -> None:
    assert "lift_pct: 50" in MODEL
    path = _write(tmp_path, "m.yaml", MODEL.replace("lift_pct: 50", "lift_pct: .nan", 1))
    with pytest.raises(ConfigError, match=r"m\.yaml:\d+: recovery\[0\]\.lift_pct: nan is not a "
                       r"finite number"):
        load_model(path)


def test_found_model_size_beyond_2_64_bytes_is_a_config_error(tmp_path: Path) -> None:
    # a size string is not a YAML number: parse_size overflowed int(float('inf'))
    assert "size_bytes: " in MODEL or "after_write_bytes: " in MODEL
    text = MODEL.replace("after_write_bytes: ", 'after_write_bytes: "' + "9" * 400 + 'GiB" #', 1)
    path = _write(tmp_path, "m.yaml", text)
    with pytest.raises(ConfigError, match=r"m\.yaml:23: dirty\.after_write_bytes: size 9999999999"
                       r"9999999999\.\.\.: a 410-digit integer is beyond 2\^64 \(fix: give bytes"):
        load_model(path)
