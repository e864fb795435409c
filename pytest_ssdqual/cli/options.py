"""What the ``ssdqual`` commands share: exit codes, the parser class, and one definition of each
option several commands take -- ``--results-dir`` (declared and resolved as the pytest plugin
does it: ``results.location``) and ``--ssd-profile`` (pytest's spelling; ``--profile`` is kept
as a deprecated alias).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

from pytest_ssdqual.errors import ConfigError
from pytest_ssdqual.results.db_location import RESULTS_DB_INI, resolve_results_db
from pytest_ssdqual.results.location import add_results_dir_option, find_project
from pytest_ssdqual.results.run_folder import StoredRun, StoreError
from pytest_ssdqual.results.shared_store import open_store
from pytest_ssdqual.results.store import ResultsStore

__all__ = ["EXIT_FAILED", "EXIT_OK", "EXIT_USAGE", "Parser", "add_profile_option",
           "add_results_dir", "load_run", "results_store"]

#: Exit codes, pytest's: 0 fine, 1 something failed (a run under new thresholds), 4 a usage
#: error (a bad option, file or run id).
EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 4


class Parser(argparse.ArgumentParser):
    """argparse with pytest's usage-error exit status (4, not argparse's 2), as the exit-code
    table of docs/regression-gate.md says; its subcommand parsers are of this class too."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


def add_results_dir(parser: argparse.ArgumentParser) -> None:
    """``--results-dir`` and ``--results-db``, as the pytest plugin declares them
    (``results_store`` resolves them)."""
    add_results_dir_option(parser.add_argument)


def results_store(args: argparse.Namespace) -> ResultsStore:
    """The store of ``--results-dir``: the folder given (relative to the current one), else
    the one ``pytest`` started here writes (``$SSDQUAL_RESULTS_DIR``, the ini value
    ``ssdqual_results_dir``, ``ssdqual-results`` -- in pytest's rootdir:
    ``results.location.find_project``); with ``--results-db`` (or ``$SSDQUAL_RESULTS_DB``, the
    ini value ``ssdqual_results_db``) the database holding every host's runs.

    Raises:
        ConfigError: the database is named but cannot be used (``shared_store.open_store``).
    """
    cwd = Path.cwd()
    option, db = args.results_dir, getattr(args, "results_db", None)
    if option and db:  # both given: no project file is read
        return open_store(cwd / option, resolve_results_db(db))
    project = find_project(cwd)
    folder = cwd / option if option else project.results_dir(None, cwd)
    ini = str(project.ini.get(RESULTS_DB_INI) or "")
    return open_store(folder, resolve_results_db(db, ini=ini))


def load_run(store: ResultsStore, ref: str) -> StoredRun:
    """A stored run for a command: a run id of ``store`` or a run folder.

    Raises:
        ConfigError: no such run, an incomplete one, or a damaged stored file (exit 4, a usage
            error; a damaged file is named with its key and fix: remove or restore the run).
    """
    try:
        return store.load(ref)
    except StoreError as exc:
        raise ConfigError(str(exc), key=ref, fix=None if exc.fix else
                          "give a run id of --results-dir or a run folder") from None


class _DeprecatedAlias(argparse.Action):
    """``--profile``: stores like ``--ssd-profile`` and says, once, on stderr, to use that."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: str | Sequence[Any] | None, option_string: str | None = None) -> None:
        print(f"{parser.prog}: {option_string} is deprecated: write --ssd-profile (as for "
              "pytest)", file=sys.stderr)
        setattr(namespace, self.dest, values)


def add_profile_option(parser: argparse.ArgumentParser, *, default: str | None, help: str,
                       choices: Sequence[str] | None = None) -> None:
    """``--ssd-profile NAME`` (``args.profile``), pytest's spelling; ``--profile`` still works,
    with a deprecation note on stderr."""
    parser.add_argument("--ssd-profile", dest="profile", default=default, choices=choices,
                        metavar="NAME", help=help)
    parser.add_argument("--profile", dest="profile", default=argparse.SUPPRESS, choices=choices,
                        action=_DeprecatedAlias, help=argparse.SUPPRESS)
