"""The options of the results store and the regression gate, checked at session start.

``build_gate_options(...)`` runs at configure time: a bad ``--baseline`` is a ``ConfigError``
(usage error before any I/O): unknown run id or folder, an incomplete run, ``firmware:NAME``
with no passing run, or a baseline taken with another run profile.

``--baseline=REF``: a run id (in ``--results-dir``), a run folder (any store, e.g. a CI
artifact), or ``firmware:NAME`` -- per drive, the latest passing run (pytest exit status 0 and
no test skipped or deselected) of firmware NAME on the same model, controller and NAND, with the
same run profile (resolved per drive by ``baseline.BaselineFinder``). An explicit run id or
folder that is not such a run is still used, with a warning line in the gate summary.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from pytest_ssdqual.errors import ConfigError
from pytest_ssdqual.results.run_folder import StoredRun, StoreError, utc_now
from pytest_ssdqual.results.store import ResultsStore

__all__ = ["FIRMWARE_PREFIX", "BaselineRef", "GateOptions", "build_gate_options",
           "resolve_baseline"]

FIRMWARE_PREFIX = "firmware:"


@dataclass(frozen=True)
class BaselineRef:
    """``--baseline`` resolved as far as possible at session start.

    Attributes:
        raw: as given. run_dir: the run folder (run id or folder form), else None.
        firmware: NAME of ``firmware:NAME`` (resolved per drive when the drive is known).
    """

    raw: str
    run_dir: Path | None = None
    firmware: str | None = None

    def describe(self) -> str:
        if self.firmware is not None:
            return f"latest passing run of firmware {self.firmware} on the same drive model"
        assert self.run_dir is not None
        return f"run {self.run_dir.name} ({self.run_dir})"


@dataclass(frozen=True)
class GateOptions:
    """Options of the results store and the regression gate, as plain values.

    Attributes:
        results_dir: the results folder (``--results-dir``).
        run_id: this session's run id (the controller's, shared with xdist workers).
        repeat: ``--repeat``: runs per workload (>= 1).
        repeat_max: ``--repeat-max``: runs per workload at most, when the comparison with the
            baseline may still change after ``repeat`` runs (>= ``repeat``).
        baseline: ``--baseline``, or None.
        profile: the run profile's name (a baseline must have used the same).
        started_utc: session start, UTC ISO 8601.
    """

    results_dir: Path
    run_id: str
    repeat: int = 1
    baseline: BaselineRef | None = None
    profile: str = ""
    started_utc: str = field(default_factory=utc_now)
    repeat_max: int = 1


def build_gate_options(
    *,
    results_dir: Path,
    run_id: str,
    repeat: int,
    baseline: str | None,
    profile: str,
    started_utc: str | None = None,
    repeat_max: int | None = None,
) -> GateOptions:
    """Check the store options and resolve ``--baseline`` as far as it can be without a drive.

    ``repeat_max`` None (no ``--repeat-max``) means ``2 * repeat``.

    Raises:
        ConfigError: ``results_dir`` is not a folder; ``repeat`` < 1; ``repeat_max`` <
            ``repeat``; ``baseline`` names no
            complete run, an incomplete one, a run of another profile, or a firmware without a
            passing run of this profile in ``results_dir``.
    """
    if results_dir.exists() and not results_dir.is_dir():
        raise ConfigError(f"{results_dir} is not a folder", key="--results-dir",
                          fix="give a folder for the results store (created when missing)")
    if repeat < 1:
        raise ConfigError(f"--repeat {repeat} must be at least 1", key="--repeat",
                          fix="give the number of runs per workload, e.g. --repeat 3")
    if repeat_max is None:
        repeat_max = 2 * repeat
    if repeat_max < repeat:
        raise ConfigError(f"--repeat-max {repeat_max} is less than --repeat {repeat}",
                          key="--repeat-max",
                          fix=f"give at least --repeat-max={repeat}, or leave it out (default "
                          f"{2 * repeat}: twice --repeat)")
    ref = None
    if baseline:
        ref = resolve_baseline(ResultsStore(results_dir), baseline, profile)
    return GateOptions(results_dir, run_id, repeat, ref, profile, started_utc or utc_now(),
                       repeat_max)


def resolve_baseline(store: ResultsStore, raw: str, profile: str) -> BaselineRef:
    """``--baseline`` -> ``BaselineRef`` (see ``build_gate_options`` for the errors)."""
    if raw.startswith(FIRMWARE_PREFIX):
        name = raw[len(FIRMWARE_PREFIX):].strip()
        if not name:
            raise ConfigError("firmware: needs a name", key="--baseline",
                              fix="write e.g. --baseline=firmware:SVN417w")
        try:
            rows = store.passing_firmware(name)
            known = sorted({r["firmware"] for r in store.query(
                "SELECT DISTINCT d.firmware FROM drives d JOIN runs r ON r.run_id = d.run_id "
                "WHERE r.passed = 1")})
        except StoreError as exc:
            raise ConfigError(str(exc), key="--baseline") from None
        if not rows:
            raise ConfigError(
                f"no passing run of firmware {name!r} in {store.root}{store.damaged_note()}",
                key="--baseline",
                fix=(f"passing firmware there: {', '.join(known)}" if known else
                     "store a passing run first (run the suite; --firmware labels a build)"),
            )
        profiles = sorted({str(r["profile"]) for r in rows})
        if profile not in profiles:
            raise ConfigError(
                f"firmware {name} has passing runs only with profile(s) {', '.join(profiles)}; "
                f"this run uses profile {profile}: figures of different profiles are not "
                "comparable, refusing this baseline",
                key="--baseline",
                fix=f"run with --ssd-profile={profiles[0]}, or store a {profile} run of {name}",
            )
        return BaselineRef(raw, firmware=name)
    try:
        run = StoredRun.load(store.resolve(raw))
    except StoreError as exc:
        raise ConfigError(str(exc), key="--baseline", fix=None if exc.fix else (
            "give a run id of --results-dir, a run folder, or firmware:NAME (for a firmware: "
            f"--baseline=firmware:{raw})")) from None
    if run.profile != profile:
        raise ConfigError(
            f"baseline run {run.run_id} used profile {run.profile or '?'}, this run uses "
            f"profile {profile}: figures of different profiles are not comparable, refusing "
            "this baseline",
            key="--baseline",
            fix=f"run with --ssd-profile={run.profile} or pick a {profile} baseline",
        )
    return BaselineRef(raw, run_dir=run.path)
