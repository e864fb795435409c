"""The project's own slowest tests, started first: longest-first order for ``./test.sh``'s
workers, so that no long test starts last while the others have run out of work.

``./test.sh`` runs its two parallel tiers with ``-n 3`` (unit+plugin) and ``-n 4`` (e2e), each
``--maxschedchunk=1``: pytest-xdist then hands each worker one test at a time from the front of
the collection order (keeping two queued per worker), and ``tests/conftest.py`` puts the tests
listed in ``tests/slowest.txt`` at that front, slowest first (the longest-processing-time-first
rule: the tier then ends at most about one short test after its busiest worker). Every other
test keeps pytest's own order after them.

The seconds only order the tests: a stale figure costs wall time, never a result. Re-measure
(``./test.sh --durations=60``) when a listed test got much faster or a new one takes more than
a few seconds.
"""

from __future__ import annotations

from pathlib import Path

import pytest

#: ``<seconds> <node id>`` per line; ``#`` starts a comment line.
SLOWEST_FILE = Path(__file__).with_name("slowest.txt")


def measured_seconds(path: Path = SLOWEST_FILE) -> dict[str, float]:
    """node id -> measured seconds, from ``path`` (``<seconds> <node id>`` lines). Raises
    ``ValueError`` naming the line when one is not of that form."""
    out: dict[str, float] = {}
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        seconds, _, node_id = line.partition(" ")
        try:
            out[node_id.strip()] = float(seconds)
        except ValueError:
            raise ValueError(f"{path}:{number}: {line!r} is not '<seconds> <node id>'") from None
    return out


def slowest_first(items: list[pytest.Item], seconds: dict[str, float] | None = None) -> None:
    """Reorder ``items`` in place: those with measured ``seconds`` (default: ``slowest.txt``)
    first, longest first -- a node id matches exactly, else without its ``[parameters]`` --
    then every other test in its own order (the sort is stable)."""
    known = measured_seconds() if seconds is None else seconds

    def cost(item: pytest.Item) -> float:
        return known.get(item.nodeid, known.get(item.nodeid.split("[", 1)[0], 0.0))

    items.sort(key=lambda item: -cost(item))
