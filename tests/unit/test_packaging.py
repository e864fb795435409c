"""What the wheel is built from (pyproject.toml's ``[tool.setuptools]``) and where the shipped
files are found (``pytest_ssdqual.shipped``); the wheel itself is built and run in
``tests/plugin/test_wheel.py``."""

from __future__ import annotations

import tomllib
from pathlib import Path

from pytest_ssdqual.shipped import names_shipped_suites, shipped_folder

from ..conftest import REPO

SETUPTOOLS = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]


def test_the_wheel_lists_every_package_folder_and_the_shipped_folders() -> None:
    """The package list is explicit (mapped folders cannot be found by ``packages.find``): a
    new subpackage missing from it would be missing from the wheel."""
    folders = {".".join(p.parent.relative_to(REPO).parts)
               for p in (REPO / "pytest_ssdqual").rglob("__init__.py")}
    mapped = SETUPTOOLS["package-dir"]
    assert mapped == {"pytest_ssdqual.suites": "suites",
                      "pytest_ssdqual.data.thresholds": "thresholds",
                      "pytest_ssdqual.data.emulated": "emulated"}
    assert set(SETUPTOOLS["packages"]) == folders | set(mapped)
    assert len(SETUPTOOLS["packages"]) == len(set(SETUPTOOLS["packages"]))


def test_in_a_checkout_the_shipped_folders_are_the_top_level_ones() -> None:
    for name in ("suites", "thresholds", "emulated"):
        assert shipped_folder(name) == REPO / name  # type: ignore[arg-type]
        assert any(shipped_folder(name).iterdir())  # type: ignore[arg-type]


def test_a_run_names_the_shipped_suites_by_module_or_by_path(tmp_path: Path) -> None:
    def named(*args: str, pyargs: bool = False, cwd: Path = REPO) -> bool:
        return names_shipped_suites(list(args), pyargs=pyargs, invocation_dir=cwd)

    assert named("pytest_ssdqual.suites", pyargs=True)
    assert named("pytest_ssdqual.suites.test_sequential::test_sequential_read", pyargs=True)
    assert not named("pytest_ssdqual.suites", pyargs=False)  # without --pyargs: a path
    assert not named("pytest_ssdqual.suitesx", pyargs=True)
    assert named("suites/") and named("suites/test_random.py::test_random_read")
    assert named(str(REPO / "suites"), cwd=tmp_path)
    assert not named("tests/unit") and not named(".")
    assert not named("suites", cwd=tmp_path)  # another project's own suites/ folder
