"""A pytest plugin (``-p benchmarks.fio_clock``) that clocks every fio process of a run, so the
harness's own time is what is left: a test's wall time (setup + call + teardown, pytest's own
report durations) minus its fio processes' wall time and its planned idle time.

fio's wall time runs from just before ``subprocess.Popen`` (fork + exec included: a fio run
costs them however it is started) until the runner sees fio's exit (``fio.runner.wait_exit``
returns; for the ``fio --version`` call and the engine probe, until ``communicate`` returns).
Planned idle (``MethodologyTest.idle``: the drive left idle on purpose) is counted apart.

``SSDQUAL_BENCH_OUT`` names a folder: each process (the pytest main process and every xdist
worker) writes ``clock-<pid>.json`` there at its end::

    {"pid": int, "t_launch": float|null,       # epoch s the benchmark started pytest
     "t_first_fio": float|null,                 # epoch s of the first fio Popen
     "t_first_job": float|null,                 # epoch s of the first workload fio Popen
     "tests": {nodeid: {"wall_s": float, "fio_s": float, "idle_s": float,
                        "fio_runs": int, "outcome": str}},
     "outside_fio_s": float}                    # fio time outside any test

``SSDQUAL_BENCH_T0`` (epoch seconds, set by the benchmark just before it starts pytest) makes
``t_launch`` known. Only for benchmarks: it replaces ``subprocess.Popen`` in this process.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

_state: dict[str, Any] = {"current": None, "tests": {}, "outside_fio_s": 0.0,
                          "t_first_fio": None, "t_first_job": None}


def _is_fio(args: Any) -> bool:
    argv = [args] if isinstance(args, (str, bytes)) else list(args or [])
    if argv and os.path.basename(str(argv[0])) == "setpriv":  # fio started through setpriv
        argv = argv[argv.index("--") + 1:] if "--" in argv else argv[1:]
    return bool(argv) and "fio" in os.path.basename(str(argv[0]))


def _add(key: str, seconds: float) -> None:
    node = _state["current"]
    if node is None:
        if key == "fio_s":
            _state["outside_fio_s"] += seconds
        return
    entry = _state["tests"].setdefault(node, _blank())
    entry[key] += seconds
    if key == "fio_s":
        entry["fio_runs"] += 1


def _blank() -> dict[str, Any]:
    return {"wall_s": 0.0, "fio_s": 0.0, "idle_s": 0.0, "fio_runs": 0, "outcome": "passed"}


_Popen = subprocess.Popen


class _ClockedPopen(_Popen):  # type: ignore[type-arg,misc]
    def __init__(self, args: Any, *a: Any, **kw: Any) -> None:
        self._fio_t0 = time.perf_counter() if _is_fio(args) else None
        if self._fio_t0 is not None:
            now = time.time()
            _state["t_first_fio"] = _state["t_first_fio"] or now
            if not any(str(x) in ("--version",) or str(x).startswith("--name=probe")
                       for x in (args if not isinstance(args, (str, bytes)) else [])):
                _state["t_first_job"] = _state["t_first_job"] or now
        self._fio_done = False
        super().__init__(args, *a, **kw)

    def fio_finished(self) -> None:
        if self._fio_t0 is not None and not self._fio_done:
            self._fio_done = True
            _add("fio_s", time.perf_counter() - self._fio_t0)

    def communicate(self, *a: Any, **kw: Any) -> Any:
        out = super().communicate(*a, **kw)
        self.fio_finished()
        return out

    def wait(self, *a: Any, **kw: Any) -> Any:
        rc = super().wait(*a, **kw)
        self.fio_finished()
        return rc


def _install() -> None:
    subprocess.Popen = _ClockedPopen  # type: ignore[misc]
    from pytest_ssdqual.fio import runner
    from pytest_ssdqual.methodology import base

    real_wait = runner.wait_exit

    def wait_exit(proc: Any, timeout_s: float) -> None:
        real_wait(proc, timeout_s)
        if isinstance(proc, _ClockedPopen):
            proc.fio_finished()

    runner.wait_exit = wait_exit  # type: ignore[assignment]
    for name in dir(base):
        cls = getattr(base, name)
        if isinstance(cls, type) and "idle" in vars(cls):
            real_idle = cls.idle

            def idle(self: Any, seconds: float, *, phase: str, _real: Any = real_idle) -> None:
                t0 = time.perf_counter()
                try:
                    _real(self, seconds, phase=phase)
                finally:
                    _add("idle_s", time.perf_counter() - t0)

            cls.idle = idle


def pytest_configure(config: pytest.Config) -> None:
    _install()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: Any) -> Any:
    _state["current"] = item.nodeid
    _state["tests"].setdefault(item.nodeid, _blank())
    yield
    _state["current"] = None


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    entry = _state["tests"].get(report.nodeid)
    if entry is None:  # an xdist worker's report seen by the main process: counted there
        return
    entry["wall_s"] += float(report.duration or 0.0)
    if report.outcome != "passed" and entry["outcome"] == "passed":
        entry["outcome"] = report.outcome


def pytest_unconfigure(config: pytest.Config) -> None:
    out = os.environ.get("SSDQUAL_BENCH_OUT")
    if not out:
        return
    t0 = os.environ.get("SSDQUAL_BENCH_T0")
    doc = {"pid": os.getpid(), "t_launch": float(t0) if t0 else None,
           "t_first_fio": _state["t_first_fio"], "t_first_job": _state["t_first_job"],
           "tests": _state["tests"], "outside_fio_s": _state["outside_fio_s"]}
    path = Path(out) / f"clock-{os.getpid()}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=1))
