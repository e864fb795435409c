"""What the plugin's modules (``hooks``, ``fixtures``, ``host``, ``reporter``) share: stash keys for
per-process state, the ``user_properties`` names that carry results from (xdist) workers to the
controller's reporter, and the Allure label keywords read from a test's markers."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:  # the domain is imported when the plugin is used, not when pytest loads it
    from pytest_ssdqual.drive.spec import DriveSpec  # noqa: F401  (the stash keys' types)
    from pytest_ssdqual.qualify.session import QualSession, SessionOptions  # noqa: F401
    from pytest_ssdqual.results.gate import ResultsGate  # noqa: F401

OPTIONS_KEY = pytest.StashKey["SessionOptions"]()
SESSION_KEY = pytest.StashKey["QualSession"]()
GATE_KEY = pytest.StashKey["ResultsGate"]()
SCRATCH_KEY = pytest.StashKey["DriveSpec"]()
#: True when the plugin acts from the start (``options.in_play``); else it stays inert.
IN_PLAY_KEY = pytest.StashKey[bool]()
#: The results-store run id, chosen at configure time (the controller's, for xdist workers).
RUN_ID_KEY = pytest.StashKey[str]()

#: user_properties keys: verdict rows, drive facts, regression-gate rows, and what fio wrote
#: since the previous report (drive -> ``WriteTally.to_json()``, on the report of any phase).
PROP_ROWS = "ssdqual_rows"
PROP_DRIVE = "ssdqual_drive"
PROP_GATE = "ssdqual_gate"
PROP_WRITTEN = "ssdqual_written"
#: user_properties key of a test that can never apply to its target (no SMART, no power
#: states): the value is the reason; equal to ``results.stored.LABEL_NOT_APPLICABLE``, the
#: Allure label the results store reads (tests/unit/test_layout.py checks they agree).
PROP_NOT_APPLICABLE = "ssdqual_not_applicable"

#: xdist ``workerinput`` keys: the results-store run id and the default scratch file.
RUN_ID_INPUT = "ssdqual_run_id"
SCRATCH_INPUT = "ssdqual_scratch"


def allure_labels(node: pytest.Item, session: QualSession) -> dict[str, Any]:
    """``allure_labels.label_test`` keywords: the ``ssdqual_family`` marker, labels the test
    already sets with ``@allure`` decorators (never set twice), the run profile."""
    family = node.get_closest_marker("ssdqual_family")
    return {
        "family": str(family.args[0]) if family and family.args else None,
        "decorated": frozenset(
            str(m.kwargs.get("label_type")) for m in node.iter_markers("allure_label")
        ),
        "profile": session.options.profile.name,
    }
