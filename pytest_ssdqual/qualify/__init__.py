"""The per-test flow in plain Python: one drive, one workload, run -> judge -> record once ->
store -> gate (``session``, ``flow``), with progress events (``methodology.progress``)."""
