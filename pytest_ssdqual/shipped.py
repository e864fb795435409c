"""Where the project's shipped files are: the qualification suites, the threshold files and the
emulated drive models, in a checkout and in an installed wheel alike.

In a checkout they are the top-level folders ``suites/``, ``thresholds/`` and ``emulated/``
beside the package; the wheel carries the same files inside the package (pyproject.toml's
``[tool.setuptools.package-dir]``): ``pytest_ssdqual/suites/`` (importable, so
``pytest --pyargs pytest_ssdqual.suites`` runs them), ``pytest_ssdqual/data/thresholds/`` and
``pytest_ssdqual/data/emulated/``. Plain paths only; nothing here reads a file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

__all__ = ["SUITES_MODULE", "names_shipped_suites", "shipped_folder"]

#: The package the wheel installs the suites as (``--pyargs pytest_ssdqual.suites``).
SUITES_MODULE = "pytest_ssdqual.suites"

_PACKAGE = Path(__file__).resolve().parent
_IN_WHEEL = {"suites": _PACKAGE / "suites", "thresholds": _PACKAGE / "data" / "thresholds",
             "emulated": _PACKAGE / "data" / "emulated"}

Shipped = Literal["suites", "thresholds", "emulated"]


def shipped_folder(name: Shipped) -> Path:
    """The folder of the shipped ``name`` (``"suites"``, ``"thresholds"`` or ``"emulated"``):
    inside the installed package when it is there (a wheel), else the checkout's top-level
    folder of that name beside the package (an editable install, or ``PYTHONPATH``). The path
    may not exist (a package copied without its data): callers check."""
    installed = _IN_WHEEL[name]
    return installed if installed.is_dir() else _PACKAGE.parent / name


def names_shipped_suites(args: list[str], *, pyargs: bool, invocation_dir: Path) -> bool:
    """True when a pytest run's ``args`` (test paths or, with ``--pyargs``, module names; a
    ``::test`` id suffix allowed) name the shipped suites: ``pytest_ssdqual.suites`` or a
    module in it, or a path inside ``shipped_folder("suites")`` (relative to
    ``invocation_dir``)."""
    suites = shipped_folder("suites").resolve()
    for arg in args:
        name = arg.split("::", 1)[0]
        if pyargs and (name == SUITES_MODULE or name.startswith(SUITES_MODULE + ".")):
            return True
        path = (invocation_dir / name).resolve()
        if path == suites or suites in path.parents:
            return True
    return False
