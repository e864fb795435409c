"""The order a drive's tests run in: fresh figures first, the tests that leave a state last.

A drive remembers what earlier tests did to it -- a full SLC cache, random writes that
fragmented its mapping or used up its free blocks -- so a figure taken "as found" depends on
which tests ran before. Reviewers take the fresh figures first (ATTO and CrystalDiskMark on the
new drive, then the torture tests: the JMF667H firmware preview's HD Tach pass after random
writes, PCMark 8's consistency test). The plugin runs a session in that order, whatever the
file names, with the marker ``@pytest.mark.ssdqual_phase(NAME)``:

* ``first``: before everything (the session-start health reading);
* ``sequential``: fresh sequential figures (the span written and read in order only: the
  128 KiB workloads, the transfer-size sweep);
* ``random``: fresh random figures (4 KiB workloads, the QD curve, the client presets) --
  also every test without the marker;
* ``state``: tests that set up or leave a drive state (purge, preconditioning, steady state,
  fill levels, fragmentation, sustained writes past the cache, bursts, consistency);
* ``power_loss``: power cuts (``suites/test_power_loss.py``), after every figure was taken;
* ``@pytest.mark.ssdqual_last`` runs after all of them (the session-end health reading).

The sort is stable: within a phase the collection order stays. An unknown phase is a usage
error naming the test and the phases. With pytest-xdist each drive's tests run on one worker
in this order (``plugin.scheduling``).
"""

from __future__ import annotations

import pytest

__all__ = ["DEFAULT_PHASE", "PHASES", "OrderingHooks", "phase_of"]

#: Phases in run order.
PHASES = ("first", "sequential", "random", "state", "power_loss")

#: The phase of a test without ``ssdqual_phase``.
DEFAULT_PHASE = "random"


def phase_of(item: pytest.Item) -> str:
    """The phase of ``item`` (its ``ssdqual_phase`` marker, else ``DEFAULT_PHASE``).

    Raises:
        pytest.UsageError: the marker names no phase of ``PHASES``.
    """
    mark = item.get_closest_marker("ssdqual_phase")
    if mark is None:
        return DEFAULT_PHASE
    name = mark.args[0] if mark.args else mark.kwargs.get("name")
    if name not in PHASES:
        raise pytest.UsageError(
            f"{item.nodeid}: @pytest.mark.ssdqual_phase({name!r}) is not a phase; use one of "
            f"{', '.join(PHASES)} (or remove the marker: {DEFAULT_PHASE})")
    return str(name)


class OrderingHooks:
    """Registered by ``plugin.pytest_configure``: the two markers and the sort."""

    def pytest_configure(self, config: pytest.Config) -> None:
        config.addinivalue_line(
            "markers", "ssdqual_phase(name): run in phase first, sequential, random (default) "
            "or state -- fresh figures before the tests that leave a drive state")
        config.addinivalue_line(
            "markers", "ssdqual_last: run after every other test (session-end health reading)")

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        rank = {name: i for i, name in enumerate(PHASES)}
        last = len(PHASES)
        keyed = [(last if i.get_closest_marker("ssdqual_last") is not None
                  else rank[phase_of(i)], n, i) for n, i in enumerate(items)]
        items[:] = [i for _, _, i in sorted(keyed, key=lambda k: (k[0], k[1]))]
