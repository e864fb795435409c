"""The built wheel works outside the checkout: it carries the suites, the shipped thresholds and
the emulated models, and ``pytest --pyargs pytest_ssdqual.suites`` runs the same qualification
from a clean virtual environment in another folder.

The wheel is built with ``pip wheel`` (its build back-end, setuptools, from PyPI or pip's cache)
from a copy of the checkout, so the checkout gets no ``build/`` folder. The clean environment
holds the wheel only; its dependencies (pytest, PyYAML, matplotlib, ...) are this test run's own,
reached through a folder of links (nothing else of this environment, and no download).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import site
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from pytest_ssdqual.thresholds.loader import ThresholdSet

from ..conftest import REPO

#: Top-level entries of the checkout the wheel is not built from.
NOT_BUILT_FROM = {".git", ".venv", ".ci", "tests", "docs", "tools", "examples", "scripts", "site",
                  "build", "dist", "ssdqual-results", ".pytest_cache", ".mypy_cache",
                  ".ruff_cache"}


def _run(argv: list[str], cwd: Path, timeout: int = 300) -> subprocess.CompletedProcess[str]:
    """``argv`` in ``cwd`` without ``PYTHONPATH`` (nothing of the checkout is importable)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "SSDQUAL_RESULTS_DIR")}
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout, check=False)


def _build_wheel(tmp: Path) -> Path:
    src = tmp / "src"
    shutil.copytree(REPO, src, ignore=lambda folder, names: [
        n for n in names if n == "__pycache__" or n.endswith(".egg-info")
        or (Path(folder) == REPO and n in NOT_BUILT_FROM)])
    built = _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q",
                  "--disable-pip-version-check", "-w", str(tmp / "dist"), str(src)], cwd=tmp)
    assert built.returncode == 0, built.stdout + built.stderr
    (wheel,) = (tmp / "dist").glob("pytest_ssdqual-*.whl")
    return wheel


def _clean_venv(tmp: Path, wheel: Path) -> Path:
    """A new venv holding ``wheel`` (pip, no index), its dependencies linked from this run's
    site-packages minus the project's own files (an editable install's finder included)."""
    venv = tmp / "venv"
    subprocess.run([getattr(sys, "_base_executable", sys.executable), "-m", "venv",
                    "--without-pip", str(venv)], check=True, timeout=120)
    deps = tmp / "deps"
    deps.mkdir()
    for folder in map(Path, site.getsitepackages()):
        for entry in folder.iterdir():
            if not entry.name.startswith(("pytest_ssdqual", "__editable__", "__pycache__")) \
                    and entry.suffix != ".pth" and not (deps / entry.name).exists():
                (deps / entry.name).symlink_to(entry)
    python = venv / "bin" / "python"
    (purelib,) = (venv / "lib").glob("python*/site-packages")
    (purelib / "ssdqual-test-deps.pth").write_text(f"{deps}\n")
    installed = _run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q",
                      "--no-deps", "--no-index", "--disable-pip-version-check", str(wheel)],
                     cwd=tmp)
    assert installed.returncode == 0, installed.stdout + installed.stderr
    return venv


def _suite_ids(out: str) -> list[str]:
    """Collected test ids (``--collect-only -q``) as ``test_x.py::test[...]``, the scratch
    file's ``scratch-<pid>`` name made ``scratch-N``."""
    return sorted(re.sub(r"scratch-\d+", "scratch-N", line.rsplit("/", 1)[-1])
                  for line in out.splitlines() if "::" in line)


def test_the_wheel_runs_the_shipped_suites_outside_the_checkout(tmp_path: Path) -> None:
    wheel = _build_wheel(tmp_path)
    names = set(zipfile.ZipFile(wheel).namelist())
    for folder, inside in (("suites", "suites"), ("thresholds", "data/thresholds"),
                           ("emulated", "data/emulated")):
        shipped = {f"pytest_ssdqual/{inside}/{p.name}" for p in (REPO / folder).iterdir()
                   if p.suffix in (".py", ".yaml")}
        assert shipped and shipped <= names, sorted(shipped - names)
    assert not [n for n in names if n.startswith(("tests/", "suites/", "thresholds/"))]

    venv = _clean_venv(tmp_path, wheel)
    python = str(venv / "bin" / "python")
    run = tmp_path / "elsewhere"
    run.mkdir()
    where = _run([python, "-c", "import pytest_ssdqual; print(pytest_ssdqual.__file__)"], run)
    package = Path(where.stdout.strip()).parent
    assert package.is_relative_to(venv), where.stdout + where.stderr

    # the dry run: the same tests as the checkout's suites/, the plugin in play (its header)
    dry = _run([python, "-m", "pytest", "-p", "no:cacheprovider", "--pyargs",
                "pytest_ssdqual.suites", "--collect-only", "-q"], run)
    assert dry.returncode == 0, dry.stdout + dry.stderr
    here = _run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--collect-only",
                 "-q", "suites/"], REPO)
    assert len(_suite_ids(dry.stdout)) > 20
    assert _suite_ids(dry.stdout) == _suite_ids(here.stdout)
    shipped_profiles = len(ThresholdSet.load([REPO / "thresholds"]).profiles)
    header = _run([python, "-m", "pytest", "-p", "no:cacheprovider", "--pyargs",
                   "pytest_ssdqual.suites", "--collect-only"], run).stdout
    assert f"ssdqual: thresholds: {shipped_profiles} profiles;" in header, header

    # the commands find the shipped thresholds and models too
    checked = _run([str(venv / "bin" / "ssdqual"), "thresholds", "check"], run)
    assert checked.stdout.strip() == (f"ok: {shipped_profiles} profiles in "
                                      f"{package / 'data' / 'thresholds'}"), checked.stderr
    listed = _run([str(venv / "bin" / "ssdqual"), "emulated", "list"], run).stdout
    assert f"({package / 'data' / 'emulated' / 'jmf612-43nm-64g.yaml'})" in listed, listed

    # one real workload on a scratch file: judged against the shipped limits
    if shutil.which("fio") is None:
        pytest.skip("fio not installed (./test.sh installs it)")
    smoke = _run([python, "-m", "pytest", "-p", "no:cacheprovider", "--pyargs",
                  "pytest_ssdqual.suites.test_sequential::test_sequential_read",
                  "-k", "qd32", f"--drive=file:{run / 't.img'}", "--ssd-profile=smoke",
                  "--scratch-size=32M", f"--results-dir={run / 'results'}"], run)
    assert smoke.returncode == 0, smoke.stdout + smoke.stderr
    assert "1 passed" in smoke.stdout
    (record,) = (run / "results").glob("*/*/seq_read_128k_qd32/record.json")
    verdicts = json.loads(record.read_text())["verdicts"]
    files = {Path(v["file"]) for v in verdicts if v["file"]}  # (a metric with no limit: "")
    assert files == {package / "data" / "thresholds" / "virtual.yaml",
                     package / "data" / "thresholds" / "generic.yaml"}, files
    bw = next(v for v in verdicts if v["metric"] == "read.bw_mbps")
    assert bw["status"] == "pass" and bw["measured"] > bw["min"] > 0
