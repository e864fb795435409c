"""Allure labels and history ids of a workload test (only report/'s Allure writers import
allure: tests/unit/test_layout.py).

Labels: parent suite = drive, feature = methodology family, story = workload, severity from the
family (integrity and health are critical); controller, NAND and firmware as tags. Parameters:
``drive identity`` (the drive's identity key, ``qualify.drive_keys``: the serial, else the path;
``@SPEED`` for an emulated drive at another speed; plus the drive as given when two drives of
the session share a serial) is part of the history id, so two drives running the same test are
two tests with a history each (never "retries" of one another); the drive
path, serial and firmware are parameters with ``excluded=True``, so a drive's history follows
it across firmware builds and /dev names. Measured numbers are never parameters. A label the
test sets with an ``@allure`` decorator is not set again (Allure would show it twice).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING

import allure

from pytest_ssdqual.results.stored import (
    ATTACH_DRIVE,
    LABEL_NOT_APPLICABLE,
    drive_identity,
    drive_name,
)

if TYPE_CHECKING:
    from pytest_ssdqual.catalog.workloads import Workload
    from pytest_ssdqual.qualify.session import DriveContext

__all__ = [
    "CRITICAL_FAMILIES",
    "DRIVE_IDENTITY_PARAM",
    "DYNAMIC_LABELS",
    "drive_identity",
    "drive_parameters",
    "label_not_applicable",
    "label_test",
    "parent_suite",
    "severity_for",
]


#: Methodology families whose failure is critical (data integrity, drive health); every
#: other family is ``normal``. A suite can still set ``@allure.severity`` itself.
CRITICAL_FAMILIES: frozenset[str] = frozenset({"integrity", "health"})

#: Labels this module sets dynamically (a decorator on the test wins: never both).
DYNAMIC_LABELS: tuple[str, ...] = ("parentSuite", "feature", "story", "severity", "tag")


def severity_for(family: str) -> str:
    """Allure severity of a methodology family: ``critical`` for integrity and health,
    ``normal`` otherwise."""
    return "critical" if family in CRITICAL_FAMILIES else "normal"


#: The parameter that carries the drive into Allure's history id.
DRIVE_IDENTITY_PARAM = "drive identity"


def drive_parameters(ctx: DriveContext) -> None:
    """Record the drive's parameters: ``drive identity`` (``results.stored.drive_identity``:
    the drive's identity key -- serial, ``@SPEED`` of an emulated drive, the drive as given when
    two drives of the session share a serial; *not* excluded, so each drive has its own history
    id) and the drive parametrization ``ssd_drive`` (the path, excluded: /dev names move between
    boots).

    Must run during the test's set-up (an autouse fixture): allure-pytest adds pytest's own
    parameters after set-up only when they are not there yet, and its history id
    (``md5(fullName, non-excluded parameter values)``) skips excluded parameters.
    """
    allure.dynamic.parameter(DRIVE_IDENTITY_PARAM, drive_identity(ctx.describe()))
    allure.dynamic.parameter("ssd_drive", ctx.target.spec.raw, excluded=True)


def parent_suite(facts: Mapping[str, str]) -> str:
    """The parent suite of a drive's tests (``results.stored.drive_name``), one per drive of
    a session, the same before and after a firmware update (the firmware is in each test's
    ``firmware:`` tag and title): ``Samsung 980 (S/N S64D...)``, ``... S/N EMU-X@0.8)``."""
    return drive_name(facts)


def label_test(
    ctx: DriveContext,
    workload: Workload,
    *,
    family: str | None = None,
    decorated: frozenset[str] = frozenset(),
    profile: str = "",
) -> None:
    """Title, suite hierarchy, severity, tags and excluded parameters for one workload test,
    and the drive's facts as the ``drive`` JSON attachment (read back by summaries).

    Args:
        family: methodology family (``@pytest.mark.ssdqual_family``); default the workload's.
        decorated: label names the test already sets with an ``@allure`` decorator (those are
            not set again: Allure would show them twice).
        profile: the run profile's name, stored with the drive's facts.

    Title example: ``4 KiB random read, QD32 — PS5012-E12 / BiCS3 / ECFM11.0``.
    """
    ident = ctx.identity
    controller = ctx.assignment.controller or "unknown controller"
    nand = ctx.assignment.nand or "unknown NAND"
    family = family or workload.family
    allure.dynamic.title(f"{workload.title} — {controller} / {nand} / {ident.firmware}")
    if "parentSuite" not in decorated:
        allure.dynamic.parent_suite(parent_suite(ctx.describe()))
    if "feature" not in decorated:
        allure.dynamic.feature(family)
    if "story" not in decorated:
        allure.dynamic.story(workload.id)
    if "severity" not in decorated:
        allure.dynamic.severity(allure.severity_level(severity_for(family)))
    allure.dynamic.tag(f"controller:{controller}", f"nand:{nand}", f"firmware:{ident.firmware}")
    allure.dynamic.parameter("drive serial", ident.serial, excluded=True)
    allure.dynamic.parameter("firmware", ident.firmware, excluded=True)
    facts = dict(ctx.describe(), profile=profile)
    allure.attach(json.dumps(facts, indent=2, sort_keys=True), name=ATTACH_DRIVE,
                  attachment_type=allure.attachment_type.JSON)


def label_not_applicable(reason: str) -> None:
    """Mark the running test as skipped because it cannot apply to its drive (no SMART, no
    power states): the ``ssdqual_not_applicable`` label with ``reason``, read back by the
    per-drive summary, where such a test does not make the drive INCOMPLETE."""
    allure.dynamic.label(LABEL_NOT_APPLICABLE, reason)
