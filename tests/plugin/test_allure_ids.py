"""``report.allure_ids`` gives the name, full name, test case id and history id allure-pytest
gives the same test: checked against the ``*-result.json`` of a real allure-pytest run
(``--alluredir``) of parametrized tests (strings, numbers, tuples, None, ids), tests in a class
and in a nested class, a test with parameters of its own (``allure.dynamic.parameter``, one
excluded), in a sub-folder and under pytest-xdist's loadgroup (``@group`` node ids). And the
installed allure-pytest is in the range ``pyproject.toml`` declares and docs/development.md
records as tested.
"""

from __future__ import annotations

import hashlib
import json
import re
import tomllib
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet

from pytest_ssdqual.report.allure_ids import AllureParam, allure_ids, represent

from ..conftest import REPO

CASES = """
import allure
import pytest


def test_plain():
    pass


@pytest.mark.parametrize("workload_id, qd", [("seq_read_128k_qd32", 32), ("rand", 1)])
def test_param(workload_id, qd):
    allure.dynamic.parameter("drive identity", "SN-1 (file:/tmp/a.img)")
    allure.dynamic.parameter("ssd_drive", "/dev/loop0", excluded=True)


@pytest.mark.parametrize("n", [1, (2, "x"), None, 2.5], ids=["one", "tuple", "none", "float"])
def test_ids(n):
    pass


class TestInClass:
    def test_method(self):
        pass

    @pytest.mark.parametrize("speed", ["1.0", 0.8])
    def test_method_param(self, speed):
        pass

    class TestInner:
        @pytest.mark.parametrize("x", ["a"])
        def test_inner(self, x):
            pass
"""

#: The parameters each test sets itself (as ``allure.dynamic.parameter`` gets them).
DYNAMIC = {"test_param": [AllureParam("drive identity", represent("SN-1 (file:/tmp/a.img)")),
                          AllureParam("ssd_drive", represent("/dev/loop0"), excluded=True)]}


def _results(alluredir: Path) -> dict[str, dict[str, Any]]:
    """The results by the full name and name (pytest's ``item.name``)."""
    out = {}
    for path in alluredir.glob("*-result.json"):
        result = json.loads(path.read_text())
        out[f"{result['fullName']} {result['name']}"] = result
    return out


@pytest.mark.parametrize("xdist", [False, True], ids=["plain", "loadgroup"])
def test_the_ids_are_the_ones_allure_pytest_gives(pytester: pytest.Pytester,
                                                  xdist: bool) -> None:
    sub = pytester.mkpydir("sub")
    (sub / "test_cases.py").write_text(CASES)
    if xdist:  # node ids get pytest-xdist's ``@group`` suffix
        (pytester.path / "conftest.py").write_text(
            "import pytest\n\ndef pytest_collection_modifyitems(items):\n"
            "    for item in items:\n"
            "        item.add_marker(pytest.mark.xdist_group('g1'))\n")
    items, _ = pytester.inline_genitems("sub/test_cases.py")
    alluredir = pytester.path / "allure"
    args = ["-p", "no:cacheprovider", f"--alluredir={alluredir}", "sub/test_cases.py"]
    if xdist:
        args += ["-n", "1", "--dist=loadgroup"]
    result = pytester.runpytest_subprocess(*args) if xdist else pytester.runpytest(*args)
    result.assert_outcomes(passed=len(items))
    written = _results(alluredir)
    assert len(items) == len(written) == 11
    for item in items:
        callspec = getattr(item, "callspec", None)
        nodeid = item.nodeid + ("@g1" if xdist else "")
        ids = allure_ids(nodeid, callspec.params if callspec else {},
                         DYNAMIC.get(item.originalname, []))
        own = written[f"{ids.full_name} {ids.name}"]
        assert (ids.name, ids.full_name, ids.test_case_id, ids.history_id) == (
            own["name"], own["fullName"], own["testCaseId"], own["historyId"]), item.nodeid
        # (in another order: this test sets its own parameters after its set-up)
        assert sorted((p.name, p.value, p.excluded or None) for p in ids.parameters) == sorted(
            (p["name"], p["value"], p.get("excluded")) for p in own.get("parameters", []))
        labels = {(lab["name"], lab["value"]) for lab in own["labels"]}
        assert ("suite", ids.module) in labels and ("parentSuite", ids.parent_package) in labels
        if ids.class_names:
            assert ("subSuite", " > ".join(ids.class_names)) in labels
    # the ids told apart what Allure tells apart: every test its own history
    assert len({r["historyId"] for r in written.values()}) == 11
    inner = written["sub.test_cases.TestInClass.TestInner#test_inner test_inner[a]"]
    assert inner["historyId"] == allure_ids(
        "sub/test_cases.py::TestInClass::TestInner::test_inner[a]", {"x": "a"}).history_id


