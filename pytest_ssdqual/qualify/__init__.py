"""The per-test flow in plain Python: one drive, one workload, run -> judge -> store -> gate
(``session``), with progress events (``progress``)."""
