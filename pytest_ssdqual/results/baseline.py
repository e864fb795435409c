"""The baseline run a drive is compared with: ``--baseline`` resolved per drive.

``BaselineFinder.find`` picks, for one drive, the baseline run and the drive in it: the run
named by a run id or folder, or (``firmware:NAME``) the latest passing run of that firmware on
the same model, controller and NAND with the same run profile. A baseline taken on another
model, controller or NAND, or with another profile, raises ``BaselineError`` (the test is
broken with the reason). Runs are read once per process and cached.
"""

from __future__ import annotations

import math
import statistics
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_ssdqual.results.regression import BaselineError, repetition_samples
from pytest_ssdqual.results.run_folder import StoredRun, StoreError
from pytest_ssdqual.results.store import ResultsStore

if TYPE_CHECKING:
    from pytest_ssdqual.methodology.protocol import DriveUnderTest
    from pytest_ssdqual.results.gate_options import GateOptions

__all__ = ["BaselineFinder"]


class BaselineFinder:
    """The baseline of each drive of one pytest process (cached per drive).

    Args:
        store: this session's results store (where ``firmware:NAME`` is looked up).
        options: the gate's options (``baseline``, ``profile``).

    Attributes:
        warned: baseline run folder -> warning line for the gate summary (an explicit baseline
            that is not a passing run).
    """

    def __init__(self, store: ResultsStore, options: GateOptions) -> None:
        self.store = store
        self.options = options
        self._runs: dict[Path, StoredRun] = {}
        self._baselines: dict[str, tuple[StoredRun, dict[str, Any]]] = {}
        self.warned: dict[Path, str] = {}

    def _load(self, path: Path) -> StoredRun:
        if path not in self._runs:
            try:
                self._runs[path] = StoredRun.load(path)
            except StoreError as exc:
                raise BaselineError(f"baseline {path}: {exc}") from None
        return self._runs[path]

    def find(self, ctx: DriveUnderTest) -> tuple[StoredRun, dict[str, Any]] | None:
        """The baseline run and the drive in it this drive is compared with; None without
        ``--baseline``.

        Raises:
            BaselineError: the baseline has no drive of this model, controller and NAND, was
                taken with another profile, or (``firmware:NAME``) no such passing run exists.
        """
        ref = self.options.baseline
        if ref is None:
            return None
        key = ctx.target.spec.raw
        if key in self._baselines:
            return self._baselines[key]
        facts = ctx.facts
        here = _describe_drive(facts.model, facts.controller, facts.nand)
        if ref.firmware is not None:
            try:
                found = self.store.latest_passing_run(
                    firmware=ref.firmware, model=facts.model, controller=facts.controller,
                    nand=facts.nand, profile=self.options.profile,
                )
            except StoreError as exc:
                raise BaselineError(f"--baseline={ref.raw}: {exc}") from None
            if found is None:
                raise BaselineError(
                    f"--baseline={ref.raw}: no passing {self.options.profile} run of firmware "
                    f"{ref.firmware} on {here} in {self.store.where}: refusing to compare with "
                    "another model, controller or NAND"
                )
            run = self._runs.setdefault(found.path, found)
        elif ref.run is not None:
            run = ref.run
        else:
            assert ref.run_dir is not None
            run = self._load(ref.run_dir)
        path = run.path
        if ref.firmware is None and not run.passed and path not in self.warned:
            tests = run.info.get("tests") or {}
            self.warned[path] = (
                f"baseline run {run.run_id} is not a passing run (exit status "
                f"{run.info.get('exitstatus', '?')}, {tests.get('skipped', '?')} skipped, "
                f"{tests.get('deselected', '?')} deselected): used only because it was named "
                "explicitly; firmware:NAME would not pick it"
            )
        if run.profile != self.options.profile:
            raise BaselineError(
                f"baseline run {run.run_id} used profile {run.profile}, this run uses "
                f"{self.options.profile}: refusing to compare"
            )
        same = [
            d for d in run.drives
            if d.get("model") == facts.model
            and (d.get("controller") or "") == (facts.controller or "")
            and (d.get("nand") or "") == (facts.nand or "")
        ]
        if not same:
            there = "; ".join(
                f"{_describe_drive(d.get('model'), d.get('controller'), d.get('nand'))} "
                f"firmware {d.get('firmware')}"
                for d in run.drives
            ) or "no drive"
            raise BaselineError(
                f"baseline run {run.run_id} was taken on {there}; this drive is {here}: "
                "refusing to compare a different model, controller or NAND (pick a baseline of "
                "this model, e.g. --baseline=firmware:NAME)"
            )
        serial = ctx.identity.serial
        chosen = next((d for d in same if d.get("serial") == serial), same[0])
        self._baselines[key] = (run, chosen)
        return run, chosen


    def figures(self, ctx: DriveUnderTest, workload_id: str
                ) -> tuple[str, dict[str, float]] | None:
        """The baseline's figures of one workload, for its charts: (``run RUN, firmware FW``,
        metric -> figure: the geometric mean of the baseline's runs, as the gate compares, else
        its stored figure). None without ``--baseline``, a baseline it cannot use (the gate
        then says why) or a baseline without the workload."""
        try:
            found = self.find(ctx)
        except BaselineError:
            return None
        if found is None:
            return None
        run, drive = found
        base = run.records_of(str(drive["drive"])).get(workload_id) or {}
        figures = {str(k): float(v) for k, v in (base.get("metrics") or {}).items()
                   if isinstance(v, int | float) and math.isfinite(v)}
        samples = repetition_samples([r.get("metrics") or {}
                                      for r in base.get("repetitions") or []])
        for name, values in samples.items():
            if name in figures and len(values) > 1 and all(v > 0 and math.isfinite(v)
                                                           for v in values):
                figures[name] = statistics.geometric_mean(values)
        note = f"run {run.run_id}, firmware {drive.get('firmware') or '?'}"
        return (note, figures) if figures else None


def _describe_drive(model: object, controller: object, nand: object) -> str:
    return f"{model or '?'} / controller {controller or 'unknown'} / NAND {nand or 'unknown'}"