def test_ids_of_a_node_id_alone() -> None:
    ids = allure_ids("suites/io/test_seq.py::TestRead::test_read[loop0-emu-m@0.8]@loop0")
    assert ids.full_name == "suites.io.test_seq.TestRead#test_read"
    assert ids.name == "test_read[loop0-emu-m@0.8]"  # an @ inside the parameters stays
    assert (ids.parent_package, ids.module, ids.class_names) == ("suites.io", "test_seq",
                                                                ("TestRead",))
    # md5 of the full name alone: the history id of a test without parameters
    assert ids.history_id == ids.test_case_id == hashlib.md5(
        b"suites.io.test_seq.TestRead#test_read").hexdigest()
    with_params = allure_ids("t.py::test_x[a-1]", {"b": 1, "a": "é"},
                             [AllureParam("z", "'d'"), AllureParam("c", "'no'", excluded=True)])
    # non-excluded parameters by name: a (original value), b (repr), z (as shown)
    assert with_params.history_id == hashlib.md5("t#test_xé1'd'".encode()).hexdigest()
    top = allure_ids("test_top.py::test_x")
    assert (top.full_name, top.parent_package, top.module) == ("test_top#test_x", "", "test_top")
    assert represent("a") == "'a'" and represent(b"x") == "<class 'bytes'>"
    assert represent(None) == "None" and represent((1, "a")) == "(1, 'a')"


def _declared() -> Requirement:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    (req,) = [Requirement(d) for d in project["dependencies"]
              if Requirement(d).name == "allure-pytest"]
    return req


def test_installed_allure_pytest_is_in_the_tested_range() -> None:
    """The range in pyproject.toml is the one docs/development.md records as tested (its
    lowest and highest versions), and the installed allure-pytest is inside it."""
    req = _declared()
    installed = version("allure-pytest")
    assert req.specifier.contains(installed), (
        f"allure-pytest {installed} is outside the tested range {req.specifier} "
        "(pyproject.toml, docs/development.md): test it and widen the range, or install "
        "one inside it")
    docs = (REPO / "docs" / "development.md").read_text()
    match = re.search(r"allure-pytest `([^`]+)`, tested with ([\d.]+) and ([\d.]+)", docs)
    assert match, "docs/development.md names the tested allure-pytest range"
    assert SpecifierSet(match.group(1)) == req.specifier
    assert req.specifier.contains(match.group(2)) and req.specifier.contains(match.group(3))


DRIVE_CASES = """
import allure
import pytest


@pytest.fixture(autouse=True)
def drive():  # as the plugin's drive fixture does, during set-up
    allure.dynamic.parameter("drive identity", "SN-7")
    allure.dynamic.parameter("ssd_drive", "/dev/loop0", excluded=True)


def test_read():
    pass


class TestWrite:
    def test_write(self):
        pass
"""


def test_a_crash_result_without_a_snapshot_keeps_the_tests_ids(pytester: pytest.Pytester) -> None:
    """A worker that died before its journal had the test's Allure snapshot: the controller's
    result (allure_commons' model objects and file logger) still carries the name, full name,
    history id and suites allure-pytest gives the test on that drive."""
    from pytest_ssdqual.report.allure_results import write_crashed_result

    pytester.makepyfile(test_drive=DRIVE_CASES)
    alluredir = pytester.path / "allure"
    pytester.runpytest("-p", "no:cacheprovider", f"--alluredir={alluredir}").assert_outcomes(
        passed=2)
    own = {r["name"]: r for r in _results(alluredir).values()}
    crashdir = pytester.path / "crash"
    facts = {"identity": "SN-7", "drive": "/dev/loop0", "model": "Disk", "firmware": "F1",
             "serial": "SN-7"}
    for nodeid in ("test_drive.py::test_read@loop0", "test_drive.py::TestWrite::test_write"):
        write_crashed_result(crashdir, nodeid, "worker 'gw0' crashed while running it",
                             drive_facts=facts)
    crashed = {r["name"]: r for r in _results(crashdir).values()}
    assert set(crashed) == set(own) == {"test_read", "test_write"}
    for name, result in crashed.items():
        assert result["status"] == "broken"
        assert result["statusDetails"]["message"] == "worker 'gw0' crashed while running it"
        for key in ("fullName", "testCaseId", "historyId"):
            assert result[key] == own[name][key], (name, key)
        assert sorted(map(str, result["parameters"])) == sorted(
            map(str, own[name]["parameters"]))
        for label in ("suite", "subSuite", "framework"):
            assert [x for x in result["labels"] if x["name"] == label] == [
                x for x in own[name]["labels"] if x["name"] == label], (name, label)
        (drive,) = [a for a in result["attachments"] if a["name"] == "drive"]
        assert json.loads((crashdir / drive["source"]).read_text())["identity"] == "SN-7"
