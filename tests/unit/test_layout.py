"""The package's layout rules, checked on its source with :mod:`ast`.

* one home per concern: every module lives in a subpackage named for its concern, and only a
  handful of shared leaves (``bounds``, ``errors``, ``shipped``, ``yamlutil``) sit at the top;
* no module over ``MAX_LINES`` lines;
* no import circle between modules, counting imports inside functions too (a lazy import that
  closes a circle is still a circle; ``if TYPE_CHECKING:`` blocks do not count);
* the domain is plain Python: only ``plugin/`` imports pytest, only ``plugin/`` and the Allure
  writer (``ALLURE_WRITERS``) import allure, and nothing outside ``plugin/`` and ``cli/``
  imports ``plugin/``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from ..conftest import REPO

PKG = REPO / "pytest_ssdqual"
#: "No module over ~400 lines": a module of this many lines is split.
MAX_LINES = 420
SUBPACKAGES = {"catalog", "cli", "drive", "emulate", "fio", "methodology", "plugin", "plugs",
               "qualify", "report", "results", "thresholds"}
TOP_LEVEL = {"__init__", "bounds", "errors", "shipped", "yamlutil"}
#: The Allure writer, one module per purpose: labels and history ids, steps and
#: attachments, results written outside allure-pytest's flow. Only these and plugin/ import allure.
ALLURE_WRITERS = {"pytest_ssdqual.report.allure_labels", "pytest_ssdqual.report.allure_attach",
                  "pytest_ssdqual.report.allure_results"}


def _name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_name(p): p for p in sorted(PKG.rglob("*.py"))}


def _imports(path: Path) -> set[str]:
    """Every ``pytest_ssdqual`` module (and every other top-level package) ``path`` imports,
    at module level or inside functions, outside ``if TYPE_CHECKING:`` blocks."""
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
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


GRAPH = {name: {m for m in _imports(path) if m in MODULES} for name, path in MODULES.items()}


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
    cycles = _cycles(GRAPH)
    assert cycles == []


@pytest.mark.parametrize("name", sorted(MODULES))
def test_the_domain_is_plain_python(name: str) -> None:
    sub = name.split(".")[1] if name.count(".") else ""
    imported = _imports(MODULES[name])
    if sub != "plugin":
        assert not {m for m in imported if m == "pytest" or m.startswith("_pytest")}, name
    if sub != "plugin" and name not in ALLURE_WRITERS:
        assert not {m for m in imported if m.split(".")[0] in ("allure", "allure_commons")}, name
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
