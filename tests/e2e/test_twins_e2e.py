"""Twins that behave like the drives, end to end with real fio on real emulated
drives (loop device + blkio cgroup + controller daemon + job-shape channel).

* Every seed twin runs every suite at ``--ssd-profile=smoke`` (in two halves, one pytest
  session on a fresh twin each) and passes every limit of its threshold profile: read from the
  stored ``record.json`` of each test (a failed verdict names twin, test, limit and measured
  value).
* Ablations: a twin with one behaviour removed (the model file rewritten in ``tmp_path``
  without it) fails the limit that exists to catch it, on the one suite that measures it --
  no SLC (L85C) -> the ATTO write peak; no recovery -> ``recovery_ratio``; no fragmentation
  drop (a 128 GB board) -> WARN on ``fragmented_seq_write_128k_qd32.write.bw_mbps_ratio``; no
  QD scaling -> ``rand_read_4k.scaling_ratio``.

Limits come from the repo's ``thresholds/`` (``$SSDQUAL_TWIN_THRESHOLDS`` overrides: a folder
or file, e.g. a copy of the contract limits before they land). Needs root, cgroup-v1 blkio and
fio; skips with the reason otherwise.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from ..conftest import REPO, need_emulation
from ..unit.test_twin_review_limits import (
    IMPLICIT,
    NO_REVIEW_FIGURE,
    NO_REVIEW_FIGURE_ANY,
    suite_workloads,
)

pytestmark = pytest.mark.e2e

SEED_TWINS = ("jmf612-43nm-64g", "jmf667h-l85c-128g", "jmf667h-l85a-256g", "jmf667h-a19-128g",
              "jmf667h-a19-240g", "phison-e12-960g")
#: Twins at x0.8 of their review (``figures_scale``: Anvil's 78,000 IOPS QD32 write sat at this
#: host's edge). Their whole-profile runs are marked ``e2e_twins_all``: ./test.sh (and CI) runs
#: them only with ``SSDQUAL_ALL_TWINS=1`` (or ``SSDQUAL_TWIN``); each is in an ablation below.
SCALED_TWINS = ("jmf667h-l85a-256g", "jmf667h-a19-128g", "jmf667h-a19-240g")
#: The twins at their review's own figures. One half of one twin's profile runs in ./test.sh
#: (and CI) per commit: a whole profile takes 4.5 min alone and CI is kept under 12 min. Which
#: (twin, half) is set by the checkout's commit (the same commit always runs the same one;
#: six consecutive commits run both halves of all three), or by ``SSDQUAL_TWIN=NAME[,NAME]``
#: (both halves of each); ``SSDQUAL_ALL_TWINS=1`` runs both halves of all six.
ROTATED_TWINS = ("jmf667h-l85c-128g", "jmf612-43nm-64g", "phison-e12-960g")
#: The two halves of a twin's profile, each a pytest session of its own on a fresh twin, split
#: by the seconds each suite took on the JMF612 twin (2026-12-05: 125 s and 145 s of 270 s).
#: "1" is this list; "2" every other suite a seed review can judge (a new suite lands there).
HALF_1_SUITES = frozenset({"test_sequential", "test_transfer_size", "test_client_presets",
                           "test_qd_scaling", "test_random", "test_burst", "test_sustained_write",
                           "test_health", "test_firmware_update", "test_power_loss"})
#: ``SSDQUAL_TWIN_WHOLE=1``: each twin's profile in ONE session instead (``"whole"``: the state
#: one suite leaves the drive in carried into the next, as a lab's run of ``suites/`` does), for
#: a nightly run with ``SSDQUAL_ALL_TWINS=1`` or ``SSDQUAL_TWIN``; the rotation then picks a
#: twin per commit (``int(HEAD, 16) % 3``).
HALVES = ("whole",) if os.environ.get("SSDQUAL_TWIN_WHOLE") == "1" else ("1", "2")


def twin_suites(half: str) -> list[str]:
    """``suites/test_*.py`` paths of one half (``"1"`` or ``"2"``) of a twin's profile, or of
    all of it (``"whole"``): every suite but those no seed review has a figure for
    (``NO_REVIEW_FIGURE_ANY``, the SNIA PTS tests: their own end-to-end tests run them), split
    by ``HALF_1_SUITES``."""
    stems = [p.stem for p in sorted((REPO / "suites").glob("test_*.py"))
             if p.stem not in NO_REVIEW_FIGURE_ANY]
    return [f"suites/{s}.py" for s in stems
            if half == "whole" or (s in HALF_1_SUITES) == (half == "1")]


def twins_of_this_run(env: dict[str, str] | None = None, commit: str | None = None
                      ) -> frozenset[tuple[str, str]]:
    """The (seed twin, half) runs not marked ``e2e_twins_all``: both halves of each name in
    ``$SSDQUAL_TWIN`` (comma-separated; an unknown name raises ``ValueError`` naming the known
    ones), else the ``int(commit, 16) % 6``-th (``% 3`` whole) of ``ROTATED_TWINS`` x ``HALVES``
    for the checkout's HEAD commit (the first one when the commit cannot be read)."""
    env = os.environ if env is None else env
    named = [t.strip() for t in env.get("SSDQUAL_TWIN", "").split(",") if t.strip()]
    if named:
        unknown = sorted(set(named) - set(SEED_TWINS))
        if unknown:
            raise ValueError(f"SSDQUAL_TWIN: unknown twin(s) {unknown}; known: {list(SEED_TWINS)}")
        return frozenset((t, h) for t in named for h in HALVES)
    if commit is None:
        head = subprocess.run(["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True,
                              text=True, check=False)
        commit = head.stdout.strip() if head.returncode == 0 else ""
    rotation = [(t, h) for t in ROTATED_TWINS for h in HALVES]
    try:
        return frozenset({rotation[int(commit, 16) % len(rotation)]})
    except ValueError:
        return frozenset({rotation[0]})

#: The suites each twin runs whose limits come from its review (every suite but health and
#: integrity, implicit requirements; the idle wake-up on the E12 only, the SATA twins skip it;
#: and the few the review has nothing on: ``NO_REVIEW_FIGURE``), as their workloads: each suite
#: must be judged by at least one limit of the twin's own profiles. The same table as
#: tests/unit/test_twin_review_limits.py, which checks it without fio.
REVIEW_SUITES = {
    twin: {suite: workloads - IMPLICIT for suite, workloads in suite_workloads().items()
           if suite not in NO_REVIEW_FIGURE.get(twin, {}) and workloads - IMPLICIT
           and (suite not in ("test_idle_power", "test_power") or twin == "phison-e12-960g")}
    for twin in SEED_TWINS
}
#: Profiles that are not a review's: the generic floors, family defaults, built-in requirements.
_NOT_A_REVIEW = ("generic", "family default", "implicit")

#: (twin, what is removed, edit of the model, suite, metric, expected status)
ABLATIONS = (
    ("jmf667h-l85c-128g", "no-slc", lambda m: m.pop("slc_cache") and _post_cache_everywhere(m),
     "suites/test_transfer_size.py", "seq_write_peak.write.bw_mbps", "fail"),
    ("jmf667h-l85a-256g", "no-recovery", lambda m: m.pop("recovery"),
     "suites/test_consistency.py", "recovery_ratio", "fail"),
    ("jmf667h-a19-128g", "no-fragmentation", lambda m: m.pop("fragmentation"),
     "suites/test_seq_after_random.py", "fragmented_seq_write_128k_qd32.write.bw_mbps_ratio",
     "warn"),
    ("jmf667h-a19-240g", "no-qd-scaling", lambda m: _flat_qd(m),
     "suites/test_qd_scaling.py", "rand_read_4k.scaling_ratio", "fail"),
)


def _post_cache_everywhere(model: dict[str, Any]) -> bool:
    """Without its SLC mode an L85C writes at the post-cache speed on every write."""
    model["caps"]["write_bw_mbps"] = 75
    model["transfer_caps"]["write"] = {k: min(v, 75) for k, v in
                                       model["transfer_caps"]["write"].items()}
    return True


def _flat_qd(model: dict[str, Any]) -> bool:
    """One QD-blind read IOPS figure: the QD1 figure at every queue depth."""
    read = model["qd_iops"]["read"]
    model["qd_iops"]["read"] = {1: read[min(read)]}
    return True



def _thresholds() -> str:
    return os.environ.get("SSDQUAL_TWIN_THRESHOLDS", str(REPO / "thresholds"))


def _session(tmp_path: Path, drives: list[str], suites: list[str], workers: int,
             timeout_s: float) -> Path:
    """Run pytest on ``suites`` for ``drives`` (smoke) in a subprocess; the run's folder."""
    results = tmp_path / "results"
    argv = [sys.executable, "-m", "pytest", *[f"--drive={d}" for d in drives],
            "--ssd-profile=smoke", f"--thresholds={_thresholds()}",
            f"--results-dir={results}", "-p", "no:cacheprovider", "-q",
            "-n", str(workers), *suites]
    proc = subprocess.run(argv, cwd=REPO, capture_output=True, text=True, timeout=timeout_s,
                          check=False)
    runs = sorted(p for p in results.iterdir() if p.is_dir()) if results.is_dir() else []
    assert runs, f"no run stored; pytest said:\n{proc.stdout[-3000:]}\n{proc.stderr[-2000:]}"
    return runs[-1]


def _records(run: Path) -> list[dict[str, Any]]:
    return [json.loads(p.read_text()) for p in sorted(run.glob("*/*/record.json"))]


def test_the_twin_half_of_a_run_is_set_by_its_commit_or_by_ssdqual_twin() -> None:
    """CI runs one half of one twin's profile per commit; six consecutive commits (by their
    value mod 6) cover both halves of the three twins; the choice is reproducible and can be
    forced (both halves of each named twin)."""
    n = len(ROTATED_TWINS) * len(HALVES)
    picks = [twins_of_this_run({}, f"{commit:x}") for commit in range(n + 1)]
    assert picks[:n] == [frozenset({(t, h)}) for t in ROTATED_TWINS for h in HALVES]
    assert picks[n] == picks[0]
    assert twins_of_this_run({}, "c0ffee") == twins_of_this_run({}, "c0ffee")
    assert twins_of_this_run({}, "not-a-commit") == frozenset({(ROTATED_TWINS[0], HALVES[0])})
    assert twins_of_this_run({"SSDQUAL_TWIN": "jmf667h-a19-128g, phison-e12-960g"}, "0") == {
        (t, h) for t in ("jmf667h-a19-128g", "phison-e12-960g") for h in HALVES}
    with pytest.raises(ValueError, match=r"unknown twin\(s\) \['e12'\]; known: "):
        twins_of_this_run({"SSDQUAL_TWIN": "e12"})


def test_the_two_halves_run_every_suite_a_review_can_judge_once() -> None:
    """Half 1 and half 2 together are every suite but the PTS ones, none in both, neither empty,
    and every name in ``HALF_1_SUITES`` is a suite (a renamed suite would silently move)."""
    one, two = twin_suites("1"), twin_suites("2")
    every = [f"suites/{p.name}" for p in sorted((REPO / "suites").glob("test_*.py"))
             if p.stem not in NO_REVIEW_FIGURE_ANY]
    assert one and two and not set(one) & set(two)
    assert sorted(one + two) == every == twin_suites("whole")
    assert {f"suites/{s}.py" for s in HALF_1_SUITES} == set(one)
    # every suite a twin's review must judge is in a half (a renamed one would go unchecked)
    run_by_halves = {Path(path).stem for path in one + two}
    for twin in SEED_TWINS:
        assert set(REVIEW_SUITES[twin]) <= run_by_halves, twin


#: e2e_solo: one twin at a time. Two at once failed here on the host's CPU, not the model (an
#: A19 board beside the L85C: QD1 read 7,213 < 9,350 IOPS, QD32 write 59,897 < 66,300).
@pytest.mark.e2e_solo
@pytest.mark.e2e_beside_unit  # beside the unit+plugin tier, which ./test.sh runs at nice 19
@pytest.mark.parametrize("twin,half", [
    (t, h) if (t, h) in twins_of_this_run() else
    pytest.param(t, h, marks=pytest.mark.e2e_twins_all)
    for t in SEED_TWINS for h in HALVES],
    ids=[f"{t}-{h if h == 'whole' else 'half' + h}" for t in SEED_TWINS for h in HALVES])
def test_a_seed_twin_passes_every_limit_on_every_smoke_suite_of_one_half(
        tmp_path: Path, twin: str, half: str) -> None:
    """One twin, one half (``twin_suites``) of every suite a seed review can judge (all but
    ``NO_REVIEW_FIGURE_ANY``), ``--ssd-profile=smoke``, in a pytest session of its own on a
    fresh twin (``-n 0``; ./test.sh runs these one at a time, in its e2e-twin tier): every limit
    of its threshold profile passes (a ``warn`` limit may warn), no test fails, and every suite
    it runs is judged by a limit of the twin's own profiles but those its review has nothing on
    (``REVIEW_SUITES``)."""
    need_emulation()
    suites = twin_suites(half)
    run = _session(tmp_path, [f"emu:{twin}"], suites, 0, 900)
    records = _records(run)
    assert records, f"{twin}: no test records in {run}"
    problems: list[str] = []
    by_review: set[str] = set()
    for rec in records:
        for v in rec["verdicts"]:
            if v["status"] in ("not_judged", "not_in_profile"):
                continue
            if not any(word in v["profile"] for word in _NOT_A_REVIEW):
                by_review.add(rec["workload"])
            if v["status"] not in ("pass", "marginal") and not (
                    v["severity"] == "warn" and v["status"] == "warn"):
                problems.append(f"{twin} {rec['workload']}: {v['limit']} measured "
                                f"{v['measured']} -> {v['status']} ({v['reason']})")
        if rec["status"] == "failed":
            problems.append(f"{twin} {rec['test']}: failed ({rec.get('reason', '')})")
    assert not problems, "\n".join(problems)
    ran = {Path(path).stem for path in suites}
    missing = sorted(suite for suite, workloads in REVIEW_SUITES[twin].items()
                     if suite in ran and not workloads & by_review)
    assert not missing, f"{twin}: no limit of its review judged on {missing}"


@pytest.mark.parametrize("twin,removed,edit,suite,metric,expected", ABLATIONS,
                         ids=[f"{a[0]}-{a[1]}" for a in ABLATIONS])
def test_a_twin_without_one_behaviour_fails_the_limit_that_catches_it(
        tmp_path: Path, twin: str, removed: str, edit: Any, suite: str, metric: str,
        expected: str) -> None:
    need_emulation()
    model = yaml.safe_load((REPO / "emulated" / f"{twin}.yaml").read_text())
    edit(model)
    path = tmp_path / f"{twin}-{removed}.yaml"
    path.write_text(yaml.safe_dump(model, sort_keys=False))
    run = _session(tmp_path, [f"emu:{path}"], [suite], 1, 600)
    verdicts = [v for r in _records(run) for v in r["verdicts"] if v["metric"] == metric]
    assert verdicts, f"{twin} {removed}: no limit on {metric} judged (thresholds: {_thresholds()})"
    statuses = {v["status"] for v in verdicts}
    shown = [(v["limit"], v["measured"], v["status"]) for v in verdicts]
    assert expected in statuses, f"{twin} {removed}: expected {expected}, got {shown}"
