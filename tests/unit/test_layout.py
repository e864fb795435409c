"""The package's layout rules, checked on its source with :mod:`ast`.

* one home per concern: every module lives in a subpackage named for its concern, and only a
  handful of shared leaves (``bounds``, ``errors``, ``shipped``, ``yamlutil``) sit at the top;
* no module over ``MAX_LINES`` lines;
* no import circle between modules, counting imports inside functions too (a lazy import that
  closes a circle is still a circle; ``if TYPE_CHECKING:`` blocks do not count);
* folders import one way (``FLOORS``, lowest first): a module imports its own folder and lower
  floors only, counting imports inside functions and under ``if TYPE_CHECKING:`` (a type is a
  dependency too). Where a lower floor needs something of a higher one it declares a
  ``typing.Protocol`` the higher one satisfies (``methodology.protocol``, ``results.protocol``);
* the domain is plain Python: only ``plugin/`` imports pytest, only the Allure writer
  (``report/allure_*``, ``is_allure_writer``) imports allure or allure_commons, nothing imports
  allure-pytest's internals (``allure_pytest``), and nothing outside ``plugin/`` and ``cli/``
  imports ``plugin/``.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

from ..conftest import REPO

PKG = REPO / "pytest_ssdqual"
#: "No module over ~400 lines": a module of this many lines is split.
MAX_LINES = 420
SUBPACKAGES = {"catalog", "cli", "drive", "emulate", "fio", "methodology", "plugin", "plugs",
               "qualify", "report", "results", "thresholds"}
TOP_LEVEL = {"__init__", "bounds", "errors", "shipped", "yamlutil"}
#: The Allure writer, one module per purpose (labels, steps and attachments, ids, results
#: written outside allure-pytest's flow): ``report/allure_*``. Only these import allure or
#: allure_commons, and only their public API (never ``allure_pytest``).
ALLURE_WRITER_PREFIX = "pytest_ssdqual.report.allure_"


def is_allure_writer(name: str) -> bool:
    return name.startswith(ALLURE_WRITER_PREFIX)


def _name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_name(p): p for p in sorted(PKG.rglob("*.py"))}

#: The folder order, lowest floor first. A module imports its own folder and lower floors only.
#: The shared leaves (the package's ``__init__`` and the top-level modules) share the bottom
#: floor and may import each other; ``plugin/`` (pytest's entry point) and ``cli/`` (the
#: ``ssdqual`` command) share the top floor, side by side: neither imports the other.
FLOORS: tuple[tuple[str, ...], ...] = (
    ("__init__", "bounds", "errors", "shipped", "yamlutil"),
    ("catalog",), ("fio",), ("thresholds",), ("drive",), ("emulate",), ("plugs",),
    ("methodology",), ("results",), ("qualify",), ("report",),
    ("plugin", "cli"),
)


def _imports(path: Path, *, type_checking: bool = False) -> set[str]:
    """Every ``pytest_ssdqual`` module (and every other top-level package) ``path`` imports,
    at module level or inside functions; inside ``if TYPE_CHECKING:`` blocks too with
    ``type_checking``."""
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if (not type_checking and isinstance(child, ast.If)
                    and "TYPE_CHECKING" in ast.unparse(child.test)):
                continue
            if isinstance(child, ast.ImportFrom) and child.module and child.level == 0:
                for alias in child.names:
                    full = f"{child.module}.{alias.name}"
                    found.add(full if full in MODULES else child.module)
            elif isinstance(child, ast.Import):
                found.update(alias.name for alias in child.names)
            visit(child)

    visit(ast.parse(path.read_text(encoding="utf-8")))
    return found


@functools.cache
def _graph(*, type_checking: bool = False) -> dict[str, set[str]]:
    """Module -> the package's modules it imports (``_imports``), parsed when a test first asks:
    not at collection, which every xdist worker repeats (2.8 s of its 4.7 s, measured)."""
    return {name: {m for m in _imports(path, type_checking=type_checking) if m in MODULES}
            for name, path in MODULES.items()}


def _folder(module: str) -> str:
    """``pytest_ssdqual.qualify.flow`` -> ``qualify``; a top-level module -> its name; the
    package itself -> ``__init__``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _upward(graph: dict[str, set[str]], floors: tuple[tuple[str, ...], ...]) -> list[str]:
    """One message per import that goes up the folder order or sideways to another folder of
    the same floor (the bottom floor's leaves excepted): the importing module, the imported
    one and both floors. A folder on no floor is reported too."""
    floor = {folder: i for i, names in enumerate(floors) for folder in names}

    def where(module: str) -> str:
        f = _folder(module)
        return f"{f}/ (floor {floor[f]}: {' '.join(floors[floor[f]])})"

    found: list[str] = []
    for src in sorted(graph):
        for dst in sorted(graph[src]):
            a, b = _folder(src), _folder(dst)
            if a not in floor or b not in floor:
                found.append(f"{src} -> {dst}: folder {a if a not in floor else b}/ is on no "
                             "floor: add it to FLOORS")
            elif floor[b] > floor[a] or (floor[b] == floor[a] and a != b and floor[a] > 0):
                found.append(f"{src} in {where(src)} imports {dst} in {where(dst)}: a module "
                             "imports its own folder and lower floors only (move what sits on "
                             "the wrong floor, or declare a typing.Protocol in the lower one)")
    return found


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def strong(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph[v]):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            strong(v)
    return found


