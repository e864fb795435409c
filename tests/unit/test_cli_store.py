"""The ``ssdqual`` commands on the results store (issue 17 items 3 and 14): they find the store
pytest wrote, take ``--ssd-profile``, say "within noise", list runs, and chart the one model a
store holds without ``--model``."""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

import pytest
from _pytest.config.findpaths import determine_setup

from pytest_ssdqual.cli.main import main
from pytest_ssdqual.results.compare import compare_runs, render
from pytest_ssdqual.results.location import find_project, resolve_results_dir
from pytest_ssdqual.results.run_folder import StoredRun
from pytest_ssdqual.results.store import ResultsStore

from ..conftest import REPO, limits_yaml

FACTS = {"controller": "C", "nand": "N", "firmware": "A", "model": "Model X", "serial": "S1",
         "capacity_bytes": 10**9, "kind": "block"}
LIMITS = limits_yaml({"seq_write_128k_qd32": {"bw_mbps": {"min": 10}}}, match="{kind: block}")


def _run(store: ResultsStore, n: int, firmware: str = "A", bw: float = 1000.0, *,
         spread: float | None = None, status: str = "passed", model: str = "Model X",
         regression: dict[str, Any] | None = None, exitstatus: int = 0) -> StoredRun:
    run_id = f"20261201T00000{n}.000000Z-{n:06x}"
    store.write_workload(run_id, {
        "drive": "/dev/sdb", "workload": "seq_write_128k_qd32", "status": status,
        "test": "suite.py::test_write", "facts": {**FACTS, "firmware": firmware, "model": model},
        "metrics": {"write.bw_mbps": bw},
        "spread_pct": {} if spread is None else {"write.bw_mbps": spread},
        "regression": regression,
    })
    return StoredRun.load(store.finish_run(run_id, {
        "run_id": run_id, "started_utc": f"2026-12-01T00:00:0{n}Z", "profile": "smoke",
        "status": "complete", "exitstatus": exitstatus, "passed": exitstatus == 0,
        "tests": {"skipped": 0, "deselected": 0, "failed": int(status == "failed")}}))


# -- item 3: one rule for the results folder ---------------------------------------------------

LAYOUTS = {
    "pyproject table": {"pyproject.toml": "[tool.pytest.ini_options]\nssdqual_results_dir = "
                                          "\"lab-store\"\n"},
    "pytest.ini": {"pytest.ini": "[pytest]\nssdqual_results_dir = lab-store\n"},
    "tox.ini": {"tox.ini": "[tox]\n[pytest]\nssdqual_results_dir = lab-store\n"},
    "setup.cfg": {"setup.cfg": "[tool:pytest]\nssdqual_results_dir = lab-store\n"},
    "plain pyproject": {"pyproject.toml": "[project]\nname = 'x'\n"},
    "setup.py": {"setup.py": ""},
    "nothing": {},
    # a pyproject without a pytest table below a tox.ini with one: the tox.ini's folder
    "tox.ini above a plain pyproject": {"tox.ini": "[pytest]\nssdqual_results_dir = lab-store\n",
                                        "sub/pyproject.toml": "[project]\nname = 'x'\n"},
}


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_the_commands_find_pytests_rootdir_and_ini_value(layout: str, tmp_path: Path) -> None:
    project = tmp_path / "project"
    for name, text in LAYOUTS[layout].items():
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_text(text)
    start = project / "sub" / "deeper"
    start.mkdir(parents=True)
    rootdir, _, inicfg, _ = determine_setup(inifile=None, override_ini=None, args=[],
                                            rootdir_cmd_arg=None, invocation_dir=start)
    found = find_project(start)
    assert found.rootdir == rootdir
    ini = inicfg.get("ssdqual_results_dir")
    assert found.ini.get("ssdqual_results_dir") == (ini.value if ini else None)
    expected = rootdir / (ini.value if ini else "ssdqual-results")
    assert found.results_dir(None, start, environ={}) == expected


def test_the_env_var_then_the_option_win_as_in_pytest(tmp_path: Path) -> None:
    root = tmp_path
    assert resolve_results_dir(None, invocation_dir=root / "cwd", rootdir=root, ini="i",
                               environ={"SSDQUAL_RESULTS_DIR": "e"}) == root / "e"
    assert resolve_results_dir("o", invocation_dir=root / "cwd", rootdir=root, ini="i",
                               environ={"SSDQUAL_RESULTS_DIR": "e"}) == root / "cwd" / "o"
    assert resolve_results_dir(None, invocation_dir=root, rootdir=root / "r", ini="",
                               environ={}) == root / "r" / "ssdqual-results"


