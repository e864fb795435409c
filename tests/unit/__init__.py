"""Unit tests: plain modules (fio jobs, result parsing, thresholds, verdicts, analyses,
store, reports) without pytest sessions or real drives."""