def test_the_cycle_finder_finds_a_circle_through_three_modules() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(graph) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_the_floor_check_names_an_upward_and_a_sideways_import() -> None:
    graph = {
        "pytest_ssdqual.methodology.base": {"pytest_ssdqual.qualify.session",
                                            "pytest_ssdqual.fio.runner"},
        "pytest_ssdqual.qualify.session": {"pytest_ssdqual.methodology.protocol"},
        "pytest_ssdqual.yamlutil": {"pytest_ssdqual.errors"},
        "pytest_ssdqual.cli.main": {"pytest_ssdqual.plugin.options"},
        "pytest_ssdqual.plugin.hooks": {"pytest_ssdqual.report.summary"},
        "pytest_ssdqual.newfolder.x": {"pytest_ssdqual.errors"},
    }
    assert _upward(graph, FLOORS) == [
        "pytest_ssdqual.cli.main in cli/ (floor 11: plugin cli) imports "
        "pytest_ssdqual.plugin.options in plugin/ (floor 11: plugin cli): a module imports its "
        "own folder and lower floors only (move what sits on the wrong floor, or declare a "
        "typing.Protocol in the lower one)",
        "pytest_ssdqual.methodology.base in methodology/ (floor 7: methodology) imports "
        "pytest_ssdqual.qualify.session in qualify/ (floor 9: qualify): a module imports its "
        "own folder and lower floors only (move what sits on the wrong floor, or declare a "
        "typing.Protocol in the lower one)",
        "pytest_ssdqual.newfolder.x -> pytest_ssdqual.errors: folder newfolder/ is on no floor: "
        "add it to FLOORS",
    ]


def test_the_floor_check_counts_type_checking_imports(tmp_path: Path) -> None:
    source = tmp_path / "m.py"
    source.write_text("from typing import TYPE_CHECKING\n"
                      "if TYPE_CHECKING:\n    from pytest_ssdqual.qualify.session import X\n"
                      "def f():\n    from pytest_ssdqual.report.summary import Y\n")
    assert _imports(source) == {"typing", "pytest_ssdqual.report.summary"}
    assert _imports(source, type_checking=True) == {
        "typing", "pytest_ssdqual.qualify.session", "pytest_ssdqual.report.summary"}


def test_folders_import_one_way() -> None:
    assert _upward(_graph(type_checking=True), FLOORS) == []


def test_every_folder_is_on_one_floor() -> None:
    placed = [folder for names in FLOORS for folder in names]
    assert len(placed) == len(set(placed))
    assert set(placed) == SUBPACKAGES | TOP_LEVEL


def test_every_module_has_a_home_by_concern() -> None:
    homeless = [name for name in MODULES
                if name.count(".") == 1 and name.split(".")[1] not in SUBPACKAGES | TOP_LEVEL]
    assert homeless == []
    assert {name.split(".")[1] for name in MODULES if name.count(".") >= 2} <= SUBPACKAGES


def test_no_module_is_over_the_size_limit() -> None:
    sizes = {name: len(path.read_text(encoding="utf-8").splitlines())
             for name, path in MODULES.items()}
    over = {name: n for name, n in sizes.items() if n > MAX_LINES}
    assert over == {}


def test_no_import_circle() -> None:
    cycles = _cycles(_graph())
    assert cycles == []


@pytest.mark.parametrize("name", sorted(MODULES))
def test_the_domain_is_plain_python(name: str) -> None:
    sub = name.split(".")[1] if name.count(".") else ""
    imported = _imports(MODULES[name])
    if sub != "plugin":
        assert not {m for m in imported if m == "pytest" or m.startswith("_pytest")}, name
    if not is_allure_writer(name):
        assert not {m for m in imported if m.split(".")[0] in ("allure", "allure_commons")}, name
    assert not {m for m in imported if m.split(".")[0] == "allure_pytest"}, name
    if sub not in ("plugin", "cli"):
        assert not {m for m in imported if m.startswith("pytest_ssdqual.plugin")}, name


def test_constants_kept_apart_for_a_light_plugin_load_agree_with_their_origin() -> None:
    # plugin/common.py and catalog/sizes.py hold constants the plugin needs when pytest loads
    # it, so that loading it imports none of the domain (tests/plugin/test_inert.py)
    from pytest_ssdqual.catalog import sizes, workloads
    from pytest_ssdqual.plugin.common import PROP_NOT_APPLICABLE
    from pytest_ssdqual.results import run_folder, run_id
    from pytest_ssdqual.results.stored import LABEL_NOT_APPLICABLE

    assert PROP_NOT_APPLICABLE == LABEL_NOT_APPLICABLE
    assert workloads.SCRATCH_FILE_BYTES == sizes.SCRATCH_FILE_BYTES == 128 * 1024 * 1024
    assert run_folder.new_run_id is run_id.new_run_id
