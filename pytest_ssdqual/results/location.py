"""Where the results store is: one rule for the pytest run and for the ``ssdqual`` commands.

``--results-dir DIR`` given: DIR, relative to the folder the command was started in. Otherwise
``$SSDQUAL_RESULTS_DIR``, else the ini value ``ssdqual_results_dir``, else ``ssdqual-results``,
each relative to the rootdir. pytest hands the plugin its rootdir and ini value; a command
finds them as pytest finds them for a run started in the same folder without path arguments
(``find_project``): the nearest folder, from the current one up, holding ``pytest.toml``,
``.pytest.toml``, ``pytest.ini``, ``.pytest.ini``, a ``pyproject.toml`` with a
``[tool.pytest]`` / ``[tool.pytest.ini_options]`` table, a ``tox.ini`` with ``[pytest]`` or a
``setup.cfg`` with ``[tool:pytest]`` (in that order within a folder); else the nearest folder
with any ``pyproject.toml``; else the nearest with ``setup.py``; else the current folder. So
``ssdqual rejudge`` started anywhere inside the project reads the store ``pytest`` wrote (a run
given ``--rootdir``, ``-c`` or paths outside the project is the exception: give the command
``--results-dir``).
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import iniconfig

from pytest_ssdqual.errors import ConfigError

__all__ = ["DEFAULT_RESULTS_DIR", "RESULTS_DB_ENV", "RESULTS_DB_HELP", "RESULTS_DB_INI",
           "RESULTS_DIR_ENV", "RESULTS_DIR_HELP", "RESULTS_DIR_INI",
           "Project", "add_results_dir_option", "find_project", "resolve_results_dir"]

RESULTS_DIR_ENV = "SSDQUAL_RESULTS_DIR"
RESULTS_DIR_INI = "ssdqual_results_dir"
DEFAULT_RESULTS_DIR = "ssdqual-results"
RESULTS_DIR_HELP = (
    "results store: one folder per run (run.json, fio jobs, outputs, logs, verdicts) and an "
    f"SQLite index. Default: ${RESULTS_DIR_ENV}, else ini {RESULTS_DIR_INI}, else "
    f"{DEFAULT_RESULTS_DIR}/ in the rootdir."
)
RESULTS_DB_ENV = "SSDQUAL_RESULTS_DB"
RESULTS_DB_INI = "ssdqual_results_db"
RESULTS_DB_HELP = (
    "shared results store: a PostgreSQL database (postgresql://user@host:port/db or a libpq "
    "'host=... dbname=...' string) holding every host's run records and index, so "
    "--baseline=firmware:NAME and ssdqual trend see the runs of every host; fio outputs and "
    f"logs stay in --results-dir. Default: ${RESULTS_DB_ENV}, else ini {RESULTS_DB_INI}, else "
    "none (folder + SQLite). Needs pip install 'pytest-ssdqual[lab]'. See docs/regression-gate.md."
)


def add_results_dir_option(addoption: Callable[..., Any],
                           addini: Callable[..., Any] | None = None) -> None:
    """Declare ``--results-dir`` and ``--results-db`` (``db_location``) with ``addoption``:
    pytest's ``group.addoption`` (the plugin) or argparse's ``add_argument`` (every
    ``ssdqual`` command reading the store); with ``addini`` (pytest's ``parser.addini``) their
    ini values too."""
    addoption("--results-dir", default=None, metavar="DIR", help=RESULTS_DIR_HELP)
    addoption("--results-db", default=None, metavar="URL", help=RESULTS_DB_HELP)
    if addini is not None:
        addini(RESULTS_DIR_INI, "default --results-dir", default="")
        addini(RESULTS_DB_INI, "default --results-db", default="")


def resolve_results_dir(option: str | None, *, invocation_dir: Path, rootdir: Path, ini: str,
                        environ: Mapping[str, str] | None = None) -> Path:
    """The results store: ``option`` (relative to ``invocation_dir``), else
    ``$SSDQUAL_RESULTS_DIR``, else ``ini``, else ``ssdqual-results`` (relative to
    ``rootdir``)."""
    if option:
        return invocation_dir / option
    env = (os.environ if environ is None else environ).get(RESULTS_DIR_ENV, "")
    return rootdir / (env or ini or DEFAULT_RESULTS_DIR)


@dataclass(frozen=True)
class Project:
    """What pytest would find for a run started in a folder without path arguments.

    Attributes:
        rootdir: pytest's rootdir. inifile: the configuration file it read, if any.
        ini: that file's pytest settings (a name -> its value as written).
    """

    rootdir: Path
    inifile: Path | None = None
    ini: dict[str, Any] = field(default_factory=dict)

    def results_dir(self, option: str | None, invocation_dir: Path,
                    environ: Mapping[str, str] | None = None) -> Path:
        """``resolve_results_dir`` with this project's rootdir and ini value."""
        value = self.ini.get(RESULTS_DIR_INI, "")
        return resolve_results_dir(option, invocation_dir=invocation_dir, rootdir=self.rootdir,
                                   ini=str(value) if value else "", environ=environ)


def _ini_section(path: Path, *sections: str) -> dict[str, Any] | None:
    try:
        parsed = iniconfig.IniConfig(str(path))
    except (iniconfig.ParseError, OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}", key=str(path),
                          fix="fix the file (pytest cannot read it either)") from None
    for name in sections:
        if name in parsed:
            return dict(parsed[name].items())
    return None


def _toml(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}", key=str(path),
                          fix="fix the file (pytest cannot read it either)") from None


def _pyproject(path: Path) -> dict[str, Any] | None:
    tool = _toml(path).get("tool")
    table = tool.get("pytest") if isinstance(tool, dict) else None
    if not isinstance(table, dict):
        return None
    native = {k: v for k, v in table.items() if k != "ini_options"}
    ini = table.get("ini_options")
    return native or (dict(ini) if isinstance(ini, dict) else None)


def _pytest_toml(path: Path) -> dict[str, Any]:
    table = _toml(path).get("pytest")
    return dict(table) if isinstance(table, dict) else {}


#: pytest's configuration files, in its order within one folder, each with how it is read
#: (``None``: the file holds no pytest configuration and does not count).
_LOADERS: dict[str, Callable[[Path], dict[str, Any] | None]] = {
    "pytest.toml": _pytest_toml,
    ".pytest.toml": _pytest_toml,
    "pytest.ini": lambda p: _ini_section(p, "pytest") or {},
    ".pytest.ini": lambda p: _ini_section(p, "pytest") or {},
    "pyproject.toml": _pyproject,
    "tox.ini": lambda p: _ini_section(p, "pytest"),
    "setup.cfg": lambda p: _ini_section(p, "tool:pytest"),
}


def find_project(start: Path | None = None) -> Project:
    """pytest's rootdir and configuration for a run started in ``start`` (default: the current
    folder) without path arguments (see the module's docstring for the rule).

    Raises:
        ConfigError: a configuration file on the way cannot be parsed.
    """
    start = Path(start or Path.cwd()).absolute()
    folders = (start, *start.parents)
    any_pyproject: Path | None = None
    for folder in folders:
        for name, load in _LOADERS.items():
            path = folder / name
            if not path.is_file():
                continue
            if name == "pyproject.toml" and any_pyproject is None:
                any_pyproject = path
            settings = load(path)
            if settings is not None:
                return Project(folder, path, settings)
    if any_pyproject is not None:
        return Project(any_pyproject.parent, any_pyproject)
    for folder in folders:
        if (folder / "setup.py").is_file():
            return Project(folder)
    return Project(start)
