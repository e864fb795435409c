"""The drive state of every figure, end to end with the fake fio: in the
terminal verdict table, the Allure verdicts (HTML and JSON), the per-drive summary and the
stored ``record.json``; a read limit passed on media as found (writes refused, so no prefill:
maybe never-written blocks) is ``PASS (as found)`` and the drive INCOMPLETE, never a plain PASS.
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path
from typing import Any

import pytest

from pytest_ssdqual.cli import rejudge as rejudge_command
from pytest_ssdqual.methodology.figure_state import (
    AS_FOUND_NOTE,
    STATE_AS_FOUND,
    STATE_WRITES_AS_FOUND,
)
from pytest_ssdqual.results.store import ResultsStore

from ..conftest import (
    READ_WRITE_SUITE,
    FakeFio,
    flat_verdicts,
    limits_yaml,
    qual_args,
    unwrapped,
    write_suite,
)

THRESHOLDS = limits_yaml({"seq_read_128k_qd32": {"bw_mbps": {"min": 100}},
                             "seq_write_128k_qd32": {"bw_mbps": {"min": 100}}})


def _run(pytester: pytest.Pytester, fake_fio: FakeFio, target: Path, name: str
         ) -> tuple[pytest.RunResult, Path, Path]:
    th = write_suite(pytester.path, READ_WRITE_SUITE, THRESHOLDS)
    alluredir, store = pytester.path / f"allure-{name}", pytester.path / f"store-{name}"
    result = pytester.runpytest(*qual_args(
        target.parent, th, fake_fio.path, "--scratch-size=16M", f"--alluredir={alluredir}",
        f"--results-dir={store}", "--allow-skipped-writes", drives=(target.name,)))
    return result, alluredir, store


def _read_result(alluredir: Path, workload: str) -> tuple[dict[str, Any], Path]:
    for path in alluredir.glob("*-result.json"):
        result = json.loads(path.read_text())
        if any(lab["value"] == workload for lab in result["labels"] if lab["name"] == "story"):
            return result, alluredir
    raise AssertionError(f"no result for {workload}")


def _attachment(alluredir: Path, result: dict[str, Any], name: str) -> str:
    (source,) = [a["source"] for a in result["attachments"] if a["name"] == name]
    return (alluredir / source).read_text()


def _record(store: Path, workload: str) -> dict[str, Any]:
    (path,) = [p for p in store.rglob("record.json") if json.loads(p.read_text())["workload"]
               == workload]
    return json.loads(path.read_text())


def _rejudge(store: Path, thresholds: Path, capsys: pytest.CaptureFixture[str]
             ) -> tuple[int, str]:
    [run] = ResultsStore(store).complete_runs()
    capsys.readouterr()
    code = rejudge_command.run_command(argparse.Namespace(
        run=run.name, results_dir=str(store), thresholds=[str(thresholds)]))
    return code, capsys.readouterr().out


def _count_line(out: str) -> str:
    [line] = re.findall(r"^\d+ limits passed.*\(not judged\)", out, re.M)
    return line


def test_reads_as_found_say_so_everywhere_and_never_qualify(
    pytester: pytest.Pytester, fake_fio: FakeFio
) -> None:
    target = pytester.path / "existing.img"
    target.write_bytes(b"\0" * (16 << 20))  # not created by the plugin, not confirmed
    result, alluredir, store = _run(pytester, fake_fio, target, "as-found")
    result.assert_outcomes(passed=1, skipped=1)  # the write is refused
    out = flat_verdicts(result.stdout.str())
    # terminal: the figure's state and a qualified verdict (before: "read.bw_mbps ... PASS")
    line = next(ln for ln in out.splitlines() if "read.bw_mbps @ " in ln)
    assert f"read.bw_mbps @ {STATE_AS_FOUND}" in line and line.endswith("PASS (as found)")
    assert "1 limits passed (1 only as found: not prefilled), 0 failed" in out
    assert "PASS (as found): read on the drive as found" in out
    # Allure: the verdict records carry the state, the HTML table says PASS (as found)
    read, _ = _read_result(alluredir, "seq_read_128k_qd32")
    records = json.loads(_attachment(alluredir, read, "verdicts (JSON)"))
    bw = next(r for r in records if r["metric"] == "read.bw_mbps")
    assert (bw["status"], bw["state"]) == ("pass", STATE_AS_FOUND)
    assert "PASS (as found)" in _attachment(alluredir, read, "verdicts")
    # per-drive summary: never a plain PASS
    (md,) = (alluredir / "summary").glob("*.md")
    page = md.read_text()
    assert "**Overall: INCOMPLETE**" in page
    assert f"| seq_read_128k_qd32 | read.bw_mbps | {STATE_AS_FOUND} | 500 | >= 100 |" in page
    assert "| PASS (as found) |" in page
    # stored record
    assert _record(store, "seq_read_128k_qd32")["states"]["read.bw_mbps"] == STATE_AS_FOUND


def test_a_rejudged_read_as_found_is_still_as_found_and_incomplete(
    pytester: pytest.Pytester, fake_fio: FakeFio, capsys: pytest.CaptureFixture[str]
) -> None:
    """A former bug: ``ssdqual rejudge`` judged the stored figures without their drive
    states, so a run whose only read passed on media as found (summary INCOMPLETE) was re-judged
    ``run PASSES under the new thresholds``, exit 0."""
    target = pytester.path / "existing.img"
    target.write_bytes(b"\0" * (16 << 20))
    result, _, store = _run(pytester, fake_fio, target, "as-found")
    result.assert_outcomes(passed=1, skipped=1)
    run_counts = _count_line(flat_verdicts(result.stdout.str()))
    assert "(1 only as found: not prefilled)" in run_counts
    code, out = _rejudge(store, pytester.path / "limits.yaml", capsys)
    assert code == 1, out
    lines = out.splitlines()
    assert AS_FOUND_NOTE in unwrapped(out).splitlines()  # wrapped at 120 columns
    assert f"INCOMPLETE: file:{target}: 1 limit(s) passed only on media as found (its summary " \
           "would say INCOMPLETE)" in lines
    assert lines[-1] == (f"{run_counts}; 0 regression(s); run is INCOMPLETE: it cannot pass a "
                         "re-judgement (see INCOMPLETE above)")


def test_prefilled_reads_and_writes_as_found_carry_their_state(
    pytester: pytest.Pytester, fake_fio: FakeFio, capsys: pytest.CaptureFixture[str]
) -> None:
    result, alluredir, store = _run(pytester, fake_fio, pytester.path / "new.img", "prefilled")
    result.assert_outcomes(passed=2)
    out = flat_verdicts(result.stdout.str())
    prefilled = f"read after a prefill of {16 << 20} bytes"
    assert f"read.bw_mbps @ {prefilled}" in out
    assert f"write.bw_mbps @ {STATE_WRITES_AS_FOUND}" in out
    assert "PASS (as found)" not in out
    read, _ = _read_result(alluredir, "seq_read_128k_qd32")
    records = json.loads(_attachment(alluredir, read, "verdicts (JSON)"))
    assert {r["state"] for r in records} == {prefilled}
    (md,) = (alluredir / "summary").glob("*.md")
    page = md.read_text()
    assert "**Overall: PASS**" in page
    assert f"| seq_write_128k_qd32 | write.bw_mbps | {STATE_WRITES_AS_FOUND} | 500 |" in page
    assert _record(store, "seq_read_128k_qd32")["states"]["read.bw_mbps"] == prefilled
    assert _record(store, "seq_write_128k_qd32")["states"]["write.bw_mbps"] == (
        STATE_WRITES_AS_FOUND)
    code, out = _rejudge(store, pytester.path / "limits.yaml", capsys)
    assert code == 0 and AS_FOUND_NOTE not in out, out
    assert out.splitlines()[-1] == (f"{_count_line(result.stdout.str())}; 0 regression(s); run "
                                    "PASSES under the new thresholds")
