"""Every seed twin is judged by its own review on every suite it runs in ``smoke``.

For each seed twin (``emulated/<twin>.yaml``): the suites of ``suites/`` it runs, each suite's
workloads (the catalog ids its file names; ``idle_wake`` -> ``idle_wake_read_4k_qd1``), the
metrics those workloads produce in the ``smoke`` run profile (``Workload.metric_names`` less
``catalog.sweeps.not_in_profile``), and the limits ``thresholds/`` resolves for the twin's
identity. A suite is covered when at least one of those limits comes from the twin's own board
profile (not a family default, not generic.yaml) and its ``source`` names the review's article,
the suite's workload and how the figure became the limit (``->``, a tolerance or the word
``directional``). Drive health and data integrity are judged by implicit requirements (no
threshold); the idle wake-up suite skips on a twin without NVMe power states (SATA).

No fio: thresholds and catalog only. The suites each twin runs whole (real fio) are
``tests/e2e/test_twins_e2e.py``; the table of what each limit is derived from is in
docs/thresholds.md ("The seed twins' limits, suite by suite").
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pytest_ssdqual.catalog.firmware import FIRMWARE_WORKLOAD_ID
from pytest_ssdqual.catalog.health import (
    HEALTH_WORKLOAD_ID,
    IDLE_POWER_WORKLOAD_ID,
    IDLE_WAKE_WORKLOAD_ID,
)
from pytest_ssdqual.catalog.power_loss import POWER_LOSS_WORKLOAD_ID
from pytest_ssdqual.catalog.sweeps import not_in_profile
from pytest_ssdqual.catalog.workloads import CATALOG
from pytest_ssdqual.emulate.model_file import load_model
from pytest_ssdqual.thresholds.loader import ThresholdSet
from pytest_ssdqual.thresholds.profile import DriveFacts

REPO = Path(__file__).resolve().parents[2]
SEED_TWINS = ("jmf667h-l85c-128g", "jmf667h-l85a-256g", "jmf667h-a19-128g", "jmf667h-a19-240g",
              "jmf612-43nm-64g", "phison-e12-960g")
#: Judged by implicit requirements only (health_checks.py, integrity's verify; the power-loss
#: test's acknowledged data and unsafe-shutdown count; the firmware update's data set and its
#: gate against the same session's pre-update figures), by design.
IMPLICIT = frozenset({HEALTH_WORKLOAD_ID, "data_integrity", POWER_LOSS_WORKLOAD_ID,
                      FIRMWARE_WORKLOAD_ID})
#: The words each review's article is named by in a source.
ARTICLES = {
    "JMF667H": '"JMicron JMF667H Firmware Preview Testing with L85A, L85C and A19 Flash"',
    "JMF612": "CFD CSSD-SM64NJ2",
    "PS5012-E12": '"The Phison E12 NVMe SSD Controller Preview"',
}
#: Suites whose subject the twin's review has neither a figure nor a word for (docs/thresholds.md,
#: "The seed twins' limits, suite by suite"): twin -> {suite: why}. Judged by the family and
#: generic floors only; the test fails when one of them gets a review limit (update the table)
#: as when any other suite loses its.
NO_REVIEW_FIGURE: dict[str, dict[str, str]] = {
    "jmf612-43nm-64g": {
        "test_consistency": "the CFD CSSD-SM64NJ2 review has no dirty-state or idle test",
        "test_steady_state": "the CFD CSSD-SM64NJ2 review has no random-write figure",
    },
    "phison-e12-960g": {
        "test_consistency": "the E12 preview's 4 KiB random page (p. 5) is not in the seed data",
        "test_steady_state": "the E12 preview's 4 KiB random page (p. 5) is not in the seed data",
        "test_power": "the E12 preview's idle and load power figures are chart images, not in "
                      "the stored page text; p. 8's power-state table gives each state's maximum",
    },
}
#: Suites no seed twin's review has a figure for, added to every twin's ``NO_REVIEW_FIGURE``.
NO_REVIEW_FIGURE_ANY: dict[str, str] = {
    "test_pts_wsat_hir": "no seed review runs the SNIA PTS write saturation or host idle recovery "
                         "tests (their figures are the family and virtual floors only)",
    "test_pts_performance": "no seed review runs the SNIA PTS IOPS, throughput or latency tests "
                            "(a purge, 2x preconditioning and steady-state rounds before each "
                            "figure)",
}
for _twin in SEED_TWINS:
    NO_REVIEW_FIGURE.setdefault(_twin, {}).update(NO_REVIEW_FIGURE_ANY)
_DERIVATION = re.compile(r"->|-1[05] %|\+10 %|50 %|directional")


def suite_workloads() -> dict[str, frozenset[str]]:
    """suites/test_*.py -> the catalog workload ids it runs (read from the file's text)."""
    out: dict[str, frozenset[str]] = {}
    for path in sorted((REPO / "suites").glob("test_*.py")):
        text = path.read_text()
        ids = {s for s in re.findall(r'"([a-z0-9_]+)"', text) if s in CATALOG}
        for fixture, workload_id in (("idle_wake()", IDLE_WAKE_WORKLOAD_ID),
                                     ("idle_power()", IDLE_POWER_WORKLOAD_ID),
                                     ("power_loss()", POWER_LOSS_WORKLOAD_ID),
                                     ("firmware_update(", FIRMWARE_WORKLOAD_ID)):
            if fixture in text:
                ids.add(workload_id)
        if "drive_health." in text:
            ids.add(HEALTH_WORKLOAD_ID)
        out[path.stem] = frozenset(ids)
    return out


def twin_facts(twin: str) -> tuple[DriveFacts, bool]:
    """The twin's identity as threshold profiles see it, and whether it has power states."""
    model = load_model(REPO / "emulated" / f"{twin}.yaml")
    facts = DriveFacts(controller=model.controller, nand=model.nand, firmware=model.firmware,
                       model=model.model, serial=model.serial,
                       capacity_bytes=model.capacity_bytes,
                       transport="nvme" if model.nvme else "sata", kind="emu",
                       figures_scale=model.figures_scale.factor if model.figures_scale else None)
    return facts, model.nvme is not None


#: The mixed sweeps' points without I/O in one direction: fio gives no total there and nothing
#: for the idle direction (methodology/mixed.py), though the catalog lists every figure.
_NO_FIGURE_AT = re.compile(r"_w0\.(write|total)\.|_w100\.(read|total)\.")


def smoke_metrics(workload_id: str) -> frozenset[str]:
    """The metrics ``workload_id`` produces in the smoke run profile."""
    skipped = not_in_profile(workload_id, "smoke")
    return frozenset(m for m in CATALOG[workload_id].metric_names()
                     if m not in skipped and not _NO_FIGURE_AT.search(m))


@pytest.fixture(scope="module")
def seeds() -> ThresholdSet:
    return ThresholdSet.load([REPO / "thresholds"])


def review_coverage(seeds: ThresholdSet, facts: DriveFacts, has_power_states: bool
                    ) -> dict[str, list[str]]:
    """suite -> the review limits judged on it (``workload metric`` strings; empty: a gap)."""
    resolved = seeds.resolve(facts)
    article = ARTICLES[facts.controller or ""]
    out: dict[str, list[str]] = {}
    for suite, workloads in suite_workloads().items():
        judged = workloads - IMPLICIT
        if not has_power_states:
            judged -= {IDLE_WAKE_WORKLOAD_ID, IDLE_POWER_WORKLOAD_ID}
        if not judged:
            continue
        found = []
        for workload in sorted(judged):
            produced = smoke_metrics(workload)
            for limit in resolved.for_workload(workload):
                prov = limit.provenance
                if (limit.metric in produced and not prov.file.endswith("generic.yaml")
                        and "family default" not in prov.profile and article in prov.source
                        and workload in prov.source and _DERIVATION.search(prov.source)):
                    found.append(f"{workload} {limit.metric}")
        out[suite] = found
    return out


def test_the_suites_are_read_with_their_workloads() -> None:
    suites = suite_workloads()
    assert suites["test_random"] == {"rand_read_4k_qd1", "rand_read_4k_qd32",
                                     "rand_write_4k_qd1", "rand_write_4k_qd32",
                                     "rand_rw70_4k_qd32"}
    assert suites["test_consistency"] == {"recovery_after_idle"}
    assert suites["test_idle_power"] == {IDLE_WAKE_WORKLOAD_ID}
    assert all(suites.values()), {s: w for s, w in suites.items() if not w}
    # smoke runs the client presets at 16 and 100 MiB: a 1000 MiB figure is not produced
    assert "seq1m_q1t1_100mib.write.bw_mbps" in smoke_metrics("client_presets")
    assert "seq1m_q1t1_1000mib.write.bw_mbps" not in smoke_metrics("client_presets")
    # a 0 %-write point of a mixed sweep has read figures only (measured: no total from fio)
    assert "seq_128k_qd1_w0.read.iops" in smoke_metrics("mixed_sweep")
    assert "seq_128k_qd1_w0.total.bw_mbps" not in smoke_metrics("mixed_sweep")
    assert "rand_4k_qd4_w100.read.iops" not in smoke_metrics("mixed_sweep")


@pytest.mark.parametrize("twin", SEED_TWINS)
def test_every_suite_a_twin_runs_is_judged_by_its_review(seeds: ThresholdSet, twin: str) -> None:
    coverage = review_coverage(seeds, *twin_facts(twin))
    # 21 suites less health, integrity, power loss and firmware update (implicit); less the two
    # idle suites on the SATA twins
    expected = 17 if twin == "phison-e12-960g" else 15
    assert len(coverage) == expected, sorted(coverage)
    gaps = sorted(suite for suite, limits in coverage.items() if not limits)
    assert gaps == sorted(NO_REVIEW_FIGURE.get(twin, {})), (
        f"{twin}: no limit from its review on {gaps}")


def test_a_board_without_its_profile_has_a_gap_on_every_suite(seeds: ThresholdSet) -> None:
    # the check can fail: the L85C board on a firmware no profile lists gets the family floors
    facts, has_power_states = twin_facts("jmf667h-l85c-128g")
    other = DriveFacts(**{**facts.__dict__, "firmware": "SVN999z"})
    coverage = review_coverage(seeds, other, has_power_states)
    assert len(coverage) == 15 and not any(coverage.values()), coverage
