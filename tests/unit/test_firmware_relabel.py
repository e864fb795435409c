"""``qualify.firmware_update.adopt_reported_firmware``: after a flashed build the session's
drive names the new firmware and its limits are resolved again for it. A scratch file cannot
change its firmware, so the drive's answer after the update -- its identity with another
revision -- is given by replacing ``reidentify`` (the flash itself is tested end to end on an
emulated drive: ``tests/e2e/test_firmware_e2e.py``)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_ssdqual.catalog.workloads import PROFILES
from pytest_ssdqual.drive.spec import parse_drive_option
from pytest_ssdqual.qualify import firmware_update
from pytest_ssdqual.qualify.session import QualSession, SessionOptions
from pytest_ssdqual.thresholds.loader import ThresholdSet

LIMITS = """\
version: 1
profiles:
  - name: any build
    match: {controller: host-file}
    source: "test: the floor of every build"
    limits:
      seq_read_128k_qd32: {read.bw_mbps: {min: 1}}
  - name: build NEW
    match: {controller: host-file, firmware: NEW}
    source: "test: the NEW build's own floor"
    limits:
      seq_read_128k_qd32: {read.bw_mbps: {min: 2}}
"""


@pytest.fixture
def session(tmp_path: Path) -> Iterator[QualSession]:
    limits = tmp_path / "limits.yaml"
    limits.write_text(LIMITS)
    options = SessionOptions(specs=(), confirmed_serials=(), profile=PROFILES["smoke"],
                             thresholds=ThresholdSet.load([limits]))
    (tmp_path / "scratch").mkdir()
    qs = QualSession.create(options, tmp_path / "scratch")
    yield qs
    qs.close()


def test_a_flashed_build_is_named_and_judged_for_the_rest_of_the_session(
        session: QualSession, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ctx = session.drive(parse_drive_option(f"file:{tmp_path / 'drive.img'}"))
    old = ctx.identity.firmware
    [limit] = [lim for lim in ctx.limits.for_workload("seq_read_128k_qd32")]
    assert (limit.provenance.profile, limit.min) == ("any build", 1)
    # the drive answers as it did: nothing changes, nothing is said
    assert firmware_update.adopt_reported_firmware(session, ctx) == ""
    assert ctx.identity.firmware == old
    ctx.probes.temperature = "probed on the old build"
    monkeypatch.setattr(firmware_update, "reidentify",
                        lambda target: dataclasses.replace(target.identity, firmware="NEW"))
    note = firmware_update.adopt_reported_firmware(session, ctx)
    assert note.endswith(f"now reports firmware NEW (was {old}): the tests after the update "
                         "name it and are judged by its limits (threshold profiles: build NEW; "
                         "any build)"), note
    assert ctx.identity.firmware == ctx.reported_firmware == ctx.facts.firmware == "NEW"
    assert ctx.describe()["firmware"] == "NEW"
    [limit] = [lim for lim in ctx.limits.for_workload("seq_read_128k_qd32")]
    assert (limit.provenance.profile, limit.min) == ("build NEW", 2)
    assert ctx.probes.temperature is None  # probed again on the new build
    assert session.drive(parse_drive_option(f"file:{tmp_path / 'drive.img'}")) is ctx


CONFLICT = """\
version: 1
profiles:
  - name: NEW by lab A
    match: {kind: file, firmware: NEW}
    source: "test: lab A's floor"
    limits:
      seq_read_128k_qd32: {read.bw_mbps: {min: 3}}
"""


def test_a_build_whose_profiles_disagree_changes_nothing_and_stops_the_drive(
        session: QualSession, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    other = tmp_path / "lab_a.yaml"
    other.write_text(CONFLICT)
    options = dataclasses.replace(session.options, thresholds=ThresholdSet.load(
        [tmp_path / "limits.yaml", other]))
    monkeypatch.setattr(session, "options", options)
    ctx = session.drive(parse_drive_option(f"file:{tmp_path / 'drive.img'}"))
    old, limits, facts, assignment = (ctx.identity.firmware, ctx.limits, ctx.facts,
                                      ctx.assignment)
    monkeypatch.setattr(firmware_update, "reidentify",
                        lambda target: dataclasses.replace(target.identity, firmware="NEW"))
    note = firmware_update.adopt_reported_firmware(session, ctx)  # no ConfigError raised
    assert ctx.identity.firmware == old and ctx.reported_firmware != "NEW"
    assert (ctx.limits, ctx.facts, ctx.assignment) == (limits, facts, assignment)
    reason = ctx.probes.stop_reason
    assert note.endswith(reason)
    assert reason.startswith(f"{ctx.target.spec.raw} now reports firmware NEW (was {old}), "
                             "and the threshold files (")
    assert "build NEW" in reason and "NEW by lab A" in reason and "lab_a.yaml" in reason
    assert reason.endswith("then run the drive's tests again")
    ctx.probes.forget()
    assert ctx.probes.stop_reason == reason  # a probe reset does not clear it
