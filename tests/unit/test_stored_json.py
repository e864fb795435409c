"""Damaged stored files (``../shared/cases/found/t3/parser-crashes/``): a run's
``run.json`` or ``record.json``, an Allure result or attachment, a worker journal, a curves
document or a report history nested 100000 deep, holding a 401-digit figure, NaN where no
figure goes, invalid JSON or a top level that is not an object ends in the project's own error
naming the file (and the key, and the fix) -- never ``RecursionError``, ``OverflowError`` or a
bare ``ValueError`` -- and ``ssdqual rejudge`` / ``compare`` print one line and exit 4. Valid
files read as before, NaN figures (a repetition fio gave none of) included.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import pytest

from pytest_ssdqual.cli.main import main
from pytest_ssdqual.errors import ConfigError
from pytest_ssdqual.methodology.curves import CurveError, curves_from_json
from pytest_ssdqual.report import html as htmlreport
from pytest_ssdqual.report.allure_results import result_uuids
from pytest_ssdqual.results.journal import read_journal
from pytest_ssdqual.results.run_folder import RUN_FILE, StoredRun, StoreError
from pytest_ssdqual.results.store import ResultsStore
from pytest_ssdqual.results.stored import StoredTest, read_result

from ..conftest import limits_yaml

RUN_ID = "20261130T101500.000001Z-abcdef"
BIG = "1" + "0" * 400  # 10**400: float() of it raises OverflowError
DEEP = "[" * 100000 + "]" * 100000  # json.loads raises RecursionError
LIMITS = limits_yaml({"seq_write_128k_qd32": {"bw_mbps": {"min": 100}}}, name="all", match="{}",
                     source="test")


def _record(**metrics: float) -> dict[str, Any]:
    return {
        "drive": "/dev/sdb", "workload": "seq_write_128k_qd32", "status": "passed",
        "facts": {"controller": "C", "nand": "N", "firmware": "A", "model": "M", "serial": "S",
                  "capacity_bytes": 10**9, "kind": "block"},
        "metrics": {"write.bw_mbps": 500.0, "write.iops": 4000.0, **metrics}, "spread_pct": {},
    }


def _store(tmp_path: Path, record: dict[str, Any] | None = None) -> tuple[ResultsStore, Path]:
    store = ResultsStore(tmp_path / "results")
    store.write_workload(RUN_ID, record or _record())
    folder = store.finish_run(RUN_ID, {
        "run_id": RUN_ID, "started_utc": "x", "profile": "smoke", "status": "complete",
        "exitstatus": 0, "passed": True, "tests": {"skipped": 0, "deselected": 0, "failed": 0}})
    return store, folder


def _record_file(folder: Path) -> Path:
    [path] = folder.glob("*/*/record.json")
    return path


def _rejudge(store: ResultsStore, tmp_path: Path, capsys: pytest.CaptureFixture[str]
             ) -> tuple[int, str]:
    limits = tmp_path / "limits.yaml"
    limits.write_text(LIMITS)
    code = main(["rejudge", RUN_ID, "--thresholds", str(limits),
                 "--results-dir", str(store.root)])
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    return code, captured.err


def test_rejudge_of_a_run_json_nested_100000_deep_is_one_line_exit_4(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # the audit got a raw RecursionError traceback (exit 1)
    store, folder = _store(tmp_path)
    assert _rejudge(store, tmp_path, capsys)[0] == 0
    (folder / RUN_FILE).write_text('{"run_id": ' + DEEP + "}")
    code, err = _rejudge(store, tmp_path, capsys)
    assert code == 4
    assert err == (f"ssdqual: error: {RUN_ID}: {folder / RUN_FILE}: unreadable, the stored file "
                   "is damaged: not valid JSON: nested too deeply to read (about 1000 levels) "
                   f"(line 1, column 1) (fix: remove or restore the run folder {folder})\n")
    with pytest.raises(StoreError) as caught:
        StoredRun.load(folder)
    assert caught.value.file == str(folder / RUN_FILE)


def test_rejudge_of_a_record_with_a_401_digit_figure_names_the_file_and_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # it loaded, and float() of it raised OverflowError in the judging
    store, folder = _store(tmp_path)
    record = _record_file(folder)
    text = record.read_text()
    record.write_text(text.replace('"write.bw_mbps": 500.0', f'"write.bw_mbps": {BIG}'))
    code, err = _rejudge(store, tmp_path, capsys)
    assert code == 4
    assert err.count("\n") == 1
    assert (f'{record}: metrics["write.bw_mbps"]: unreadable, the stored file is damaged: a '
            "401-digit integer is beyond 2^128 (fix: remove or restore the run folder "
            f"{folder})") in err
    with pytest.raises(StoreError) as caught:
        StoredRun.load(folder)
    assert (caught.value.file, caught.value.key) == (str(record), 'metrics["write.bw_mbps"]')
    assert main(["compare", RUN_ID, RUN_ID, "--results-dir", str(store.root)]) == 4
    assert str(record) in capsys.readouterr().err


@pytest.mark.parametrize(("text", "reason"), [
    ("{not json", r"not valid JSON: Expecting property name enclosed in double quotes \(line 1, "
                  r"column 2\)"),
    ("[1, 2]", "not a JSON object but an array"),
    ("\xff\xfe", "not UTF-8 text"),
    ('{"workload": "w", "x": ' + "9" * 5000 + "}", "not valid JSON: a number too long to read"),
    ('{"workload": "w", "x": ' + "[" * 70 + "]" * 70 + "}", r"x\[0\]\[0\].*: unreadable, the "
     "stored file is damaged: nested more than 64 levels deep"),
    ('{"facts": {"capacity_bytes": NaN}}', r'facts\.capacity_bytes: unreadable, the stored file '
     "is damaged: nan is not a finite number"),
    ('{"verdicts": [{"min": -Infinity}]}', r"verdicts\[0\]\.min: .* -inf is not a finite number"),
], ids=["invalid", "array", "not utf-8", "5000 digits", "65 levels", "nan capacity", "inf limit"])
def test_a_damaged_record_is_a_store_error_naming_the_file(tmp_path: Path, text: str,
                                                           reason: str) -> None:
    store, folder = _store(tmp_path)
    record = _record_file(folder)
    record.write_bytes(text.encode("latin-1") if text.startswith("\xff") else text.encode())
    with pytest.raises(StoreError, match=rf"^{re.escape(str(record))}: .*{reason}.* \(fix: "
                       rf"remove or restore the run folder {re.escape(str(folder))}\)$"):
        StoredRun.load(folder)


def test_nan_in_run_json_is_damage(tmp_path: Path) -> None:
    store, folder = _store(tmp_path)
    info = (folder / RUN_FILE).read_text().replace('"exitstatus": 0', '"exitstatus": NaN')
    (folder / RUN_FILE).write_text(info)
    with pytest.raises(StoreError, match=r"run\.json: exitstatus: unreadable, the stored file is "
                       r"damaged: nan is not a finite number"):
        StoredRun.load(folder)


def test_valid_files_read_as_before_nan_figures_and_128_bit_counters_included(
    tmp_path: Path
) -> None:
    record = _record(**{"write.lat_p99_us": math.nan, "health.data_units_written": 2**100})
    record["spread_pct"] = {"write.bw_mbps": math.inf}
    store, folder = _store(tmp_path, record)
    run = StoredRun.load(folder)
    assert run.info == json.loads((folder / RUN_FILE).read_text())
    [stored] = run.records
    plain = json.loads(_record_file(folder).read_text())
    assert math.isnan(stored["metrics"].pop("write.lat_p99_us"))
    assert math.isnan(plain["metrics"].pop("write.lat_p99_us"))
    assert stored == plain and stored["spread_pct"] == {"write.bw_mbps": math.inf}
    assert stored["metrics"]["health.data_units_written"] == 2**100  # indexed as a REAL too
    assert store.query("SELECT value FROM metrics WHERE metric = 'health.data_units_written'"
                       )[0]["value"] == float(2**100)


def test_index_sync_and_rebuild_skip_a_damaged_run(tmp_path: Path) -> None:
    store, folder = _store(tmp_path)
    (folder / RUN_FILE).write_text('{"run_id": ' + DEEP + "}")
    assert store.rebuild_index() == 0  # RecursionError escaped the rebuild
    assert store.sync() == []


def test_allure_results_damaged_are_config_errors_naming_file_and_key(tmp_path: Path) -> None:
    good = {"uuid": "u", "name": "t", "start": 1, "stop": 2, "status": "passed"}
    cases = {
        "deep": json.dumps(good)[:-1] + ', "x": ' + DEEP + "}",
        "nan": json.dumps(good).replace('"start": 1', '"start": NaN'),  # int(nan): ValueError
        "big": json.dumps(good).replace('"stop": 2', f'"stop": {BIG}'),  # /1000: OverflowError
    }
    for name, text in cases.items():
        path = tmp_path / f"{name}-result.json"
        path.write_text(text)
        with pytest.raises(ConfigError, match=rf"^{re.escape(str(path))}: .*unreadable Allure"):
            read_result(path)
    assert "start: unreadable Allure result: nan is not a finite number" in _message(
        tmp_path / "nan-result.json")
    assert result_uuids(tmp_path) == set()  # skipped, not raised


def _message(path: Path) -> str:
    with pytest.raises(ConfigError) as caught:
        read_result(path)
    return str(caught.value)


def test_a_metrics_attachment_of_401_digits_is_a_config_error(tmp_path: Path) -> None:
    attachment = tmp_path / "m.json"
    attachment.write_text('{"write.iops": ' + BIG + "}")
    test = StoredTest("u", "t", "t", "h", "passed", "", 0, 0, {}, {}, {"metrics": attachment})
    with pytest.raises(ConfigError, match=r'm\.json: \["write\.iops"\]: attachment .metrics. '
                       r"of .t. is unreadable: a 401-digit integer is beyond 2\^128"):
        test.metrics  # noqa: B018  (float() of it raised OverflowError)
    attachment.write_text('{"write.iops": NaN}')
    assert math.isnan(StoredTest("u", "t", "t", "h", "passed", "", 0, 0, {}, {},
                                 {"metrics": attachment}).metrics["write.iops"])


def test_a_damaged_journal_reads_as_none(tmp_path: Path) -> None:
    (tmp_path / "gw0.json").write_text('{"test": ' + DEEP + "}")
    assert read_journal(tmp_path, "gw0") is None  # RecursionError escaped


def test_curves_nested_deep_or_of_401_digits_are_curve_errors() -> None:
    with pytest.raises(CurveError, match="c.json: not JSON .*nested too deeply"):
        curves_from_json('{"schema": 1, "curves": ' + DEEP + "}", source="c.json")
    point = ('{"schema": 1, "curves": [{"name": "n", "x_name": "qd", "x_unit": "", "y_name": '
             '"read.iops", "y_unit": "IOPS", "points": [[1, ' + BIG + "]]}]}")
    with pytest.raises(CurveError, match="c.json: curve 0 is malformed .*OverflowError"):
        curves_from_json(point, source="c.json")


def test_a_report_history_line_nested_deep_is_a_config_error(tmp_path: Path) -> None:
    history = tmp_path / "history.jsonl"
    history.write_text('{"a": 1}\n' + DEEP + "\n")
    with pytest.raises(ConfigError, match=r"history\.jsonl:2: --history: not an Allure history"):
        htmlreport._read_history(history)


@pytest.mark.parametrize(("mutate", "said"), [
    (lambda r: r["metrics"].update({"write.bw_mbps": "fast"}),
     "metrics[\"write.bw_mbps\"]: unreadable, the stored file has the wrong shape: expected "
     "number or null, found a string 'fast'"),
    (lambda r: r.pop("workload"), "'workload' is missing"),
    (lambda r: r.update(metrics=[1, 2]), "metrics: unreadable, the stored file has the wrong "
                                         "shape: expected object or null, found a list"),
    (lambda r: r.update(facts="x"), "facts: unreadable"),
    (lambda r: r.update(workload=7), "workload: unreadable"),
    (lambda r: r.update(spread_pct="x"), "spread_pct: unreadable"),
    (lambda r: r["facts"].update(capacity_bytes="big"), "facts.capacity_bytes: unreadable"),
], ids=["string figure", "no workload", "metrics a list", "facts a string", "workload a number",
        "spread a string", "capacity a string"])
def test_a_record_of_the_wrong_shape_is_one_line_exit_4_in_rejudge_and_compare(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], mutate: Any, said: str
) -> None:
    # each of these raised ValueError, TypeError, KeyError or AttributeError in rejudge or
    # compare (a traceback) before stored_shape checked the readers' keys
    store, folder = _store(tmp_path)
    path = _record_file(folder)
    record = json.loads(path.read_text())
    mutate(record)
    path.write_text(json.dumps(record))
    code, err = _rejudge(store, tmp_path, capsys)
    assert code == 4 and said in err and str(path) in err and "fix: remove or restore" in err
    assert main(["compare", RUN_ID, RUN_ID, "--results-dir", str(store.root)]) == 4
    captured = capsys.readouterr()
    assert said in captured.err and "Traceback" not in captured.err
    assert main(["runs", "--results-dir", str(store.root)]) == 0
    assert "DAMAGED" in capsys.readouterr().out


def test_a_run_json_of_the_wrong_shape_is_refused_naming_the_key(tmp_path: Path) -> None:
    store, folder = _store(tmp_path)
    info = json.loads((folder / RUN_FILE).read_text())
    info["tests"] = {"failed": "none"}
    (folder / RUN_FILE).write_text(json.dumps(info))
    with pytest.raises(StoreError, match=r"tests\.failed: unreadable, the stored file has the "
                                         r"wrong shape: expected integer, found a string"):
        StoredRun.load(folder)


def test_a_damaged_run_left_out_of_the_index_is_named_where_a_baseline_or_trend_finds_none(
    tmp_path: Path
) -> None:
    # the only run of firmware A is damaged before it was indexed (copied in from elsewhere):
    # "no passing run of firmware 'A'" used to say nothing of it
    from pytest_ssdqual.results.gate_options import resolve_baseline
    from pytest_ssdqual.results.trend import trend_points

    store, folder = _store(tmp_path)
    store.index_path.unlink()
    path = _record_file(folder)
    path.write_text(path.read_text().replace('"workload"', '"workload_was"'))
    with pytest.raises(ConfigError) as error:
        resolve_baseline(ResultsStore(store.root), "firmware:A", "smoke")
    assert f"1 damaged run(s) left out (ssdqual runs lists them): {RUN_ID}" in str(error.value)
    fresh = ResultsStore(store.root)
    with pytest.raises(ConfigError, match="1 damaged run.s. left out"):
        trend_points(fresh, workload="seq_write_128k_qd32", metric="write.bw_mbps", model="M")
    assert fresh.damaged[RUN_ID].endswith(f"(fix: remove or restore the run folder {folder})")


def test_the_parent_suite_of_a_drive_stays_the_same_after_a_firmware_update() -> None:
    from pytest_ssdqual.report.allure_labels import parent_suite
    from pytest_ssdqual.results.stored import drive_title

    before = {"model": "Samsung 980", "serial": "S64D", "identity": "S64D", "firmware": "A1"}
    after = {**before, "firmware": "B2"}
    assert parent_suite(before) == parent_suite(after) == "Samsung 980 (S/N S64D)"
    assert drive_title(after) == "Samsung 980 (fw B2, S/N S64D)"  # the summary page's
    twin = {"model": "Twin", "serial": "X", "identity": "X (file:/a.img)", "firmware": "F"}
    assert parent_suite(twin) == "Twin (S/N X (file:/a.img))"
    bare = {"model": "Disk", "serial": "unknown", "identity": "/dev/sdb"}
    assert parent_suite(bare) == "Disk (S/N unknown, /dev/sdb)"
