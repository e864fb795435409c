"""Methodology tests and their analyses, in plain Python (no pytest).

* the tests: purge, preconditioning, SNIA steady state, sustained write past the SLC cache,
  consistency and recovery after idle, the sweeps (queue depth, mix, transfer size, client
  presets), the data states (drive with data, sequential after random) and the data tests (burst,
  compressibility, integrity) — one module each, each a ``run(MethodRun)``;
* ``registry.run_methodology`` picks the module by workload id;
* the analyses they use: ``steady_state`` (SNIA PTS steady-state window), ``slc_cache`` (the
  write cliff; its result and texts in ``slc_report``), ``recovery`` (time to recover after
  idle), ``figure_state`` (the drive state a figure was measured in);
* ``progress`` (phase, round and ETA events to an observer) and ``protocol`` (what they need
  of the session above them, ``qualify.session``, as ``typing.Protocol`` types).
"""
