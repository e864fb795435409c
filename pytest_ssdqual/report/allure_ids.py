"""The name, full name, test case id and history id allure-pytest gives a test, computed here
from the pytest node id and the test's parameters (only report/'s Allure writers import
allure or allure_commons: tests/unit/test_layout.py).

The controller writes results for tests whose process never wrote one (``allure_results``): a
crashed pytest-xdist worker, a run stopped while a worker ran. Those results must carry the
history id allure-pytest gives the same test, or Allure shows the crash outside the test's
history (and a later pass is not a "retry" of it). allure-pytest computes these ids in its
internals (``allure_pytest.utils``), which this package does not import; ``allure_ids`` follows
the same scheme, and ``tests/plugin/test_allure_ids.py`` checks it against real allure-pytest
runs (a parametrized test, tests in a class) for every allure-pytest version of the tested
range (``docs/development.md``).

Source read: allure-python, ``allure-pytest/src/utils.py`` (``ParsedPytestNodeId``,
``allure_full_name``, ``get_history_id``) and ``allure-pytest/src/listener.py``
(``pytest_runtest_setup``, ``pytest_runtest_teardown``, ``add_parameter``),
``allure-python-commons/src/allure_commons/utils.py`` (``md5``, ``represent``), at tags 2.13.2,
2.14.0, 2.15.0 and 2.16.0 and the repository's head (after 2.16.2). The scheme holds from 2.15.0
on; 2.13.2 to 2.14.x named only the innermost class of a nested one in the full name, and 2.13.1
and older hashed the node id as the history id.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pytest_ssdqual.results.journal import clean_node_id

__all__ = ["AllureParam", "AllureIds", "represent", "allure_ids"]


def represent(value: Any) -> str:
    """A parameter value as Allure shows it (``allure_commons.utils.represent``): a string in
    single quotes (``'loop0'``), bytes as their type, anything else ``repr``."""
    if isinstance(value, str):
        return f"'{value}'"
    if isinstance(value, (bytes, bytearray)):
        return repr(type(value))
    return repr(value)


def _md5(*parts: Any) -> str:
    """``allure_commons.utils.md5``: each part as UTF-8 (a non-string by its ``repr``), in
    order, into one MD5; hex digest."""
    digest = hashlib.md5(usedforsecurity=False)
    for part in parts:
        if not isinstance(part, bytes):
            part = (part if isinstance(part, str) else repr(part)).encode("utf-8")
        digest.update(part)
    return digest.hexdigest()


@dataclass(frozen=True)
class AllureParam:
    """One Allure parameter of a test: ``value`` as Allure shows it (``represent``);
    ``excluded`` parameters stay out of the history id."""

    name: str
    value: str
    excluded: bool = False


@dataclass(frozen=True)
class AllureIds:
    """What allure-pytest derives from a test's node id and parameters.

    Attributes:
        name: the result's default name (pytest's ``item.name``: ``test_x[a-1]``).
        full_name: ``package.module[.Class[.Inner]]#function`` (``suites.test_seq#test_read``).
        test_case_id: ``md5(full_name)``.
        history_id: ``md5(full_name, value of each non-excluded parameter, by name)``.
        parent_package: the folders of the test file, dot-joined (Allure's default parent
            suite label); ``module``: the file's name without ``.py`` (default suite label);
            ``class_names``: the classes (default sub-suite label, `` > ``-joined).
        parameters: the parameters in allure-pytest's order when the test sets its own during
            set-up (as the drive's are: ``allure.dynamic.parameter``): those, then pytest's.
    """

    name: str
    full_name: str
    test_case_id: str
    history_id: str
    parent_package: str
    module: str
    class_names: tuple[str, ...]
    parameters: tuple[AllureParam, ...] = field(default=())


def allure_ids(nodeid: str, pytest_params: Mapping[str, Any] | None = None,
             dynamic_params: Sequence[AllureParam] = ()) -> AllureIds:
    """The ids allure-pytest (2.15.0 to 2.16.x) gives the test ``nodeid``.

    allure-pytest's scheme, from the node id split at ``::``: the path's folders dot-joined
    plus the file name without its extension is the *package* (``suites/test_seq.py`` ->
    ``suites.test_seq``); the segments between path and function are the classes; the last
    segment up to ``[`` is the function. ``fullName = package[.Class...]#function``,
    ``testCaseId = md5(fullName)``. The ``historyId`` (computed at teardown) is
    ``md5(fullName, v1, v2, ...)`` over the *non-excluded* parameters sorted by name, where a
    pytest parameter contributes its *original value* (a string as is, anything else its
    ``repr``) and a parameter the test set itself its shown value (``represent``: a string in
    quotes). ``md5`` feeds each part's UTF-8 bytes in order into one hash.

    Args:
        nodeid: the pytest node id relative to the rootdir, e.g.
            ``suites/test_seq.py::TestRead::test_read[a-1]``; a pytest-xdist loadgroup
            ``@group`` suffix is dropped (``journal.clean_node_id``).
        pytest_params: the test's pytest parameters with their original values
            (``item.callspec.params``); None or empty for a test that is not parametrized.
        dynamic_params: parameters the test set with ``allure.dynamic.parameter`` (the drive
            identity, the excluded drive path ...), values as shown.

    Returns:
        The ``AllureIds``. For the history id to match, the same parameters allure-pytest saw
        must be given: with ``pytest_params`` unknown for a parametrized test the history id
        is that of its unparametrized form.
    """
    parts = clean_node_id(nodeid).split("::")
    path, *class_names, function_segment = parts if len(parts) > 1 else [*parts, ""]
    *folders, filename = path.split("/")
    module = filename.rsplit(".", 1)[0]
    parent_package = ".".join(folders)
    package = ".".join(filter(None, [parent_package, module]))
    class_part = "".join(f".{c}" for c in class_names)
    full_name = f"{package}{class_part}#{function_segment.split('[', 1)[0]}"
    originals = dict(pytest_params or {})
    params = list(dynamic_params)
    names = {p.name for p in params}
    params += [AllureParam(name, represent(value)) for name, value in originals.items()
               if name not in names]
    hashed = [originals[p.name] if p.name in originals else p.value
              for p in sorted((p for p in params if not p.excluded), key=lambda p: p.name)]
    return AllureIds(
        name=function_segment, full_name=full_name, test_case_id=_md5(full_name),
        history_id=_md5(full_name, *hashed), parent_package=parent_package, module=module,
        class_names=tuple(class_names), parameters=tuple(params))