def test_rejudge_and_runs_from_a_subfolder_read_the_store_pytest_wrote(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """They read ``ssdqual-results`` of the current folder: from ``suites/`` another store."""
    monkeypatch.delenv("SSDQUAL_RESULTS_DIR", raising=False)
    project = tmp_path / "project"
    (project / "suites").mkdir(parents=True)
    (project / "pytest.ini").write_text("[pytest]\nssdqual_results_dir = store\n")
    run = _run(ResultsStore(project / "store"), 1)
    limits = tmp_path / "limits.yaml"
    limits.write_text(LIMITS)
    monkeypatch.chdir(project / "suites")
    assert main(["rejudge", run.run_id, "--thresholds", str(limits)]) == 0
    assert "run PASSES under the new thresholds" in capsys.readouterr().out
    assert main(["runs"]) == 0
    out = capsys.readouterr().out
    assert f"1 run(s) in {project / 'store'}" in out and run.run_id in out
    monkeypatch.setenv("SSDQUAL_RESULTS_DIR", str(tmp_path / "elsewhere"))
    assert main(["runs"]) == 0
    assert capsys.readouterr().out == f"no stored run in {tmp_path / 'elsewhere'}\n"


def test_commands_take_ssd_profile_and_still_the_deprecated_profile(
    capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["workloads", "--ssd-profile", "quick"]) == 0
    captured = capsys.readouterr()
    assert captured.out.startswith("profile quick:") and captured.err == ""
    assert main(["workloads", "--profile", "quick"]) == 0
    captured = capsys.readouterr()
    assert captured.out.startswith("profile quick:")
    assert "--profile is deprecated: write --ssd-profile" in captured.err
    with pytest.raises(SystemExit) as exc:
        main(["workloads", "--ssd-profile", "nope"])
    assert exc.value.code == 4


def test_results_holds_plain_functions_and_exit_codes_have_one_home() -> None:
    """results/compare.py, rejudge.py and trend.py carried argparse, print and exit codes."""
    for path in sorted((REPO / "pytest_ssdqual" / "results").glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        imported = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        calls = {n.func.id for n in ast.walk(tree)
                 if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
        assert "argparse" not in imported and "print" not in calls, path.name
    homes = [p.name for p in sorted((REPO / "pytest_ssdqual").rglob("*.py"))
             if "EXIT_USAGE = " in p.read_text() or "EXIT_OK = " in p.read_text()]
    assert homes == ["options.py"]


# -- item 14: within noise, runs, trend without --model ----------------------------------------

def test_compare_calls_a_change_inside_the_noise_band_within_noise(tmp_path: Path) -> None:
    store = ResultsStore(tmp_path / "results")
    a = _run(store, 1, "A", 1000.0)
    tiny = _run(store, 2, "B", 999.0)  # -0.1 %, no repetitions: the 1 % default band
    [row] = compare_runs(a, tiny)[0]
    assert (row.status, row.noise_pct, row.noise_from) == ("within noise", 1.0, "default")
    text = render(a, tiny, [row], [], "md")
    assert "| \u22120.1 % | - | \u00b11 % (default) | within noise |" in text
    assert "within noise: the change is inside the noise band" in text
    assert "called better or worse on the default noise band alone" not in text
    worse = compare_runs(a, _run(store, 3, "B", 980.0))[0]
    assert [d.status for d in worse] == ["worse"]
    # no measured spread: a newcomer's two back-to-back dry runs read as better and worse
    assert ("1 change(s) called better or worse on the default noise band alone: neither run "
            "measured its run-to-run spread") in render(a, tiny, worse, [], "md")
    # repeated runs: their measured spread is the band (the larger of the two)
    spread_a = _run(store, 4, "A", 1000.0, spread=1.5)
    spread_b = _run(store, 5, "B", 1030.0, spread=4.0)
    [row] = compare_runs(spread_a, spread_b)[0]
    assert (row.status, row.noise_pct, row.noise_from) == ("within noise", 4.0, "spread")
    better = compare_runs(spread_a, _run(store, 6, "B", 1050.0, spread=4.0))[0]
    assert [d.status for d in better] == ["better"]
    assert "default noise band alone" not in render(spread_a, spread_b, better, [], "md")
    # gated on another run, no spread: B's regression limit is the band; beyond it: regressed
    gated = {"baseline_run": "20261130T000000.000001Z-other0", "comparisons": [
        {"metric": "write.bw_mbps", "status": "within limit", "limit_pct": 5.0}]}
    [row] = compare_runs(a, _run(store, 7, "B", 970.0, regression=gated))[0]
    assert (row.status, row.noise_from) == ("within noise", "gate limit")
    [row] = compare_runs(a, _run(store, 8, "B", 940.0, regression=gated))[0]
    assert row.status == "regressed"


def test_runs_lists_the_stored_runs_newest_first(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = ResultsStore(tmp_path / "results")
    old = _run(store, 1, "SVN417w")
    new = _run(store, 2, "SVN418a", 400.0, status="failed", exitstatus=1)
    broken = store.root / "20261201T000003.000000Z-000003"  # killed: no run.json
    (broken / "dev_sdb" / "seq_write_128k_qd32").mkdir(parents=True)
    (broken / "dev_sdb" / "seq_write_128k_qd32" / "record.json").write_text("{}")
    assert main(["runs", "--results-dir", str(store.root)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"3 run(s) in {store.root}"
    assert lines[1].split() == ["run", "started", "(UTC)", "profile", "verdict", "tests",
                                "drives"]
    assert lines[2].startswith(f"{broken.name}  2026-12-01T00:00:03Z  -")
    assert "UNFINISHED" in lines[2] and "incomplete (no run.json" in lines[2]
    assert lines[3].split() == [new.run_id, "2026-12-01T00:00:02Z", "smoke", "FAIL", "0",
                                "passed,", "1", "failed", "Model", "X", "S/N", "S1", "fw",
                                "SVN418a"]
    assert lines[4].split()[:4] == [old.run_id, "2026-12-01T00:00:01Z", "smoke", "PASS"]
    assert main(["runs", "--results-dir", str(store.root), "--format", "json", "-n", "1"]) == 0
    [only] = json.loads(capsys.readouterr().out)["runs"]
    assert only["run_id"] == broken.name and only["verdict"] == "UNFINISHED"
    assert main(["runs", "--results-dir", str(tmp_path / "empty")]) == 0
    assert capsys.readouterr().out == f"no stored run in {tmp_path / 'empty'}\n"


def test_runs_calls_a_run_that_exited_1_with_nothing_failed_incomplete_as_the_terminal_did(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Writes refused (a wrong --confirm-destroy): the session ended 'ssdqual: INCOMPLETE (exit
    1)'; `ssdqual runs` said FAIL (newcomer trial). A failed test still makes it FAIL."""
    store = ResultsStore(tmp_path / "results")
    refused = _run(store, 1, "SVN417w", exitstatus=1)  # a read passed, the writes were skipped
    failed = _run(store, 2, "SVN417w", 400.0, status="failed", exitstatus=1)
    assert main(["runs", "--results-dir", str(store.root), "--format", "json"]) == 0
    verdicts = {r["run_id"]: r["verdict"] for r in json.loads(capsys.readouterr().out)["runs"]}
    assert verdicts == {refused.run_id: "INCOMPLETE", failed.run_id: "FAIL"}


def test_trend_without_a_selection_uses_the_one_model_and_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = ResultsStore(tmp_path / "results")
    _run(store, 1, "A", 500.0, model="Model [X]")  # a glob character in the name
    _run(store, 2, "B", 400.0, model="Model [X]")
    args = ["trend", "--workload", "seq_write_128k_qd32", "--metric", "bw_mbps",
            "--results-dir", str(store.root)]
    assert main(args) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == ("no --model given: using 'Model [X]', the only drive model with "
                      f"seq_write_128k_qd32 write.bw_mbps figures in {store.root}")
    assert [line.split(" | ")[0] for line in out if line.startswith("| ")][1:] == ["| A", "| B"]
    _run(store, 3, "A", 300.0, model="Model Y")
    assert main(args) == 4
    err = capsys.readouterr().err
    assert ("ssdqual trend needs a drive selection: 2 drive models have seq_write_128k_qd32 "
            "write.bw_mbps figures") in err
    assert "('Model Y', 'Model [X]')" in err
    assert main([*args, "--model", "Model Y", "--ssd-profile", "smoke"]) == 0
