"""The pytest adapter, hooks and fixtures only: ``hooks`` is the ``pytest11`` entry point; every
decision is delegated to the plain modules of the other subpackages.

Importing this package turns pytest's assertion rewriting off for the whole package
(``unmark_for_rewrite``): pytest marks every package of an entry-point plugin's distribution
for rewriting (``Config._mark_plugins_for_rewrite``), so each module was read, parsed, rewritten
and compiled by pytest's import hook at every start instead of loaded from its ``.pyc``
wherever pytest cannot keep its own rewritten copies (``PYTHONDONTWRITEBYTECODE``, a read-only
site-packages): about 0.3 s of the start-up to the first workload fio (issue 19). No module
of the package has a test assertion to rewrite (its asserts are invariants); the suites
(``test_*.py``) and conftest files are rewritten by pytest's own rules all the same.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable

#: The package pytest marks for rewriting: ``pytest_ssdqual``.
_TOP = __name__.split(".")[0]


def unmark_for_rewrite(finders: Iterable[object]) -> bool:
    """Take ``pytest_ssdqual`` off the names pytest's ``AssertionRewritingHook`` rewrites, in
    each of ``finders`` that is one (``sys.meta_path``; ``PytestPluginManager.rewrite_hook``).
    Private pytest state, touched only when it has the shape pytest 7-9 give it: another pytest
    keeps rewriting, as before. Returns whether a hook was changed."""
    changed = False
    for finder in finders:
        marked = getattr(finder, "_must_rewrite", None)
        cache = getattr(finder, "_marked_for_rewrite_cache", None)
        if (type(finder).__name__ == "AssertionRewritingHook" and isinstance(marked, set)
                and isinstance(cache, dict) and _TOP in marked):
            marked.discard(_TOP)
            cache.clear()
            changed = True
    return changed


unmark_for_rewrite(sys.meta_path)  # before hooks.py imports the rest of the plugin
